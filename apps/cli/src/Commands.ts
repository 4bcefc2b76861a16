/**
 * The command table: every `ratchet` command once, in the order `ratchet --help` lists them. The
 * commands themselves live in one module per family (authoring, approvals, the approvers, the run,
 * verification, reads, leases, hosts); each is a thin transport over the controller: it decodes
 * arguments, calls one controller operation and shapes the result for a person (text) or a
 * program (`--json`, a document of the controller's `Documents`).
 *
 * @since 0.1.0
 */
import * as Approvals from "./ApprovalCommands.js"
import * as Approvers from "./ApproverCommands.js"
import * as Authoring from "./AuthoringCommands.js"
import type { CommandSpec } from "./Command.js"
import * as Completion from "./CompletionCommand.js"
import * as Hosts from "./HostCommands.js"
import * as Leases from "./LeaseCommands.js"
import * as Lessons from "./LessonCommands.js"
import * as Reads from "./ReadCommands.js"
import * as Runs from "./RunCommands.js"
import * as Ui from "./UiCommand.js"
import * as Verification from "./VerifyCommands.js"
import * as Version from "./Version.js"

export type { CommandSpec, Env, Outcome } from "./Command.js"

/**
 * Every command, in the order `ratchet --help` lists them.
 *
 * @since 0.1.0
 * @category commands
 */
export const commands: ReadonlyArray<CommandSpec> = [
  Authoring.init,
  Authoring.taskCreate,
  Reads.taskList,
  Reads.status,
  Authoring.briefAsk,
  Authoring.briefAnswer,
  Authoring.briefRestate,
  Authoring.briefClose,
  Authoring.spec,
  Authoring.plan,
  Approvals.approve,
  ...Approvers.commands,
  Authoring.preflight,
  Runs.run,
  Verification.verify,
  Verification.done,
  Reads.evidence,
  Runs.stepDone,
  Runs.pause,
  Runs.resume,
  Runs.cancel,
  Approvals.reopen,
  Approvals.unblock,
  Approvals.rewind,
  Reads.gate,
  Reads.log,
  ...Leases.lease,
  Reads.stats,
  ...Lessons.commands,
  Ui.ui,
  Hosts.hook,
  ...Hosts.hooks,
  Hosts.mcp,
  Authoring.digest,
  Version.command,
  Completion.completion(() => commands)
]

/**
 * The command named by the leading words of `argv`, and the rest. `brief <task> <verb> …` is
 * rewritten to the `brief <verb>` command with the task first.
 *
 * @since 0.1.0
 * @category commands
 */
export const find = (argv: ReadonlyArray<string>): { readonly spec: CommandSpec; readonly rest: ReadonlyArray<string> } | null => {
  const [first, second, third, ...more] = argv
  if (first === "brief" && second !== undefined && third !== undefined && !second.startsWith("-")) {
    const spec = commands.find((c) => c.name === `brief ${third}`)
    if (spec !== undefined) return { spec, rest: [second, ...more] }
    // `ratchet brief ask --help`: help for the verb, typed without a task.
    const named = commands.find((c) => c.name === `brief ${second}`)
    const help = argv.slice(2).some((arg) => arg === "--help" || arg === "-h")
    return named === undefined || !help ? null : { spec: named, rest: argv.slice(2) }
  }
  const two = commands.find((c) => c.name === `${first} ${second}`)
  if (two !== undefined) return { spec: two, rest: argv.slice(2) }
  const one = commands.find((c) => c.name === first)
  return one === undefined ? null : { spec: one, rest: argv.slice(1) }
}
