/**
 * The commands an agent host talks to: `hook <host>` answers one hook call in the host's own
 * protocol, `hooks install|uninstall` registers Ratchet's hooks and the host's sandbox in its
 * settings, and `mcp` serves the project as an MCP server. The settings writer and the MCP SDK are
 * loaded on demand, so the hook path (run on every tool call of an agent) never parses them.
 *
 * @since 0.2.0
 */
import * as ControllerError from "@ratchet/controller/ControllerError"
import * as Effect from "effect/Effect"
import { type CommandSpec, ok, type Outcome, str } from "./Command.js"
import { adapterFor, adapters, answerStandardInput } from "./HookEntry.js"
import type * as HookSettings from "./HookSettings.js"
import type * as Render from "./Render.js"

/** What `hooks install|uninstall` did, for a person. */
const hooksText = (action: "install" | "uninstall", change: HookSettings.Change, style: Render.Style): string => {
  const lines = [
    change.hooksChanged
      ? `${action === "install" ? "Installed" : "Removed"} Ratchet's hooks ${action === "install" ? "in" : "from"} ${change.file} (${change.entries} of ours now).`
      : `${change.file} already ${action === "install" ? "has Ratchet's hooks" : "has none of Ratchet's hooks"}${change.changed ? "" : "; nothing changed"}.`
  ]
  if (change.runs !== null) {
    lines.push(`Each runs ${change.runs.launcher}, which runs ${change.runs.program} and blocks the agent's tool calls when that cannot run; run this command again after moving or reinstalling Ratchet or node.`)
  }
  if (change.sandbox.changed) {
    lines.push(action === "install"
      ? `Set ${change.host === "codex" ? "Codex's workspace-write sandbox" : "Claude Code's sandbox"} in ${change.sandbox.file} so the agent's commands cannot write Ratchet's store${change.host === "codex" ? " or the approval key" : ", the approval key or .ratchet/"}.`
      : `Removed the sandbox settings Ratchet had set in ${change.sandbox.file}.`)
  }
  for (const note of change.sandbox.notes) lines.push(`${style.yellow("note")}: ${note}`)
  if (action === "install" && change.changed) {
    lines.push(`The host reads them when a session starts; /hooks shows the hooks${change.host === "codex" ? " (Codex asks you to review new hooks there before it runs them, and reads .codex/ only in a trusted project)" : ", /sandbox the sandbox"}.`)
  }
  return lines.join("\n")
}

/**
 * `ratchet hook <host>`.
 *
 * @since 0.2.0
 * @category commands
 */
export const hook: CommandSpec = {
  name: "hook",
  usage: "ratchet hook <host>",
  summary: "Answer one hook call of an agent host (Claude Code, Codex) in the host's own protocol",
  description: [
    "Reads one hook payload on standard input and answers it the way the host expects (the host runs this; you rarely do). A tool call is judged by the guard against the task in progress in the project the session was started in: the one at or above the host's project directory (Claude Code's CLAUDE_PROJECT_DIR) or, without it, this command's working directory, never the payload's cwd; a call whose cwd is outside that project, or has control characters, is denied. The acts only a person may do (ratchet approve, approver, reopen, unblock, rewind, verify, lessons pin|reject|supersede, hooks) are denied in every state, however they are launched and wherever the command names them; Ratchet's runtime store and .ratchet/ are never written, or handed to a program, by a tool; a command Ratchet cannot read completely (code given to an interpreter, a shell reading a pipe, a computed program name, more than 64 KiB) is denied while a task is in progress and asked about otherwise; file writes (and shell commands that write) are denied unless the task is RUNNING, no other owner holds its lease and every path is inside the spec's allowedScope and outside its forbiddenScope; destructive commands (rm -rf, git reset --hard, git push --force) are asked about. A stop is blocked once while required criteria are unverified. Every other event passes.",
    "The task is RATCHET_TASK when set, else the project's only task that has not ended, else the only one with a run in progress; with several, writes are denied until RATCHET_TASK names one. Outside a Ratchet project only person-only acts and writes to the store are denied, and commands Ratchet cannot read are asked about.",
    "When the payload cannot be read or Ratchet cannot decide, a tool call is blocked (exit 2, the reason on standard error) and any other event goes on with a one-line warning. While a manual step awaits its worker, the session is that worker: it takes the task's writer lease (another session observes, its writes denied), each file-changing call it is allowed is recorded as an intent of the step's attempt before it runs and resolved when it ends, what its events tell of its turn (a prompt, a call used, failed or denied, a stop) is recorded in the attempt when it changes a flag, and SessionEnd releases the lease (docs/guides/claude-code.md). Nothing else is written, and nothing when the payload does not decode. --json changes nothing: the answer is always the host's protocol. Hosts: claude-code, codex (Codex cannot ask, so an ask is a denial saying what the user would have been asked)."
  ].join(" "),
  positionals: [{ name: "host", description: "The host whose payload this is: claude-code or codex", required: true }],
  options: {},
  examples: ["ratchet hook claude-code", "ratchet hook codex"],
  needs: "standalone",
  run: (parsed, env) =>
    Effect.gen(function*() {
      const host = str(parsed, "host")
      const adapter = adapterFor(host)
      if (adapter === undefined) {
        return yield* new ControllerError.InvalidRequest({ field: "host", reason: `${JSON.stringify(host.slice(0, 40))} is not a host Ratchet has an adapter for.`, fix: `Use one of: ${Object.keys(adapters).join(", ")}.` })
      }
      const exit = yield* answerStandardInput(adapter, env.cwd)
      return { exit, json: null, text: null } satisfies Outcome
    })
}

