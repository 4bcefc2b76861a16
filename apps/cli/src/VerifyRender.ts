/**
 * What `ratchet verify`, `ratchet done` and `ratchet evidence` print, and the terminal observer a
 * manual criterion is checked through. Text is for people; every value reaches `--json` unchanged.
 *
 * @since 0.1.0
 */
import type * as Completion from "@ratchet/controller/Completion"
import type * as Verify from "@ratchet/controller/Verify"
import type * as Event from "@ratchet/kernel/Event"
import * as Evidence from "@ratchet/verifier/Evidence"
import type * as Verification from "@ratchet/verifier/Verification"
import * as Verifier from "@ratchet/verifier/Verifier"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Render from "./Render.js"
import * as Terminal from "./Terminal.js"

const paint = (verdict: string, s: Render.Style): string =>
  verdict === "PASS" || verdict === "APPROVED"
    ? s.green(verdict)
    : verdict === "FAIL" || verdict === "REVISE"
    ? s.red(verdict)
    : s.yellow(verdict)

/**
 * One progress line of a verification pass.
 *
 * @since 0.1.0
 * @category rendering
 */
export const progress = (event: Verification.Progress, s: Render.Style): string => {
  const counter = `[${event.index + 1}/${event.total}]`
  if (event._tag === "CriterionStarted") {
    return `${s.dim(counter)} ${event.acId} — ${event.verifiers.length === 0 ? "no verifier applies" : event.verifiers.join(" + ")} …\n`
  }
  const { result } = event
  const reasons = result.judgements.map((judgement) => `${judgement.verifier}: ${judgement.reason}`)
  return `${s.dim(counter)} ${event.acId} ${paint(result.verdict.verdict, s)}${result.required ? "" : s.dim(" (optional)")}\n${
    reasons.map((reason) => `      ${Render.visible(reason)}\n`).join("")
  }`
}

/**
 * The summary after a pass.
 *
 * @since 0.1.0
 * @category rendering
 */
export const verified = (result: Verify.Result, s: Render.Style): string => {
  const lines: Array<string> = []
  for (const warning of result.warnings) lines.push(s.yellow(`warning: ${Render.visible(warning)}`))
  const { conclusion } = result
  if (result.notRecorded !== null) {
    // The verdicts were taken, but about an episode the task has left: nothing of them counts.
    lines.push(`Verification of ${result.taskId} (episode at LSN ${result.snapshotLsn}): ${s.yellow("not recorded")}`)
    lines.push(`  ${Render.visible(result.notRecorded)}`)
    lines.push(`${result.taskId}: ${s.bold(result.state)}`)
    return lines.join("\n")
  }
  lines.push(`Verification of ${result.taskId} (episode at LSN ${result.snapshotLsn}): ${paint(conclusion.outcome, s)}`)
  // An APPROVED pass can still leave the task BLOCKED (its checks changed the hosts' configuration).
  if (conclusion.outcome === "APPROVED" && result.state !== "BLOCKED") {
    lines.push(`The completion gate is CLEAR (READY_TO_COMPLETE). next: ratchet done ${result.taskId}`)
    return lines.join("\n")
  }
  for (const reason of conclusion.gate.reasons) lines.push(`  - ${Render.visible(reason.message)}`)
  lines.push(`${result.taskId}: ${s.bold(result.state)}`)
  if (conclusion.blocker !== null) lines.push(`next: ${Render.visible(conclusion.blocker.requiredAction)}`)
  else {
    const workers = result.workers.map((worker) => `${worker.kind}:${Render.visible(worker.id)}`).join(", ")
    const missing = conclusion.gate.requiredActions.map((action) => action.command).filter((command): command is string => command !== undefined)
    lines.push(
      `next: verify what is missing as an identity that did none of the run's work (not ${workers || "a worker"}): ${
        missing.length > 0 ? missing.join("; ") : `ratchet verify ${result.taskId}`
      }`
    )
  }
  return lines.join("\n")
}

/**
 * The summary of a completion.
 *
 * @since 0.1.0
 * @category rendering
 */
export const completed = (result: Completion.Result, s: Render.Style): string => {
  const lines = [
    result.reconciled
      ? `${result.taskId}: ${s.bold("COMPLETED")} (already; confirmed: terminal checkpoint recorded, no lease held)`
      : `${result.taskId}: ${s.bold("COMPLETED")} — terminal checkpoint, completion record and lease release committed together (LSN ${result.completedLsn})`
  ]
  const passed = new Map<string, Event.AcVerdict>()
  for (const verdict of result.verdicts) passed.set(verdict.acId, verdict)
  for (const verdict of passed.values()) lines.push(`  ${verdict.acId} ${paint(verdict.verdict, s)} by ${verdict.verifier.kind}:${Render.visible(verdict.verifier.id)}`)
  if (result.projection !== null) lines.push(s.dim(`projections: ${result.projection}`))
  for (const warning of result.warnings) lines.push(s.yellow(`warning: ${Render.visible(warning)}`))
  return lines.join("\n")
}

