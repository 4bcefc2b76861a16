/**
 * Tool calls through the real hooks, for the stand-in `claude` (ADR 0040): when the test names a
 * file of actions in `STAND_IN_TOOLS`, the stand-in does for each what Claude Code does with a tool
 * call under the settings it was given (`--settings <json>`, merged, as Claude Code does, with
 * nothing else here): it runs every `PreToolUse` hook whose matcher takes the tool, through
 * `/bin/sh -c`, in the workspace, with `CLAUDE_PROJECT_DIR` set and the hook input on stdin in
 * Claude Code's documented format (the fields of `@ratchet/host-claude-code`'s hook fixtures,
 * `PreToolUse.*.json`); a deny (exit 2, or `hookSpecificOutput.permissionDecision: "deny"`) stops
 * the call, which then does not happen; an allowed call is done (a `Write` writes its file, a `Bash`
 * runs its command with `/bin/sh -c`), then the `PostToolUse` hooks run with its `tool_response`.
 *
 * Each action is `{ tool: "Write" | "Bash", input, env?, skipPost?, noHooks? }`: `env` replaces
 * variables for that call's hooks only (a session that sets the runner's variables without its
 * capability), `skipPost` ends the stand-in's part in the call before its end is reported (a host
 * that dies mid-call), and `noHooks` does the call without running any hook, as Claude Code does
 * when its settings switch hooks off (`disableAllHooks`). What happened is returned as stream-json lines (`tool_use`, then its `tool_result`,
 * an error when denied) and the denials (`permission_denials` of the result line); each hook's
 * answer is appended to `STAND_IN_HOOK_LOG` when set.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { randomUUID } from "node:crypto"
import { performance } from "node:perf_hooks"

/** The settings passed with `--settings`: a JSON text or a file, as Claude Code takes either. */
const settingsOf = (args) => {
  const at = args.indexOf("--settings")
  if (at < 0) return {}
  const value = args[at + 1] ?? ""
  return JSON.parse(value.trim().startsWith("{") ? value : fs.readFileSync(value, "utf8"))
}

/** The commands of `event`'s entries whose matcher takes `tool` (none, "" and "*" take every tool). */
const commandsFor = (settings, event, tool) =>
  (settings.hooks?.[event] ?? [])
    .filter((entry) => entry.matcher === undefined || entry.matcher === "" || entry.matcher === "*" || new RegExp(`^(?:${entry.matcher})$`).test(tool))
    .flatMap((entry) => (entry.hooks ?? []).filter((hook) => hook.type === "command").map((hook) => hook.command))

/** One hook command run as Claude Code runs it; `ms` is how long it took (wall time), for a test that reads the log. */
const run = (command, payload, env, cwd) => {
  const started = performance.now()
  const ran = spawnSync("/bin/sh", ["-c", command], { input: JSON.stringify(payload), cwd, env, encoding: "utf8", timeout: 60_000 })
  return { status: ran.status, stdout: ran.stdout ?? "", stderr: ran.stderr ?? "", ms: Math.round(performance.now() - started) }
}

/** Whether a PreToolUse answer denies the call, and why. */
const denialOf = (answer) => {
  if (answer.status === 2) return answer.stderr.trim() || "denied by a hook"
  if (answer.status !== 0) return null
  try {
    const output = JSON.parse(answer.stdout.trim() || "{}").hookSpecificOutput
    return output?.permissionDecision === "deny" ? output.permissionDecisionReason ?? "denied by a hook" : null
  } catch {
    return null
  }
}

const line = (sessionId, message) => JSON.stringify({ ...message, parent_tool_use_id: null, session_id: sessionId, uuid: randomUUID() })

/**
 * An assistant message of the stream as Claude Code writes one (a Messages API message, one content
 * block, its usage's optional parts null), with every field the Agent SDK's `SDKAssistantMessage`
 * declares.
 */