/**
 * `ratchet hooks install|uninstall`, in that order.
 *
 * @since 0.2.0
 * @category commands
 */
export const hooks: ReadonlyArray<CommandSpec> = (["install", "uninstall"] as const).map((action): CommandSpec => ({
  name: `hooks ${action}`,
  usage: `ratchet hooks ${action} <host> [--scope project|user]${action === "install" ? " [--command <text>]" : ""}`,
  summary: action === "install"
    ? "Register Ratchet's hooks in a host's settings and set the host's sandbox (.claude/settings.json, .codex/hooks.json and config.toml)"
    : "Remove Ratchet's hooks and sandbox settings from a host's settings, leaving everything else",
  description: action === "install"
    ? "Merges Ratchet's hook entries into the host's settings: Claude Code's .claude/settings.json (SessionStart, UserPromptSubmit, PreToolUse, PermissionRequest, PostToolUse, PostToolUseFailure, Stop, SessionEnd) or Codex's .codex/hooks.json (the same but PostToolUseFailure; SessionEnd within Codex's 3 s cap), 10 s timeout. Each entry runs the fail-closed launcher beside this CLI (bin/ratchet-hook) by absolute path through /bin/sh, and the launcher runs this node and this CLI's bundle by absolute path (ratchet hook <host>), so the host's PATH needs neither; when they cannot run (moved, removed, crashed, no answer within 8 s), a tool call is denied with the fix (run this command again) instead of let through, and other events go on with a warning (ADR 0026). PreToolUse and PermissionRequest match only the tools Ratchet may refuse (Claude Code: Bash, Edit, Write, MultiEdit, NotebookEdit; Codex: Bash, apply_patch), so reads and searches start no hook; Claude Code's PostToolUse matches the same tools, and its Stop reads the end of any other call from the session's transcript (ADR 0030); the other events match everything. --scope project (the default) writes the file beside .ratchet/; --scope user writes the user's (~/.claude/settings.json or CLAUDE_CONFIG_DIR; ~/.codex/hooks.json or CODEX_HOME). Every other hook and setting is kept; running it again changes nothing; entries of ours written before (a bare ratchet hook <host>, or another launcher path) are replaced. A file that is not JSON, or whose hooks are not the host's shape, is refused and left as it was. The host reads its settings when a session starts (/hooks shows them; Codex asks you to review new hooks there before it runs them). It also sets the host's own sandbox so that the agent's commands cannot write Ratchet's store ($RATCHET_HOME), the approval key or the project's .ratchet/ (ADR 0017, docs/guides/security.md): Claude Code: sandbox.enabled true, sandbox.allowUnsandboxedCommands false, sandbox.filesystem.denyWrite and denyRead, and Edit(…)/Read(…) rules in permissions.deny, recorded in ratchet-sandbox.json beside the settings; Codex: sandbox_mode = \"workspace-write\" in config.toml beside hooks.json (unless it is read-only) and, when the store or key is under /tmp or $TMPDIR, exclude_slash_tmp or exclude_tmpdir_env_var in [sandbox_workspace_write], each line marked with a comment. What merging cannot do (a writable_roots entry holding the store) is printed as a note. A config.toml that is not TOML is refused untouched."
    : "Removes exactly Ratchet's hook entries (those running the launcher, ratchet-hook, for the host, and those running ratchet hook <host> as written before it) from the host's settings file of --scope (project by default, or user), keeping every other hook and setting; groups and events left empty are removed. Removes the sandbox settings install added too: Claude Code's from its ratchet-sandbox.json record (booleans put back as they were, unless changed since), Codex's config.toml lines marked as Ratchet's (replaced values restored). Without any of ours it changes nothing.",
  positionals: [{ name: "host", description: "The host: claude-code or codex", required: true, choices: ["claude-code", "codex"] }],
  options: {
    scope: { type: "string", valueName: "<scope>", choices: ["project", "user"], description: "project (the repository's settings file, default) or user (the user's)." },
    ...(action === "install" ? { command: { type: "string", valueName: "<text>", description: "What the launcher runs instead of this node and bundle: a command that runs ratchet hook <host> (e.g. a wrapper that sets the environment)." } } : {})
  },
  examples: action === "install"
    ? ["ratchet hooks install claude-code", "ratchet hooks install codex", "ratchet hooks install claude-code --scope user", "ratchet hooks install claude-code --command \"/opt/ratchet/bin/ratchet hook claude-code\""]
    : ["ratchet hooks uninstall claude-code", "ratchet hooks uninstall claude-code --scope user --json"],
  needs: "standalone",
  readsHome: true,
  run: (parsed, env) =>
    Effect.map(
      // Loaded on demand: the TOML reader stays out of every other command's start-up.
      Effect.flatMap(Effect.promise(() => import("./HookSettings.js")), (settings) => settings.apply({
        action,
        host: str(parsed, "host"),
        scope: parsed.options["scope"] === "user" ? "user" : "project",
        command: typeof parsed.options["command"] === "string" ? parsed.options["command"] : undefined,
        cwd: env.cwd
      })),
      (change) => ok({ ...change }, hooksText(action, change, env.style))
    )
}))

