/**
 * A session's hooks: what Ratchet's hooks cost over a fixed script of 50 tool calls, as Claude
 * Code runs them, against the same session without hooks and against the hooks as they were
 * installed before they had matchers.
 *
 * The world is a real project (a git repository, `RATCHET_HOME` in a temporary directory, `ratchet
 * init`, one task, so INTERVIEWING) with `ratchet hooks install claude-code` run in it. The script
 * is a fixed mix a coding session makes: 18 Read, 10 Grep, 6 Glob, 8 Edit and 8 Bash calls, in a
 * fixed order. For each call a side does the tool's own work (read the file, run `grep`, walk the
 * tree, rewrite the file, run the command in `/bin/sh`), and the sides with hooks first run, as the
 * host does, every installed hook entry whose event fires for that call (PreToolUse before it,
 * PostToolUse after it) and whose matcher matches the tool's name: `/bin/sh -c <command>` with the
 * host's payload on standard input, one process each, waited for.
 *
 * Pairs (one operation is the whole session):
 * - the session with the hooks as installed vs the same session with no hooks: what a person's
 *   session pays for Ratchet (informational);
 * - the hooks as installed vs the same entries without matchers (every tool call starts a
 *   PreToolUse and a PostToolUse process, as before): what the matchers save (informational).
 *
 * Facts: the hook processes per session each way, and how many of the calls start one (issue 19
 * asks for at most a quarter; since ADR 0030 only the judged tools' calls do).
 *
 * The task is INTERVIEWING, so the hooks read it, judge and answer (the Edits are denied) but
 * write nothing, and every session finds the same store. The tools' work is done on every side
 * even where a hook denied it, so the difference between the sides is the hooks alone.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { Pair, Suite } from "../lib/Pair.js"
import { cleanEnv, type Command, gitRepository, run, runOk } from "../startup/processes.js"

const repositoryRoot = fileURLToPath(new URL("../..", import.meta.url))
const cliBin = path.join(repositoryRoot, "apps", "cli", "bin", "ratchet.mjs")
const fixtures = path.join(repositoryRoot, "packages", "host-claude-code", "test", "fixtures")

/** One tool call of the script: the tool's name and its input, as Claude Code sends them. */
interface Call {
  readonly tool: "Read" | "Grep" | "Glob" | "Edit" | "Bash"
  readonly input: Readonly<Record<string, unknown>>
}

/** The fixed script: 18 Read, 10 Grep, 6 Glob, 8 Edit, 8 Bash, interleaved as a session goes. */
const script = (repo: string): ReadonlyArray<Call> => {
  const file = (name: string) => path.join(repo, "src", name)
  const read = (name: string): Call => ({ tool: "Read", input: { file_path: file(name) } })
  const grep = (pattern: string): Call => ({ tool: "Grep", input: { pattern, path: path.join(repo, "src") } })
  const glob = (pattern: string): Call => ({ tool: "Glob", input: { pattern, path: repo } })
  const edit = (name: string, n: number): Call => ({
    tool: "Edit",
    input: { file_path: file(name), old_string: `// revision ${n}`, new_string: `// revision ${n + 1}` }
  })
  const bash = (command: string): Call => ({ tool: "Bash", input: { command, description: command } })
  const calls: Array<Call> = []
  for (let i = 0; i < 2; i++) {
    calls.push(read("math.ts"), read("dates.ts"), glob("src/**/*.ts"), grep("export function"), read("util.ts"))
    calls.push(grep("sum"), read("math.ts"), edit("math.ts", i), bash("git status --short"), read("math.ts"))
    calls.push(grep("return"), read("dates.ts"), glob("**/*.json"), edit("dates.ts", i), bash("ls src"))
    calls.push(read("util.ts"), grep("import"), read("math.ts"), edit("util.ts", i), bash("git diff --stat"))
    calls.push(glob("src/*.ts"), read("dates.ts"), grep("const"), edit("math.ts", i + 10), bash("cat package.json"))
  }
  // 50 calls: two passes of 25 (9 Read, 5 Grep, 3 Glob, 4 Edit, 4 Bash each).
  return calls
}

