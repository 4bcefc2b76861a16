/**
 * `@ratchet/memory` — Ratchet's lessons (ADR 0031, ADR 0033): the `Lessons` service, whose one
 * command handler runs every change through the kernel's `LessonDecider` and appends it to the
 * lesson's stream in the store, and the query that hands an agent the few verified lessons that
 * apply to its task. It depends on the kernel and the storage ports only.
 *
 * @since 0.3.0
 */

/** @since 0.3.0 */
export * as Lessons from "./Lessons.js"
