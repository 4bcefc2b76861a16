/**
 * The bound on the refusals noted on an agent's attempt (ADR 0040's amendment), pure. Each tool
 * call the guard refuses the runner's agent is noted on its attempt (`RefuseEffect`), and a denied
 * agent may keep calling until its timeout: unbounded, its notes would fill the log. The first
 * {@link maxNotes} are noted, the last of them saying that later ones are not; the later ones are
 * refused just the same and noted nowhere but in the agent's transcript (its stream lists them).
 * The count is read from the attempt's events when a refusal comes; two refusals at once may both
 * read the same count, so the bound holds within the agent's parallel calls, not exactly.
 *
 * @since 0.4.0
 */
import type * as Event from "@ratchet/kernel/Event"
import * as Run from "@ratchet/kernel/Run"

/**
 * How many refusals an attempt notes.
 *
 * @since 0.4.0
 * @category constants
 */
export const maxNotes = 50

/**
 * The refusals noted on `target` among `events`.
 *
 * @since 0.4.0
 * @category constructors
 */
export const notedIn = (
  events: Iterable<Event.Event>,
  target: { readonly runId: string; readonly stepId: string; readonly attempt: number }
): number => {
  let noted = 0
  for (const event of events) {
    if (
      event._tag === "AttemptNoted" && event.runId === target.runId && event.stepId === target.stepId && event.attempt === target.attempt &&
      event.note.startsWith(Run.refusalNotePrefix)
    ) noted++
  }
  return noted
}

/**
 * What to write for one more refusal with `reason`, `noted` having been noted: a note, the last
 * note (its reason saying later ones are not noted), or nothing.
 *
 * @since 0.4.0
 * @category constructors
 */
export const next = (noted: number, reason: string): { readonly _tag: "Note"; readonly reason: string } | { readonly _tag: "Quiet" } => {
  if (noted < maxNotes - 1) return { _tag: "Note", reason }
  if (noted === maxNotes - 1) {
    return { _tag: "Note", reason: `${reason} (the ${maxNotes}th refusal noted on this attempt: later ones are refused without a note; the agent's transcript lists them)` }
  }
  return { _tag: "Quiet" }
}

/**
 * The description a refused call is noted with: the host's call id first, so that the check after
 * the agent's end (`AgentHooksRan`) can tell a call the hooks refused from one they never saw, and
 * so that clipping a long description never drops it.
 *
 * @since 0.5.0
 * @category constructors
 */
export const describeCall = (callId: string | null, description: string): string =>
  callId === null ? description : `${callPrefix}${callId}: ${description}`

const callPrefix = "call "

/**
 * The host's call ids the refusals noted on `target` among `events` name ({@link describeCall}).
 *
 * @since 0.5.0
 * @category constructors
 */
export const refusedCallIds = (
  events: Iterable<Event.Event>,
  target: { readonly runId: string; readonly stepId: string; readonly attempt: number }
): ReadonlySet<string> => {
  const ids = new Set<string>()
  const head = `${Run.refusalNotePrefix}${callPrefix}`
  for (const event of events) {
    if (
      event._tag !== "AttemptNoted" || event.runId !== target.runId || event.stepId !== target.stepId || event.attempt !== target.attempt ||
      !event.note.startsWith(head)
    ) continue
    const rest = event.note.slice(head.length)
    const end = rest.indexOf(": ")
    if (end > 0) ids.add(rest.slice(0, end))
  }
  return ids
}
