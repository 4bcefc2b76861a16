/**
 * The runner process: `ratchet-runner <task> [--takeover]` runs one task's approved plan until it
 * has no work the runner can do by itself; `ratchet-runner --any [--takeover-expired]` keeps taking
 * the project's runnable tasks whose lease is free (or expired), each one claimed first so that
 * runners of one store share the work (`RunAny`, ADR 0042), until none is left. It prints
 * progress (NDJSON with `--json`, ending with one `result` line) and exits: 0 when the run reached
 * VERIFYING, a manual step, a pause or a cancel; 3 when the task is BLOCKED; 4 when another writer
 * holds the lease; 2 for invalid input; 1 for anything unexpected. No daemon is left behind.
 *
 * With `--until-verified` (ADR 0041) it then verifies the task as the unattended verifier, whose key
 * `RATCHET_VERIFIER_KEY` it unlocks before anything runs, runs the successors a REVISE schedules,
 * and completes the task once a pass is APPROVED; exit 3 when it stops BLOCKED or with the
 * verification holding. The passphrase comes over the descriptor `--verifier-passphrase-fd` names
 * (`ratchet run` writes it there), else from the file `RATCHET_VERIFIER_PASSPHRASE_FILE` names;
 * never from a variable (every process of the user reads a process's environment). No step, agent
 * or check it starts gets a verifier variable, and in the loop each runs in a sandbox
 * (`ChildSandbox`, ADR 0043) that cannot see this process, with the key file and the passphrase
 * file (whose path follows the passphrase on the pipe) read as empty; without a working bubblewrap
 * the loop is refused before anything runs.
 *
 * `RATCHET_FAULT=<point>` (a test facility) makes the runner kill itself with SIGKILL at that
 * durable boundary; see `Runner.faultPoints`.
 *
 * @since 0.1.0
 */
import { parseArgs } from "node:util"
import * as CheckoutLock from "@ratchet/controller/CheckoutLock"
import * as ChildSandbox from "@ratchet/controller/ChildSandbox"
import * as Colour from "@ratchet/controller/Colour"
import * as GitSettings from "@ratchet/controller/GitSettings"
import * as ControllerError from "@ratchet/controller/ControllerError"
import * as Invoker from "@ratchet/controller/Invoker"
import * as RunAny from "@ratchet/controller/RunAny"
import * as Runner from "@ratchet/controller/Runner"
import * as RunRequest from "@ratchet/controller/RunRequest"
import * as Tracing from "@ratchet/controller/Tracing"
import * as UntilVerified from "@ratchet/controller/UntilVerified"
import * as VerifierKey from "@ratchet/controller/VerifierKey"
import * as Workspace from "@ratchet/controller/Workspace"
import type * as Event from "@ratchet/kernel/Event"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Progress from "./Progress.js"
import * as AgentHooks from "./AgentHooks.js"
import * as Wiring from "./Wiring.js"

const exitCodeOf: Record<ControllerError.ExitClass, number> = { unexpected: 1, invalid: 2, hold: 3, conflict: 4 }

const usage = "Usage: ratchet-runner <task> [--takeover] [--until-verified [--verifier-passphrase-fd <n>]] [--json] [--no-color] [-C <dir>]\n       ratchet-runner --any [--takeover-expired] [--json] [--no-color] [-C <dir>]"

/** The fault point named by `RATCHET_FAULT` (null when unset), or why it names none. */
const faultPoint = (): { readonly point: Runner.FaultPoint | null } | { readonly invalid: string } => {
  const raw = process.env["RATCHET_FAULT"]
  if (raw === undefined || raw === "") return { point: null }
  return (Runner.faultPoints as ReadonlyArray<string>).includes(raw)
    ? { point: raw as Runner.FaultPoint }
    : { invalid: `RATCHET_FAULT=${JSON.stringify(raw.slice(0, 60))} is not a fault point; use one of ${Runner.faultPoints.join(", ")}, or unset it.` }
}

/** Who asks for a pause with Ctrl-C: the person at this terminal. */
const interrupter = (): Event.Actor => ({ kind: "user", id: Invoker.login() })