/** The tool's own work, as the host does it; the same on every side. */
const toolWork = async (call: Call, repo: string, env: NodeJS.ProcessEnv): Promise<void> => {
  switch (call.tool) {
    case "Read":
      fs.readFileSync(call.input["file_path"] as string, "utf8")
      return
    case "Grep":
      await run({ file: "grep", args: ["-rn", call.input["pattern"] as string, call.input["path"] as string], cwd: repo, env })
      return
    case "Glob": {
      const walk = (dir: string): number =>
        fs.readdirSync(dir, { withFileTypes: true }).reduce((n, entry) =>
          entry.name === ".git" ? n : n + (entry.isDirectory() ? walk(path.join(dir, entry.name)) : 1), 0)
      walk(repo)
      return
    }
    case "Edit": {
      // The same bytes back: the file stays as it was, so every session finds it alike.
      const target = call.input["file_path"] as string
      fs.writeFileSync(target, fs.readFileSync(target))
      return
    }
    case "Bash":
      await runOk({ file: "/bin/sh", args: ["-c", call.input["command"] as string], cwd: repo, env })
      return
  }
}

/** One installed hook entry: the event, its matcher (none = every tool) and its command. */
interface Entry {
  readonly event: "PreToolUse" | "PostToolUse"
  readonly matcher: RegExp | null
  readonly command: string
}

/** The tool events' entries of a Claude Code settings file, as the host reads them. */
const entriesOf = (settingsFile: string): ReadonlyArray<Entry> => {
  const settings = JSON.parse(fs.readFileSync(settingsFile, "utf8")) as {
    hooks: Record<string, ReadonlyArray<{ matcher?: string; hooks: ReadonlyArray<{ command: string }> }>>
  }
  return (["PreToolUse", "PostToolUse"] as const).flatMap((event) =>
    (settings.hooks[event] ?? []).flatMap((group) =>
      group.hooks.map((hook) => ({
        event,
        // Claude Code: a matcher is a regular expression over the tool's name; "" or "*" is every tool.
        matcher: group.matcher === undefined || group.matcher === "" || group.matcher === "*" ? null : new RegExp(`^(?:${group.matcher})$`),
        command: hook.command
      }))
    )
  )
}

/** The host's payload of `event` for `call`, built on the adapter's fixtures. */
const payloadOf = (event: "PreToolUse" | "PostToolUse", call: Call, repo: string): string => {
  const base = JSON.parse(fs.readFileSync(path.join(fixtures, event === "PreToolUse" ? "PreToolUse.Bash.npm-test.json" : "PostToolUse.Bash.json"), "utf8").replaceAll("/home/dev/project", repo)) as Record<string, unknown>
  return JSON.stringify({
    ...base,
    hook_event_name: event,
    tool_name: call.tool,
    tool_input: call.input,
    ...(event === "PostToolUse" ? { tool_response: call.tool === "Bash" ? base["tool_response"] : { success: true } } : {})
  })
}

/** A session side: the script's calls, each with the entries that fire for it around its work. */
const session = (calls: ReadonlyArray<Call>, entries: ReadonlyArray<Entry>, repo: string, env: NodeJS.ProcessEnv) => {
  const firing = (event: Entry["event"], call: Call) => entries.filter((entry) => entry.event === event && (entry.matcher === null || entry.matcher.test(call.tool)))
  const hook = async (entry: Entry, call: Call) => {
    const ran = await run({ file: "/bin/sh", args: ["-c", entry.command], cwd: repo, env, input: payloadOf(entry.event, call, repo) })
    // 0 is an answer (allow, or a JSON deny), 2 a blocking deny: anything else is a broken hook.
    if (ran.code !== 0 && ran.code !== 2) throw new Error(`the ${entry.event} hook of ${call.tool} exited ${ran.code}: ${ran.stderr.slice(0, 500)}`)
  }
  const processes = calls.reduce((n, call) => n + firing("PreToolUse", call).length + firing("PostToolUse", call).length, 0)
  // The calls that start at least one hook process (issue 19: at most a quarter of them).
  const starting = calls.filter((call) => firing("PreToolUse", call).length + firing("PostToolUse", call).length > 0).length
  const side = async (_round: number, operations: number) => {
    for (let i = 0; i < operations; i++) {
      for (const call of calls) {
        for (const entry of firing("PreToolUse", call)) await hook(entry, call)
        await toolWork(call, repo, env)
        for (const entry of firing("PostToolUse", call)) await hook(entry, call)
      }
    }
  }
  return { side, processes, starting }
}

