#!/usr/bin/env node
/**
 * Scaffolds a new host adapter package, wired to the host test kit:
 *
 *   node tools/new-host-adapter.mjs <name> [--title "<Host name>"] [--root <repository>]
 *
 * `<name>` is the host as users type it (`ratchet hook <name>`): lowercase letters, digits and
 * dashes. It writes `packages/host-<name>/` — package.json (with the repository, homepage and
 * keywords of the new package), tsconfigs, vitest config, README, LICENSE, pack-smoke,
 * `src/<Name>.ts` (a working adapter for a host that sends Claude Code-shaped JSON
 * payloads: `hook_event_name`, `session_id`, `cwd`, `tool_name`, `tool_input`, decoded through
 * `@ratchet/host`'s `HookPayload`), `src/index.ts`, one fixture per event it acts on, and
 * `test/HostKit.test.ts` running `@ratchet/testkit/vitest`'s `HostKit` against them — and places the
 * package in the layer table (`tools/eslint/layers.js`) and `tools/pack-expectations.json`.
 *
 * The scaffold passes the kit as generated; the work left is the host's own: replace the fixtures
 * with the host's documented payloads, field for field, map its tools in `actionOf` and its events
 * in `decode`, and answer in its protocol in `reply` and `failure`. Then run `npm install` and
 * `npx nx run @ratchet/host-<name>:test`.
 *
 * Refuses (exit 2, nothing written) a bad name or a package that already exists.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/**
 * @param {string} message
 * @returns {never}
 */
const refuse = (message) => {
  process.stderr.write(`new-host-adapter: ${message}\n`)
  process.exit(2)
}

const args = process.argv.slice(2)
/** @param {string} flag */
const option = (flag) => {
  const index = args.indexOf(flag)
  if (index === -1) return undefined
  const value = args[index + 1]
  if (value === undefined || value.startsWith("--")) refuse(`${flag} needs a value.`)
  args.splice(index, 2)
  return value
}
const root = path.resolve(option("--root") ?? path.join(path.dirname(fileURLToPath(import.meta.url)), ".."))
const titleOption = option("--title")
const typed = args[0]
if (typed === undefined || args.length > 1) refuse("usage: node tools/new-host-adapter.mjs <name> [--title \"<Host name>\"] [--root <repository>]")
const name = /** @type {string} */ (typed)
if (!/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/.test(name) || name.length > 40) {
  refuse(`${JSON.stringify(name.slice(0, 60))} is not a host name: use lowercase letters, digits and single dashes, starting with a letter (e.g. my-agent).`)
}
const pascal = name.split("-").map((part) => part.charAt(0).toUpperCase() + part.slice(1)).join("")
const title = titleOption ?? pascal
const packageName = `@ratchet/host-${name}`
const directory = path.join(root, "packages", `host-${name}`)
if (fs.existsSync(directory)) refuse(`${path.relative(root, directory)} already exists; nothing was written.`)
const layersFile = path.join(root, "tools", "eslint", "layers.js")
const expectationsFile = path.join(root, "tools", "pack-expectations.json")
for (const file of [layersFile, expectationsFile]) if (!fs.existsSync(file)) refuse(`${file} is missing: --root must be the repository.`)
const layers = fs.readFileSync(layersFile, "utf8")
const adapterRow = /\["@ratchet\/host-claude-code"[^\]]*\]/
if (!adapterRow.test(layers)) refuse(`${layersFile} has no adapter row (the one holding @ratchet/host-claude-code).`)

const session = { session_id: "sess-0001", cwd: "/home/dev/project" }
/** @type {Record<string, unknown>} */
const fixtures = {
  "SessionStart.startup.json": { ...session, hook_event_name: "SessionStart", source: "startup" },
  "UserPromptSubmit.basic.json": { ...session, hook_event_name: "UserPromptSubmit", prompt: "Fix the date test" },
  "PreToolUse.Edit.json": { ...session, hook_event_name: "PreToolUse", tool_name: "Edit", tool_input: { file_path: "/home/dev/project/src/a.ts" }, tool_use_id: "call-1" },
  "PreToolUse.Bash.json": { ...session, hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "npm test" }, tool_use_id: "call-2" },
  "PostToolUse.Edit.json": { ...session, hook_event_name: "PostToolUse", tool_name: "Edit", tool_input: { file_path: "/home/dev/project/src/a.ts" }, tool_use_id: "call-1" },
  "Stop.first.json": { ...session, hook_event_name: "Stop", stop_hook_active: false },
  "SessionEnd.exit.json": { ...session, hook_event_name: "SessionEnd", reason: "exit" }
}