const errorJson = (error: unknown): Record<string, unknown> => {
  if (typeof error === "object" && error !== null) {
    const fields: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(error)) if (key !== "stack" && key !== "cause") fields[key] = value
    return { ...fields, _tag: (error as { _tag?: unknown })._tag ?? "Error", message: (error as { message?: unknown }).message }
  }
  return { _tag: "Error", message: String(error) }
}

const exitOf = (outcome: Runner.Outcome | UntilVerified.Outcome): number =>
  outcome.stop === "blocked" || ("passes" in outcome && outcome.stop === "verifying") ? 3 : 0

/**
 * Runs the runner with `argv`; resolves to the exit code.
 *
 * @since 0.1.0
 * @category main
 */
export const run = async (argv: ReadonlyArray<string>): Promise<number> => {
  const json = argv.includes("--json")
  const say = (text: string) => process.stderr.write(`${text}\n`)
  const failWith = (code: number, error: unknown): number => {
    const tag = (error as { _tag?: unknown })._tag
    // The lease manager speaks of `ratchet lease takeover`; a run takes a dead runner's lease over itself.
    const task = (error as { taskId?: unknown }).taskId
    const named = typeof task === "string" ? task : "<task>"
    const hint = tag === "@ratchet/lease/LeaseHeld" || tag === "@ratchet/lease/TakeoverTooEarly"
      ? `If the holder is a runner that died, wait for its grace deadline, then: ratchet run ${named} --takeover (ratchet lease show ${named} shows the deadline).`
      : null
    if (json) process.stdout.write(`${JSON.stringify({ type: "result", ok: false, exitCode: code, error: errorJson(error), ...(hint === null ? {} : { hint }) })}\n`)
    else say(`error: ${String((error as { message?: unknown }).message ?? error)}${hint === null ? "" : `\n${hint}`}`)
    return code
  }
  let parsed
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        any: { type: "boolean" },
        takeover: { type: "boolean" },
        "until-verified": { type: "boolean" },
        [VerifierKey.passphraseFdOption]: { type: "string" },
        "takeover-expired": { type: "boolean" },
        json: { type: "boolean" },
        cwd: { type: "string", short: "C" },
        "no-color": { type: "boolean" },
        help: { type: "boolean", short: "h" }
      }
    })
  } catch (error) {
    return failWith(2, { _tag: "UsageError", message: `${error instanceof Error ? error.message : String(error)}\n${usage}` })
  }
  if (parsed.values.help === true) {
    process.stdout.write(`${usage}\n\nRuns an approved plan's steps; see \`ratchet run --help\`.\n`)
    return 0
  }
  const any = parsed.values.any === true
  const taskId = parsed.positionals[0]
  if ((any && taskId !== undefined) || (!any && taskId === undefined) || parsed.positionals.length > 1) {
    return failWith(2, { _tag: "UsageError", message: `give one task, or --any.\n${usage}` })
  }
  if (any && parsed.values.takeover === true) {
    return failWith(2, { _tag: "UsageError", message: `--takeover names one task's lease; with --any use --takeover-expired.\n${usage}` })
  }
  // The verifier's variables are read once and never left for a child to inherit (ADR 0041); the
  // passphrase itself comes over a pipe from `ratchet run`, read before anything else runs.
  const secrets = { ...process.env }
  for (const name of VerifierKey.childVariables) delete process.env[name]
  const fdOption = parsed.values[VerifierKey.passphraseFdOption]
  let piped: string | null = null
  // The passphrase file's path, which `ratchet run` sends after the passphrase: hidden from the loop's children.
  let pipedFile: string | null = null
  if (fdOption !== undefined) {
    const fd = Number(fdOption)
    if (!/^[0-9]+$/.test(fdOption) || fd < 3) {
      return failWith(2, { _tag: "UsageError", message: `--${VerifierKey.passphraseFdOption} ${fdOption} is not an inherited descriptor (3 or more).\n${usage}` })
    }
    const read = VerifierKey.readPassphraseFd(fd)
    if (Either.isLeft(read)) return failWith(2, read.left)
    piped = read.right.passphrase
    pipedFile = read.right.file
  }
  const untilVerified = parsed.values["until-verified"] === true
  if (untilVerified && any) {
    return failWith(2, { _tag: "UsageError", message: `--until-verified names one task.\n${usage}` })
  }
  const faultSetting = faultPoint()
  if ("invalid" in faultSetting) return failWith(2, { _tag: "UsageError", message: faultSetting.invalid })
  const fault = faultSetting.point
  const home = Wiring.home()
  const sink = json ? Progress.ndjson(process.stdout) : Progress.human(process.stderr, Colour.forStream(process.stderr, parsed.values["no-color"] === true))
  // The runner acts for whoever started it (RATCHET_ACTOR or the login name): that identity is a
  // worker of the run, so it cannot verify it (ADR 0012).
  const invoker = Invoker.parse(process.env["RATCHET_ACTOR"])
  if (Either.isLeft(invoker)) {
    return failWith(2, { _tag: "UsageError", message: `RATCHET_ACTOR: ${invoker.left.reason} ${invoker.left.fix}` })
  }
  const actor = Invoker.runnerFor(invoker.right)
  // A passphrase file a runner started directly reads may be neither in the workspace nor in the home.
  const places: VerifierKey.Places = { home, workspace: VerifierKey.workspaceOf(parsed.values.cwd ?? process.cwd()) }
  // Without a key that can sign, --until-verified is refused before anything runs (fail closed).
  const verifier = untilVerified ? VerifierKey.unlock(secrets, piped, places) : null
  if (verifier !== null && Either.isLeft(verifier)) return failWith(2, verifier.left)

  // Ctrl-C asks for a pause at the next step boundary; a second one stops at once (recovery then
  // deals with what was left open, after the lease's grace).
  const running = new Set<string>()
  let interrupts = 0
  const onInterrupt = () => {
    interrupts += 1
    if (interrupts > 1) process.exit(130)
    say("pausing after the current step; press Ctrl-C again to stop now")
    for (const id of running) {
      RunRequest.write(home, id, { kind: "pause", reason: "interrupted from the terminal (Ctrl-C)", actor: interrupter(), at: Date.now() })
    }
  }
  process.on("SIGINT", onInterrupt)
  process.on("SIGTERM", onInterrupt)

  // The loop's children run in a sandbox that hides the verifier's files (ADR 0043); it is made,
  // and tried once, before the loop starts, and refuses the loop when it cannot be.
  const sandboxFor = () => {
    // A passphrase that came without its file's path leaves that file unhidden: refused (fail closed).
    if (piped !== null && pipedFile === null && (secrets[VerifierKey.variables.passphraseFile] ?? "") === "") {
      return Effect.fail(
        new ControllerError.InvalidRequest({
          field: `--${VerifierKey.passphraseFdOption}`,
          reason: "the passphrase arrived without its file's path on the second line, so the loop's sandbox could not hide the file.",
          fix: "Start the loop with ratchet run <task> --until-verified, which sends both."
        })
      )
    }
    const made = ChildSandbox.make(process.env, [secrets[VerifierKey.variables.key] ?? "", secrets[VerifierKey.variables.passphraseFile] ?? pipedFile ?? ""])
    return Either.isLeft(made) ? Effect.fail(made.left) : Effect.succeed(made.right)
  }

  const options = (id: string, takeover: boolean): Runner.Options => ({
    taskId: id,
    takeover,
    actor,
    home,
    onProgress: sink.progress,
    agentHosts: Wiring.agentHosts,
    agentHooks: AgentHooks.installers(process.env),
    fault: (point) => {
      if (point === fault) process.kill(process.pid, "SIGKILL")
    }
  })

  const onPass = (pass: UntilVerified.Pass) => {
    if (json) process.stdout.write(`${JSON.stringify({ type: "verification", ...pass })}\n`)
    else say(`verification ${pass.round}: ${pass.outcome} — the task is ${pass.state}`)
  }
  // The loop runs when asked (--until-verified) or when the approved plan's profile asks for it
  // (profile.untilVerified); either way without a usable verifier key nothing runs, and a
  // passphrase in RATCHET_VERIFIER_PASSPHRASE refuses it (only then: a plain run ignores it).
  const verifierFor = (id: string) =>
    verifier !== null
      ? Effect.succeed(verifier.right)
      : Effect.flatMap(UntilVerified.profileOf(id), (profile) => {
        if (!UntilVerified.policy(profile)) return Effect.succeed(null)
        const inVariable = VerifierKey.variableRefusal(secrets)
        if (inVariable !== null) return Effect.fail(inVariable)
        const unlocked = VerifierKey.unlock(secrets, piped, places)
        return Either.isLeft(unlocked) ? Effect.fail(unlocked.left) : Effect.succeed(unlocked.right)
      })
  const one = (id: string, takeover: boolean) =>
    Effect.acquireUseRelease(
      Effect.sync(() => running.add(id)),
      () =>
        Effect.flatMap(verifierFor(id), (signer) =>
          signer === null
            ? Effect.map(Runner.run(options(id, takeover)), (outcome): Runner.Outcome | UntilVerified.Outcome => outcome)
            : Effect.flatMap(sandboxFor(), (sandbox) =>
              Effect.map(
                UntilVerified.run({ run: options(id, takeover), verifier: signer, invoker: invoker.right, personKey: VerifierKey.personKeyOf(secrets, home), sandbox, onPass }),
                (outcome): Runner.Outcome | UntilVerified.Outcome => outcome
              ))),
      () => Effect.sync(() => running.delete(id))
    )

  const cwd = parsed.values.cwd ?? process.cwd()
  const program = Effect.flatMap(Workspace.make.locate(cwd), (project) => {
    const single = any ? null : (taskId as string)
    const work = single !== null
      ? Effect.map(one(single, parsed.values.takeover === true), (outcome) => [outcome])
      : RunAny.loop({
        takeoverExpired: parsed.values["takeover-expired"] === true,
        run: one,
        stopping: () => interrupts > 0,
        say,
        // A checkout whose git settings a loop's children changed runs no more git (ADR 0045).
        stopsAfter: (outcome) => (GitSettings.isBlocker(outcome.blocker) ? "git's settings of this checkout changed; no other task runs here until a person has looked (ratchet status <task>)" : null)
      })
    // One runner per checkout: another one's changes would look like this one's steps'.
    const lock = CheckoutLock.hold(home, project.root, { takeover: parsed.values.takeover === true })
    return Effect.provide(Effect.scoped(Effect.zipRight(lock, work)), Wiring.services(project))
  })

  // The runner's span joins the trace of the `ratchet run` that started it (TRACEPARENT); spans
  // are exported only when the OTEL_* variables ask for it, and flushed for at most 3 s at exit.
  const traced = Tracing.root("ratchet-runner", { "ratchet.any": any, ...(taskId === undefined ? {} : { "ratchet.task": taskId }) }, program).pipe(
    Effect.provide(Tracing.layer("ratchet-runner", { shutdown: Duration.seconds(3) }))
  )
  const exit = await Effect.runPromiseExit(traced)
  process.off("SIGINT", onInterrupt)
  process.off("SIGTERM", onInterrupt)
  if (Exit.isSuccess(exit)) {
    const outcomes = exit.value
    const code = outcomes.reduce((worst, outcome) => Math.max(worst, exitOf(outcome)), 0)
    if (json) {
      process.stdout.write(`${JSON.stringify({ type: "result", ok: code === 0, exitCode: code, outcomes })}\n`)
    } else if (outcomes.length === 0) {
      say("No runnable task: nothing is PLAN_APPROVED or RUNNING with a free lease.")
    } else {
      for (const outcome of outcomes) say(`${outcome.taskId}: ${outcome.state} — ${outcome.message}`)
    }
    return code
  }
  const failure = Cause.failureOption(exit.cause)
  if (Option.isSome(failure)) return failWith(exitCodeOf[ControllerError.exitClassOf(failure.value)], failure.value)
  const defect = Cause.squash(exit.cause)
  if (argv.includes("--verbose")) say(Cause.pretty(exit.cause))
  return failWith(1, { _tag: "UnexpectedError", message: `unexpected: ${defect instanceof Error ? defect.message : String(defect)}` })
}
