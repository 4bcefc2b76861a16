/**
 * Whether a shell command the runner's agent asks to run would start a host's CLI (`claude`,
 * `codex`): a nested agent the run did not start, so with none of the run's fence — no
 * `--settings` holding the run's hooks (it may pass `--settings '{"disableAllHooks":true}'`), no
 * capability, no Codex sandbox it did not choose (`--sandbox danger-full-access`). The runner's
 * agent is refused such a command (ADR 0040's amendment); an interactive session is not, since a
 * person may start what they like.
 *
 * The command is read as the guard reads it (`Shell.classify`): every simple command's program,
 * by its base name and case folded (a case-folding filesystem runs `CLAUDE` as `claude`), whatever
 * starts it — a path (`/usr/bin/claude`, `./node_modules/.bin/claude`), a wrapper (`env`, `npx`,
 * `npm exec`, `pnpm dlx`, `bunx`, `timeout`, `sudo`, `xargs`, …), an assignment before it
 * (`FOO=1 claude`), after `;`, `&&`, `|`, inside `$(…)`, backquotes or `sh -c '…'` — and the
 * packages' names (`@anthropic-ai/claude-code`, `@openai/codex`, a version after `@`). A script
 * run from the package's files (`node …/@anthropic-ai/claude-code/cli.js`) is refused by its
 * path. A command the reader cannot read completely (`Shell.Classification.opaque`: a computed
 * program name, code handed to an interpreter, …) is refused as well: it might start one (fail
 * closed).
 *
 * It is a seatbelt: a script the agent wrote (`node x.mjs`) can still start a host, which nothing
 * here reads. What such a nested agent does is caught after the fact: its writes are the step's
 * changed paths, held to the scope when the agent ends, and a change of the hosts' configuration
 * (`.claude/`, `.codex/`, gitignored files included) blocks the task.
 *
 * @since 0.5.0
 */
import type * as HostEvent from "./HostEvent.js"
import * as Shell from "./Shell.js"

/**
 * The program names of the hosts' CLIs (and their packages' base names).
 *
 * @since 0.5.0
 * @category constants
 */
export const hostPrograms: ReadonlyArray<string> = ["claude", "claude-code", "codex"]

/** The hosts' packages, as a path to their files names them. */
const hostPackages: ReadonlyArray<string> = ["@anthropic-ai/claude-code", "@openai/codex"]

/** `name` as a filesystem that folds case runs it, without a version (`@latest`) or a Windows suffix. */
const programName = (name: string): string => name.toLowerCase().replace(/@[^/]*$/, "").replace(/\.(exe|cmd|bat|ps1)$/, "")

/**
 * Why the runner's agent may not run `call` (a nested host, or a command that cannot be read), or
 * null for any other call.
 *
 * @since 0.5.0
 * @category guards
 */
export const refusal = (call: HostEvent.ToolCall): { readonly reason: string; readonly fix: string } | null => {
  if (call.action._tag !== "Shell") return null
  const shell = Shell.classify(call.action.command)
  const started = shell.programs.find((program) => hostPrograms.includes(programName(program)))
  const script = started === undefined
    ? shell.scripts.find((script) => hostPackages.some((name) => script.toLowerCase().includes(name)))
    : undefined
  if (started !== undefined || script !== undefined) {
    return {
      reason: `the command starts ${started !== undefined ? `${started}, a host's CLI` : `a host's CLI from its package (${script!.slice(0, 200)})`}: an agent it started would run without the run's hooks, capability and scope.`,
      fix: "Do the work in this session. An agent step's agent does not start other agents; a person may, in a terminal."
    }
  }
  if (shell.opaque.length > 0) {
    return {
      reason: `Ratchet cannot read the command completely (${shell.opaque[0]!.slice(0, 300)}), so it cannot tell that it starts no other agent.`,
      fix: "Run the programs by name with literal arguments (no computed program names, no code handed to an interpreter); put longer logic in a script file in the task's scope."
    }
  }
  return null
}