/**
 * One evidence record, in a few lines.
 *
 * @since 0.1.0
 * @category rendering
 */
export const evidence = (ref: string, record: Evidence.Evidence | null, s: Render.Style): string => {
  if (record === null) return `    ${ref} ${s.red("(cannot be read)")}`
  const head = `    ${s.dim(ref)} ${record._tag}, ${new Date(record.at).toISOString()}`
  switch (record._tag) {
    case "command":
      return [
        head,
        `      $ ${Render.visible(record.command)}`,
        record.notStarted !== null
          ? `      could not start: ${Render.visible(record.notStarted)}`
          : `      ${record.timedOut ? "timed out" : record.exitCode === null ? `ended by ${record.signal}` : `exit ${record.exitCode}`} (expected ${record.expectExitCode}), ${record.durationMs} ms, tree ${
            record.tree.head?.slice(0, 12) ?? "no commit"
          }${record.tree.dirtyDigest === "clean" ? "" : " + uncommitted changes"}`,
        ...(record.outputTail === "" ? [] : record.outputTail.split("\n").slice(-5).map((line) => `      ${s.dim("|")} ${Render.visible(line)}`))
      ].join("\n")
    case "junit":
      return [
        head,
        record.problem !== null
          ? `      ${Render.visible(record.report)}: ${Render.visible(record.problem)}`
          : `      ${Render.visible(record.report)}: ${record.counts.passed} passed, ${record.counts.failed} failed, ${record.counts.errored} errored, ${record.counts.skipped} skipped`,
        ...record.cases.filter((c) => c.status === "failed" || c.status === "errored").slice(0, 10).map((c) =>
          `      ${s.red(c.status)} ${Render.visible(c.suite === "" ? c.name : `${c.suite} › ${c.name}`)}${c.message === null ? "" : `: ${Render.visible(c.message.split("\n")[0] ?? "")}`}`
        )
      ].join("\n")
    case "artifact":
      return [
        head,
        ...record.artifacts.map((a) =>
          `      ${Render.visible(a.path)}: ${a.sha256 === null ? Render.visible(a.problem ?? "missing") : `sha256 ${a.sha256}, ${a.size} bytes${a.problem === null ? "" : ` — ${Render.visible(a.problem)}`}`}`
        )
      ].join("\n")
    case "manual":
      return [head, `      ${Render.visible(record.verifier.id)} (observer ${Render.visible(record.observer)}) observed ${record.result}${record.note === "" ? "" : `: ${Render.visible(record.note)}`}`].join(
        "\n"
      )
  }
}

/**
 * The person at this terminal as the observer of manual criteria, or no observer at all (the
 * criterion is then NOT_RUN) when nobody can be asked.
 *
 * @since 0.1.0
 * @category layers
 */
export const observer = (actor: Event.Actor): Layer.Layer<never> | Layer.Layer<Verifier.Observer> =>
  Terminal.channel() !== "terminal" || actor.kind !== "user"
    ? Layer.empty
    : Layer.succeed(Verifier.Observer, {
      observe: (request) =>
        Effect.gen(function*() {
          process.stderr.write(
            `\n${request.acId}: ${Render.visible(request.outcome)}\nProcedure (observer: ${Render.visible(request.observer)}):\n  ${
              Render.visible(request.procedure)
            }\n`
          )
          // One terminal session for both questions, so an answer typed ahead is not lost.
          const answers = yield* Terminal.askSeries(
            "Does it hold? Type pass or fail (anything else skips it): ",
            (answer, index) =>
              index === 0 && (answer.trim().toLowerCase() === "pass" || answer.trim().toLowerCase() === "fail")
                ? "A note for the record (what you saw), or Enter: "
                : null
          )
          const result = answers[0]?.trim().toLowerCase()
          if (result !== "pass" && result !== "fail") return null
          return { result, note: (answers[1] ?? "").trim().slice(0, 2000), actor } as const
        })
    })

/**
 * Evidence records by reference, each loaded (or `null` when unreadable).
 *
 * @since 0.1.0
 * @category constructors
 */
export type Loaded = ReadonlyArray<{ readonly ref: string; readonly record: Evidence.Evidence | null }>

/**
 * Blob bodies an evidence record points at, for `--show-output`.
 *
 * @since 0.1.0
 * @category getters
 */
export const bodiesOf = (record: Evidence.Evidence | null) => (record === null ? [] : Evidence.bodies(record))
