/**
 * `ratchet ui`: the run page, a local read-only web page over the project's store. The server and
 * its pages (`ui/Server.ts` and what it imports, with `@effect/platform`'s HTTP server) are loaded
 * with a dynamic `import()` by this command alone, so every other command, and the hook path
 * above all, never parses them.
 *
 * @since 0.3.0
 */
import * as Controller from "@ratchet/controller/Controller"
import * as ControllerError from "@ratchet/controller/ControllerError"
import * as Effect from "effect/Effect"
import type { CommandSpec, Outcome } from "./Command.js"
import * as Store from "./Store.js"

/**
 * The trace viewer's address template: `--trace-url`, else a non-empty `RATCHET_TRACE_URL`, else
 * none. It must be an http(s) URL with `{traceId}` in it, since the page puts each trace id there.
 *
 * @since 0.4.0
 * @category parsing
 */
export const traceUrlOf = (option: unknown, variable: string | undefined): Effect.Effect<string | null, ControllerError.InvalidRequest> => {
  const given = typeof option === "string" ? { field: "--trace-url", value: option } : variable !== undefined && variable !== "" ? { field: "RATCHET_TRACE_URL", value: variable } : null
  if (given === null) return Effect.succeed(null)
  const shown = JSON.stringify(given.value.slice(0, 120))
  const fix = `Give the viewer's address of one trace with {traceId} where the id goes, e.g. ${given.field === "--trace-url" ? "--trace-url " : "RATCHET_TRACE_URL="}'http://localhost:16686/trace/{traceId}'.`
  if (given.value.length > 2048) return Effect.fail(new ControllerError.InvalidRequest({ field: given.field, reason: `the address has ${given.value.length} characters (at most 2048).`, fix }))
  const refuse = (reason: string) => Effect.fail(new ControllerError.InvalidRequest({ field: given.field, reason, fix }))
  if (!given.value.includes("{traceId}")) return refuse(`${shown} has no {traceId} for the page to put a trace's id in.`)
  // The URL parser drops leading and trailing blanks and tabs or newlines inside, so the link would
  // not be the address given: such characters are refused, to be percent-encoded (%20).
  const blank = [...given.value].findIndex((character) => character <= " " || character === "\u007f")
  if (blank >= 0) return refuse(`${shown} has a space or control character at position ${blank + 1}; percent-encode it (%20 for a space).`)
  let url: URL
  let other: URL
  try {
    url = new URL(given.value.replaceAll("{traceId}", "0"))
    other = new URL(given.value.replaceAll("{traceId}", "1"))
  } catch {
    return refuse(`${shown} is not a URL.`)
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return refuse(`${shown} is a ${url.protocol} address; the page links only to http and https.`)
  // Every page shows the link: a password in it would be shown to whoever reads the page.
  if (url.username !== "" || url.password !== "") return refuse(`${shown} carries a user name or password before the host; the page would show it to anyone who reads it. Leave it out and sign in at the viewer.`)
  // A trace id chooses the path, never the server the browser is sent to.
  if (url.origin !== other.origin) return refuse(`${shown} puts {traceId} in the host or port; it belongs in the path, the query or the fragment.`)
  return Effect.succeed(given.value)
}

/**
 * `ratchet ui`.
 *
 * @since 0.3.0
 * @category commands
 */
export const ui: CommandSpec = {
  name: "ui",
  usage: "ratchet ui [--port <n>] [--host <addr> [--token <token>]] [--trace-url <url>] [--home <dir>]",
  summary: "Look at the project's tasks, runs and evidence in a browser (a local, read-only page)",
  description: [
    "Serves a web page over this project's store and prints its URL; open it in a browser. The task list shows every task's state, stage and next step; a task shows its gate (the reasons and the required actions), its blockers, its revisions and digests, and its history a page of 200 events at a time (approvals with who approved which digest, invalidations, state changes); its run is a timeline (a lane per step, a bar per attempt coloured by how it ended, intents as marks, Indeterminate attempts and BLOCKED marked, successor attempts linked), and each attempt opens on its own page (the command, its exit, output tail, changed paths, intents, notes, turn events); its verification lists each criterion's verdict and evidence. The page follows the store: it reloads when the store moves, so an open run page shows attempts as they happen.",
    "It never writes: an action is shown as the ratchet command to copy and run in a terminal. It listens on 127.0.0.1 and a free port unless --port names one, and answers only to that address. --host 0.0.0.0 (or any address beyond this machine) needs a token, which the page asks for: --token <token> gives it (at least 16 characters), otherwise one is made and printed in the URL. A run whose runners exported traces (OTEL_EXPORTER_OTLP_ENDPOINT, see docs/guides/traces.md) lists their trace ids; --trace-url (or RATCHET_TRACE_URL) with {traceId} in it makes them links into your trace viewer. With --json it prints {url} (and the token) as one line, then serves until stopped (Ctrl-C). See docs/guides/ui.md."
  ].join(" "),
  positionals: [],
  options: {
    port: { type: "string", valueName: "<n>", integer: { min: 0, max: 65535 }, description: "Listen on this port (0, the default, picks a free one)." },
    host: { type: "string", valueName: "<addr>", description: "Listen on this address (default 127.0.0.1); beyond loopback a token is required." },
    token: { type: "string", valueName: "<token>", description: "The token the page asks for (at least 16 characters); made up when --host is not loopback and none is given." },
    "trace-url": {
      type: "string",
      valueName: "<url>",
      description: "A trace viewer's address with {traceId} in it (e.g. http://localhost:16686/trace/{traceId}); the run page links each trace there. Default: RATCHET_TRACE_URL."
    },
    home: { type: "string", valueName: "<dir>", description: "Read the store in <dir> (as RATCHET_HOME would), over RATCHET_HOME and this checkout's record." }
  },
  examples: ["ratchet ui", "ratchet ui --port 4700", "ratchet ui --host 0.0.0.0 --port 4700", "ratchet ui --trace-url 'http://localhost:16686/trace/{traceId}'", "ratchet ui --json"],
  needs: "project",
  run: (parsed, env) =>
    Effect.gen(function*() {
      const host = typeof parsed.options["host"] === "string" ? parsed.options["host"] : "127.0.0.1"
      const port = typeof parsed.options["port"] === "number" ? parsed.options["port"] : 0
      const given = typeof parsed.options["token"] === "string" ? parsed.options["token"] : null
      if (given !== null && given.length < 16) {
        return yield* new ControllerError.InvalidRequest({
          field: "--token",
          reason: `the token has ${given.length} characters; a token that short can be guessed.`,
          fix: "Give a token of at least 16 characters, or leave --token out to have one made."
        })
      }
      if (host === "" || /[\s/?#@]/.test(host)) {
        return yield* new ControllerError.InvalidRequest({ field: "--host", reason: `${JSON.stringify(host.slice(0, 80))} is not an address.`, fix: "Give an IP address or a host name, e.g. --host 127.0.0.1." })
      }
      const traceUrl = yield* traceUrlOf(parsed.options["trace-url"], process.env["RATCHET_TRACE_URL"])
      // Loaded on demand: the HTTP server and the pages are bundled apart (see the module comment).
      const server = yield* Effect.promise(() => import("./ui/Server.js"))
      const c = yield* Controller.Controller
      const token = given ?? (server.isLoopback(host) ? null : server.newToken())
      const choice = Store.current()
      const store = choice === null ? Store.engine() : Store.describe(choice)
      yield* server.serve({ host, port, token, traceUrl }, (url) =>
        Effect.sync(() => {
          const opened = token === null ? url : `${url}?token=${encodeURIComponent(token)}`
          if (env.json) env.write(`${JSON.stringify({ ok: true, command: "ui", url, ...(token === null ? {} : { token, open: opened }) })}\n`)
          else {
            env.write(
              `ratchet ui: serving ${store} read-only at ${opened}\n${token === null ? "" : "The page asks for the token in that URL; keep it to yourself.\n"}Stop it with Ctrl-C.\n`
            )
          }
        })).pipe(Effect.provide(Store.verification(c.project)))
      return { exit: 0, json: null, text: null } satisfies Outcome
    })
}