const assistantMessage = (id, content) => ({
  id,
  type: "message",
  role: "assistant",
  model: "claude-sonnet-4-5-20250929",
  content,
  container: null,
  context_management: null,
  diagnostics: null,
  stop_details: null,
  stop_reason: null,
  stop_sequence: null,
  usage: {
    input_tokens: 1,
    output_tokens: 1,
    cache_creation: null,
    cache_creation_input_tokens: null,
    cache_read_input_tokens: null,
    fallback_credit: null,
    inference_geo: null,
    iterations: null,
    output_tokens_details: null,
    server_tool_use: null,
    service_tier: "standard",
    speed: null
  }
})

/** Does the tool's work, as Claude Code would, and returns its response and result text. */
const perform = (tool, input, cwd) => {
  if (tool === "Write") {
    const file = path.resolve(cwd, input.file_path)
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, input.content)
    return { ok: true, response: { type: "create", filePath: file, content: input.content }, text: `File created successfully at: ${file}` }
  }
  const ran = spawnSync("/bin/sh", ["-c", input.command], { cwd, encoding: "utf8", timeout: 60_000 })
  return { ok: ran.status === 0, response: { stdout: ran.stdout ?? "", stderr: ran.stderr ?? "", interrupted: false, isImage: false }, text: `${ran.stdout ?? ""}${ran.stderr ?? ""}` }
}

/** The tools that write a file: the calls the run's hooks record, as Claude Code's writers. */
const writers = new Set(["Write", "Edit", "MultiEdit", "NotebookEdit"])

/** Whether `settings` fence the session: they hold a PreToolUse hook. */
export const fenced = (args) => (settingsOf(args).hooks?.PreToolUse ?? []).length > 0

/**
 * One tool call as Claude Code makes it under `settings`: its PreToolUse hooks (unless `noHooks`),
 * then, when allowed, the call itself and its PostToolUse hooks (unless `skipPost` or `noHooks`).
 * Returns the denial (or null) and what the call did (null when denied or ended early).
 */
const makeCall = (settings, base, env, cwd, id, tool, input, { skipPost = false, noHooks = false } = {}) => {
  const pre = { ...base, hook_event_name: "PreToolUse", tool_name: tool, tool_input: input, tool_use_id: id }
  let denied = null
  for (const command of noHooks ? [] : commandsFor(settings, "PreToolUse", tool)) {
    const answer = run(command, pre, env, cwd)
    if (process.env.STAND_IN_HOOK_LOG) fs.appendFileSync(process.env.STAND_IN_HOOK_LOG, `${JSON.stringify({ id, event: "PreToolUse", ...answer })}\n`)
    denied = denied ?? denialOf(answer)
  }
  if (denied !== null) return { denied, done: null }
  const done = perform(tool, input, cwd)
  if (skipPost) return { denied: null, done: null }
  const post = { ...base, hook_event_name: done.ok ? "PostToolUse" : "PostToolUseFailure", tool_name: tool, tool_input: input, tool_use_id: id, ...(done.ok ? { tool_response: done.response } : { error: done.text, is_interrupt: false }) }
  for (const command of noHooks ? [] : commandsFor(settings, post.hook_event_name, tool)) {
    const answer = run(command, post, env, cwd)
    if (process.env.STAND_IN_HOOK_LOG) fs.appendFileSync(process.env.STAND_IN_HOOK_LOG, `${JSON.stringify({ id, event: post.hook_event_name, ...answer })}\n`)
  }
  return { denied: null, done }
}

const baseOf = (sessionId, cwd) => ({ session_id: sessionId, transcript_path: path.join(cwd, ".stand-in-transcript.jsonl"), cwd, permission_mode: "acceptEdits" })

/**
 * Runs the actions of `STAND_IN_TOOLS` through the hooks in `args`' settings; returns the stream
 * lines to print after the init line and the result's denials.
 */