/**
 * `ratchet mcp`.
 *
 * @since 0.2.0
 * @category commands
 */
export const mcp: CommandSpec = {
  name: "mcp",
  usage: "ratchet mcp [--home <dir>]",
  summary: "Serve this project to an agent as an MCP server over standard input and output",
  description: [
    "A Model Context Protocol server for the project in the current directory (or -C): the agent's host starts it (claude mcp add ratchet -- ratchet mcp; Codex: [mcp_servers.ratchet] in ~/.codex/config.toml) and talks to it on standard input and output until it closes them. Its tools read a task (task_list, task_status, task_gate, task_log a page at a time, task_evidence, run_check), create one (task_create), ask and answer the brief's questions (brief_ask, brief_answer), propose the spec or the plan from a file in the workspace (spec_propose, plan_propose), start an approved plan's run in the background (run_start), read the lessons that apply to a task (lessons_query) and propose a lesson as a candidate (lesson_propose; no tool changes a lesson's status); each answers with the JSON of the matching command's --json. Its resources are ratchet://task/<id> and its /spec, /plan and /log.",
    "No tool approves anything: approvals, reopening a FAILED task, settling a step, rewinding, verification and ratchet done stay at a terminal (an agent that did the work cannot verify it). Everything it writes is recorded as an agent: RATCHET_ACTOR=agent:<id> names it, anything else is agent:mcp. A refusal is a tool error carrying the message this CLI would print.",
    "The store is the first of: --home <dir>, RATCHET_HOME (or RATCHET_DATABASE_URL), the store ratchet init recorded for this checkout, ~/.ratchet; MCP clients pass a server few environment variables, so the record is usually what finds it. A store the record names that does not exist is refused, never created empty. It says on standard error, in one line, which project and which store it serves, and a task it cannot find is refused naming that store. Standard output carries only the protocol; messages go to standard error. See docs/guides/mcp.md."
  ].join(" "),
  positionals: [],
  options: {
    home: {
      type: "string",
      valueName: "<dir>",
      description: "Serve the store in <dir> (as RATCHET_HOME would), over RATCHET_HOME and this checkout's record: an absolute path or ~/…."
    }
  },
  examples: ["ratchet mcp", "ratchet mcp -C ~/src/payments", "ratchet mcp --home ~/.ratchet-work"],
  needs: "project",
  run: () =>
    // Loaded on demand: the MCP SDK is bundled apart and parsed only by this command (see Mcp.ts).
    Effect.flatMap(Effect.promise(() => import("./Mcp.js")), (mcp) => Effect.as(mcp.serve, { exit: 0, json: null, text: null } satisfies Outcome))
}