export const suite: Suite = {
  name: "session",
  prepare: async () => {
    const env = cleanEnv()
    await runOk({ file: process.execPath, args: [path.join(repositoryRoot, "apps", "cli", "build.mjs")], cwd: repositoryRoot, env })
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-bench-session-")))
    const close = () => Promise.resolve(fs.rmSync(root, { recursive: true, force: true }))
    try {
      const repo = path.join(root, "repo")
      const home = path.join(root, "home")
      fs.mkdirSync(home)
      const source = (name: string) => `// revision 0\n// revision 1\n// revision 10\n// revision 11\nexport function ${name}(a: number, b: number): number {\n  const sum = a + b\n  return sum\n}\n`
      await gitRepository(repo, env, {
        "package.json": "{ \"name\": \"session\", \"private\": true }\n",
        "src/math.ts": source("sub"),
        "src/dates.ts": source("today"),
        "src/util.ts": source("clamp")
      })
      const worldEnv: NodeJS.ProcessEnv = { ...env, RATCHET_HOME: home, CLAUDE_PROJECT_DIR: repo }
      const ratchet = (args: ReadonlyArray<string>): Command => ({ file: process.execPath, args: [cliBin, ...args], cwd: repo, env: worldEnv })
      await runOk(ratchet(["init", "--json"]))
      const created = JSON.parse((await runOk(ratchet(["task", "create", "--goal", "Fix sub: it adds instead of subtracting", "--json"]))).stdout) as { state: string }
      await runOk(ratchet(["hooks", "install", "claude-code", "--json"]))

      const calls = script(repo)
      const installed = entriesOf(path.join(repo, ".claude", "settings.json"))
      // The same entries without matchers: every tool call starts every tool event's hook.
      const unmatched = installed.map((entry) => ({ ...entry, matcher: null }))
      const withHooks = session(calls, installed, repo, worldEnv)
      const withoutMatchers = session(calls, unmatched, repo, worldEnv)
      const noHooks = session(calls, [], repo, worldEnv)
      // Once, untimed: the hooks answer every call of the script.
      await withHooks.side(0, 1)

      const counts = calls.reduce<Record<string, number>>((n, call) => ({ ...n, [call.tool]: (n[call.tool] ?? 0) + 1 }), {})
      const facts: Record<string, string> = {
        "script": `${calls.length} tool calls: ${Object.entries(counts).map(([tool, n]) => `${n} ${tool}`).join(", ")}`,
        "task": `${created.state}: the hooks read, judge and answer, and write nothing`,
        "hook processes per session, as installed": String(withHooks.processes),
        "hook processes per session, without matchers": String(withoutMatchers.processes),
        "calls that start a hook process, as installed": `${withHooks.starting} of ${calls.length} (${Math.round((100 * withHooks.starting) / calls.length)}%)`,
        "matchers": installed.map((entry) => `${entry.event} ${entry.matcher === null ? "(every tool)" : entry.matcher.source}`).join("; ")
      }
      const informational = { target: Number.POSITIVE_INFINITY, targetText: "(informational)" }
      const pairs: ReadonlyArray<Pair> = [
        {
          id: "session/hooks-vs-none",
          operation: `a session of ${calls.length} tool calls with Ratchet's hooks as installed`,
          ours: withHooks.side,
          raw: noHooks.side,
          baseline: "no hooks",
          operationsPerRound: 1,
          eventsPerOperation: calls.length,
          ...informational
        },
        {
          id: "session/matchers-vs-none",
          operation: `a session of ${calls.length} tool calls with Ratchet's hooks as installed`,
          ours: withHooks.side,
          raw: withoutMatchers.side,
          baseline: "hooks without matchers",
          operationsPerRound: 1,
          eventsPerOperation: calls.length,
          ...informational
        }
      ]
      return { _tag: "Prepared", pairs, facts, close }
    } catch (error) {
      await close()
      throw error
    }
  }
}
