/**
 * Who is acting: `RATCHET_ACTOR=kind:id` when it is set (hosts set `agent:…`), otherwise the login
 * name as a person (`user:<login>`). The CLI records it on every write, and the runner acts for it
 * (its actor is `runner:<the invoker's id>`), so the identity that started a run is a worker of that
 * run and cannot be the verifier of record (ADR 0012).
 *
 * @since 0.1.0
 */
import * as os from "node:os"
import type * as Event from "@ratchet/kernel/Event"
import * as Either from "effect/Either"

/**
 * The actor kinds `RATCHET_ACTOR` may name.
 *
 * @since 0.1.0
 * @category constants
 */
export const kinds = ["user", "agent", "runner", "verifier", "system"] as const

/**
 * The login name of this process, or `uid-<n>` where there is no passwd entry (some containers).
 *
 * @since 0.1.0
 * @category constructors
 */
export const login = (): string => {
  try {
    return os.userInfo().username || "unknown"
  } catch {
    return `uid-${process.getuid?.() ?? "unknown"}`
  }
}

/**
 * The invoking actor from the value of `RATCHET_ACTOR` (unset or empty: the login name as a user),
 * or why the value is not one.
 *
 * @since 0.1.0
 * @category constructors
 */
export const parse = (raw: string | undefined): Either.Either<Event.Actor, { readonly reason: string; readonly fix: string }> => {
  if (raw === undefined || raw === "") return Either.right({ kind: "user", id: login() })
  // The id is printed in logs and on terminals: printable characters only, no spaces at the ends.
  const match = /^(user|agent|runner|verifier|system):([^\s\p{Cc}\p{Cf}](?:[^\p{Cc}\p{Cf}]{0,198}[^\s\p{Cc}\p{Cf}])?)$/u.exec(raw)
  if (match === null) {
    return Either.left({
      reason: `${JSON.stringify(raw.slice(0, 80))} is not kind:id (an id of 1 to 200 printable characters).`,
      fix: `Set it to one of ${kinds.map((k) => `${k}:<id>`).join(", ")}, or unset it.`
    })
  }
  return Either.right({ kind: match[1] as (typeof kinds)[number], id: match[2] as string })
}

/**
 * The runner's actor when it acts for `invoker`: same id, kind `runner`. Workers are matched by
 * kind and id (`Gate.isWorker`), so this runner is a worker of the run it drives, and its id says
 * in the log who started it; a verifier's independence is judged on those workers.
 *
 * @since 0.1.0
 * @category constructors
 */
export const runnerFor = (invoker: Event.Actor): Event.Actor => ({ kind: "runner", id: invoker.id })