/** @param {string} file */
const sibling = (file) => fs.readFileSync(path.join(root, "packages", "host-claude-code", file), "utf8")
const manifest = JSON.parse(sibling("package.json"))
manifest.name = packageName
manifest.description = `Ratchet's ${title} adapter: ${title}'s hook payloads decoded into host events and the guard's decisions in its hook protocol.`
manifest.keywords = ["ratchet", "ai-agents", name, "hooks", "guard", "effect"]
manifest.homepage = `https://github.com/ratchet-dev/ratchet/tree/main/packages/host-${name}#readme`
manifest.repository = { ...manifest.repository, directory: `packages/host-${name}` }
manifest.scripts["pack-check"] = `node ../../tools/pack-check.mjs packages/host-${name}`

/** @type {Record<string, string>} */
const files = {
  "package.json": `${JSON.stringify(manifest, null, 2)}\n`,
  "tsconfig.json": sibling("tsconfig.json"),
  "tsconfig.build.json": sibling("tsconfig.build.json"),
  "vitest.config.ts": sibling("vitest.config.ts"),
  "LICENSE": sibling("LICENSE"),
  "README.md": `# ${packageName}

The ${title} adapter for [Ratchet](https://github.com/ratchet-dev/ratchet#readme): \`ratchet hook ${name}\`
reads one hook payload on standard input.

\`\`\`sh
npm install ${packageName} @ratchet/host effect
\`\`\`

- \`${pascal}.decode\` — a payload as a typed \`HostEvent\`.
- \`${pascal}.reply\` — the guard's decision in ${title}'s protocol.
- \`${pascal}.failure\` — closed (blocking) for tool calls, open (a warning) elsewhere.

\`\`\`ts
import { Guard } from "@ratchet/host"
import { ${pascal} } from "${packageName}"
import * as Effect from "effect/Effect"

const payload = JSON.stringify({ hook_event_name: "Stop", session_id: "s-1", cwd: "/home/dev/project", stop_hook_active: false })
const answer = ${pascal}.decode(payload).pipe(
  Effect.map((event) => ${pascal}.reply(event, event._tag === "StopRequested" ? Guard.stop(null, false) : { _tag: "Allow" }))
)
\`\`\`

The fixtures in \`test/fixtures/\` must be ${title}'s documented payloads, field for field; the
host kit (\`@ratchet/testkit/vitest\`'s \`HostKit\`) runs against them in \`test/HostKit.test.ts\`.
See [writing an adapter](https://github.com/ratchet-dev/ratchet/blob/main/docs/guides/writing-an-adapter.md).
`,
  "pack-smoke.mjs": `/**
 * Packaging smoke test for \`${packageName}\`: the entry point resolves to the built \`dist/\` and a
 * PreToolUse payload decodes. Prints one line; exits non-zero on the first thing that is wrong.
 */
import { ${pascal} } from "${packageName}"
import * as Effect from "effect/Effect"

const entry = import.meta.resolve("${packageName}")
if (!entry.endsWith("/dist/index.js")) {
  console.error(\`${packageName} smoke: the entry point resolves to \${entry}, not dist/index.js\`)
  process.exit(1)
}
const event = Effect.runSync(${pascal}.decode(JSON.stringify(${JSON.stringify(fixtures["PreToolUse.Bash.json"])})))
if (event._tag !== "ToolCallRequested") {
  console.error(\`${packageName} smoke: a PreToolUse should decode to a tool call, got \${event._tag}\`)
  process.exit(1)
}
console.log("${packageName} smoke: ok — a PreToolUse decodes")
`,
  "src/index.ts": `/**
 * \`${packageName}\`: the ${title} adapter.
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 */
export * as ${pascal} from "./${pascal}.js"
`,
  [`src/${pascal}.ts`]: `/**
 * The ${title} adapter: its hook payloads decoded into host events, and the guard's decisions
 * encoded in its protocol.
 *
 * Generated for a host that sends one JSON object per hook with \`hook_event_name\`, \`session_id\`,
 * \`cwd\` and, for tool events, \`tool_name\`, \`tool_input\` and \`tool_use_id\`. Adjust the tool
 * mapping, the events and the answers to ${title}'s documentation.
 *
 * @since 0.1.0
 */
import type * as Guard from "@ratchet/host/Guard"
import type * as HostAdapter from "@ratchet/host/HostAdapter"
import * as HookPayload from "@ratchet/host/HookPayload"
import type * as HostEvent from "@ratchet/host/HostEvent"
import * as Effect from "effect/Effect"

/**
 * The adapter's name: \`ratchet hook ${name}\`.
 *
 * @since 0.1.0
 * @category constants
 */
export const name = "${name}"

/** What a tool call would do, from the tool's name and input. */
const actionOf = (payload: HookPayload.Payload) => (tool: string, input: HookPayload.Json) =>
  Effect.gen(function*() {
    if (tool === "Edit" || tool === "Write") return { _tag: "Write" as const, paths: [yield* HookPayload.text(payload, input, "file_path", "tool_input.file_path")] }
    if (tool === "Bash") return { _tag: "Shell" as const, command: yield* HookPayload.text(payload, input, "command", "tool_input.command") }
    if (tool === "Read") return { _tag: "Read" as const, paths: [yield* HookPayload.text(payload, input, "file_path", "tool_input.file_path")] }
    return { _tag: "Other" as const }
  })

/**
 * Decodes one hook payload.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decode = (raw: string): Effect.Effect<HostEvent.HostEvent, HostAdapter.HostDecodeError> =>
  Effect.flatMap(HookPayload.parse(name, raw), (payload) => HookPayload.eventOf(payload, actionOf(payload)))

const said = (decision: Guard.Decision): string => (decision._tag === "Deny" ? \`\${decision.reason} \${decision.fix}\` : decision._tag === "Ask" ? decision.reason : "")

/**
 * The answer to an event the guard judged. This generated host cannot ask: an ask is a denial.
 *
 * @since 0.1.0
 * @category encoding
 */
export const reply = (event: HostEvent.HostEvent, decision: Guard.Decision): HostAdapter.Reply => {
  if (decision._tag === "Allow") return { stdout: "", stderr: "", exitCode: 0 }
  switch (event._tag) {
    case "ToolCallRequested":
      return { stdout: \`\${JSON.stringify({ decision: "deny", reason: \`Ratchet: \${said(decision)}\` })}\\n\`, stderr: "", exitCode: 0 }
    case "StopRequested":
      return { stdout: \`\${JSON.stringify({ decision: "block", reason: \`Ratchet: \${said(decision)}\` })}\\n\`, stderr: "", exitCode: 0 }
    default:
      return { stdout: "", stderr: "", exitCode: 0 }
  }
}

/**
 * The answer when Ratchet could not judge: closed for a tool call or an unreadable event, open
 * (a warning) otherwise.
 *
 * @since 0.1.0
 * @category encoding
 */
export const failure = (event: string | null, problem: string): HostAdapter.Reply => {
  const line = problem.replace(/\\s+/g, " ").slice(0, 500)
  return event === null || event === "PreToolUse"
    ? { stdout: "", stderr: \`Ratchet blocked this call because it could not check it: \${line}\\n\`, exitCode: 2 }
    : { stdout: "", stderr: \`Ratchet (warning): \${line}\\n\`, exitCode: 1 }
}

/**
 * The adapter.
 *
 * @since 0.1.0
 * @category adapters
 */
export const adapter: HostAdapter.HostAdapter = { name, canAsk: false, decode, reply, failure }
`,
  "test/HostKit.test.ts": `/** The host adapter test kit of @ratchet/testkit, run against this adapter and its fixtures. */
import { HostKit } from "@ratchet/testkit/vitest"
import * as path from "node:path"
import * as ${pascal} from "../src/${pascal}.js"

HostKit.suite("${name} adapter: the host kit", {
  adapter: ${pascal}.adapter,
  fixtures: path.join(import.meta.dirname, "fixtures"),
  expected: {
    "PreToolUse.Edit.json": "ToolCallRequested:Write",
    "PreToolUse.Bash.json": "ToolCallRequested:Shell",
    "PostToolUse.Edit.json": "ToolCallCompleted:Write",
    "Stop.first.json": "StopRequested",
    "SessionStart.startup.json": "SessionStarted"
  },
  toolEvents: ["PreToolUse"]
})
`
}
for (const [file, value] of Object.entries(fixtures)) files[`test/fixtures/${file}`] = `${JSON.stringify(value, null, 2)}\n`

for (const [file, content] of Object.entries(files)) {
  const target = path.join(directory, file)
  fs.mkdirSync(path.dirname(target), { recursive: true })
  fs.writeFileSync(target, content)
}
fs.writeFileSync(layersFile, layers.replace(adapterRow, (row) => `${row.slice(0, -1)}, "${packageName}"]`))
const expectations = JSON.parse(fs.readFileSync(expectationsFile, "utf8"))
expectations[packageName] = { runtimeDependencies: ["@ratchet/host", "effect"] }
fs.writeFileSync(expectationsFile, `${JSON.stringify(expectations, null, 2)}\n`)

process.stdout.write(
  `Created ${path.relative(root, directory)}/ (${Object.keys(files).length} files) and placed ${packageName} in the layer table.\n` +
    `Next: replace test/fixtures/ with ${title}'s documented payloads, adapt src/${pascal}.ts, add it to apps/cli's adapters,\n` +
    `then npm install && npx nx run ${packageName}:test\n`
)
