/**
 * `@ratchet/kernel` — Ratchet's pure core. Every module is a namespace:
 *
 * ```ts
 * import { Attempt, Intent, Turn, Task, Gate, Digest, Event } from "@ratchet/kernel"
 * ```
 *
 * Nothing here performs I/O, reads a clock or generates randomness: time and identifiers
 * arrive inside commands, so every function is deterministic and replayable.
 *
 * @since 0.1.0
 */

/** @since 0.4.0 */
export * as AgentStep from "./AgentStep.js"
/** @since 0.2.0 */
export * as Approvers from "./Approvers.js"
/** @since 0.1.0 */
export * as Attempt from "./Attempt.js"
/** @since 0.2.0 */
export * as Authority from "./Authority.js"
/** @since 0.2.0 */
export * as Decider from "./Decider.js"
/** @since 0.1.0 */
export * as Digest from "./Digest.js"
/** @since 0.1.0 */
export * as Event from "./Event.js"
/** @since 0.3.0 */
export * as Fingerprint from "./Fingerprint.js"
/** @since 0.1.0 */
export * as Gate from "./Gate.js"
/** @since 0.3.0 */
export * as Glob from "./Glob.js"
/** @since 0.1.0 */
export * as Intent from "./Intent.js"
/** @since 0.3.0 */
export * as Lesson from "./Lesson.js"
/** @since 0.3.0 */
export * as LessonDecider from "./LessonDecider.js"
/** @since 0.3.0 */
export * as LessonEvent from "./LessonEvent.js"
/** @since 0.3.0 */
export * as LessonRules from "./LessonRules.js"
/** @since 0.1.0 */
export * as Plan from "./Plan.js"
/** @since 0.2.0 */
export * as Progress from "./Progress.js"
/** @since 0.2.0 */
export * as Run from "./Run.js"
/** @since 0.2.0 */
export * as Signature from "./Signature.js"
/** @since 0.1.0 */
export * as Spec from "./Spec.js"
/** @since 0.1.0 */
export * as Task from "./Task.js"
/** @since 0.3.0 */
export * as TaskFold from "./TaskFold.js"
/** @since 0.1.0 */
export * as Turn from "./Turn.js"