export const runTools = (args, sessionId) => {
  const file = process.env.STAND_IN_TOOLS
  if (!file) return { lines: [], denials: [] }
  const actions = JSON.parse(fs.readFileSync(file, "utf8"))
  const settings = settingsOf(args)
  const cwd = process.cwd()
  const base = baseOf(sessionId, cwd)
  const lines = []
  const denials = []
  actions.forEach((action, index) => {
    const id = `toolu_standin_${index + 1}_${process.pid}`
    const env = { ...process.env, CLAUDE_PROJECT_DIR: cwd, ...(action.env ?? {}) }
    for (const [key, value] of Object.entries(action.env ?? {})) if (value === null) delete env[key]
    const input = action.tool === "Write" ? { ...action.input, file_path: path.resolve(cwd, action.input.file_path) } : action.input
    lines.push(line(sessionId, { type: "assistant", message: assistantMessage(`msg_tool_${index + 1}`, [{ type: "tool_use", id, name: action.tool, input }]) }))
    const { denied, done } = makeCall(settings, base, env, cwd, id, action.tool, input, { skipPost: action.skipPost, noHooks: action.noHooks })
    if (denied !== null) {
      denials.push({ tool_name: action.tool, tool_use_id: id, tool_input: input })
      lines.push(line(sessionId, { type: "user", message: { role: "user", content: [{ type: "tool_result", tool_use_id: id, content: denied, is_error: true }] } }))
      return
    }
    if (done === null) return
    lines.push(line(sessionId, { type: "user", message: { role: "user", content: [{ type: "tool_result", tool_use_id: id, content: done.text, is_error: !done.ok }] } }))
  })
  return { lines, denials }
}

/**
 * The recorded stream's own file edits, when the stand-in is fenced (its settings hold hooks): the
 * stream must then tell what the stand-in did, as Claude Code's does, since the runner holds every
 * side-effecting call of the stream to an intent its hooks recorded (ADR 0040's amendment). Each
 * file-writing `tool_use` of `fixture` is made, under its own id, through the hooks as the
 * stand-in's one edit (`STAND_IN_WRITE`, which is then not written again), denied ones listed in
 * the result's denials; with no `STAND_IN_WRITE` the stand-in made no edit, and the calls and
 * their results are left out of the stream. Unfenced, the fixture is printed as it is.
 */
export const fixtureEdits = (args, fixture, sessionId) => {
  if (!fenced(args) || fixture === "") return { fixture, denials: [] }
  const settings = settingsOf(args)
  const cwd = process.cwd()
  const base = baseOf(sessionId, cwd)
  const env = { ...process.env, CLAUDE_PROJECT_DIR: cwd }
  const target = process.env.STAND_IN_WRITE
  const dropped = new Set()
  const denials = []
  const out = []
  for (const text of fixture.split("\n")) {
    if (text.trim() === "") continue
    let message = null
    try {
      message = JSON.parse(text)
    } catch {
      out.push(text)
      continue
    }
    const blocks = Array.isArray(message?.message?.content) ? message.message.content : []
    const edit = message.type === "assistant" ? blocks.find((block) => block.type === "tool_use" && writers.has(block.name)) : undefined
    if (edit !== undefined) {
      if (!target) {
        dropped.add(edit.id)
        continue
      }
      const input = { file_path: path.resolve(cwd, target), content: "--json\n" }
      const { denied } = makeCall(settings, base, env, cwd, edit.id, "Write", input)
      if (denied !== null) denials.push({ tool_name: "Write", tool_use_id: edit.id, tool_input: input })
      out.push(text)
      continue
    }
    if (message.type === "user" && blocks.some((block) => block.type === "tool_result" && dropped.has(block.tool_use_id))) continue
    out.push(text)
  }
  if (target) delete process.env.STAND_IN_WRITE
  return { fixture: `${out.join("\n")}\n`, denials }
}

/**
 * `fixture`'s stream with `lines` after its init line and `denials` in its result line.
 */
export const withTools = (fixture, lines, denials) => {
  if (lines.length === 0 && denials.length === 0) return fixture
  const out = []
  for (const text of fixture.split("\n")) {
    if (text.trim() === "") continue
    let message = null
    try {
      message = JSON.parse(text)
    } catch {
      out.push(text)
      continue
    }
    if (message.type === "result") out.push(JSON.stringify({ ...message, permission_denials: [...(message.permission_denials ?? []), ...denials] }))
    else out.push(text)
    if (message.type === "system" && message.subtype === "init") out.push(...lines)
  }
  return `${out.join("\n")}\n`
}
