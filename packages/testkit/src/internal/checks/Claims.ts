/**
 * The task claims' conformance checks (group `claims`, ADR 0042): what `TaskClaims` promises to one
 * process, whatever the engine, so that the local claims (SQLite, memory) and PostgreSQL's
 * advisory locks cannot drift apart.
 *
 * - claims.exclusive: a claim excludes a second claim of the same task by the same process (claims
 *   are not re-entrant: a second `tryClaim` is `false`, and one release frees the task);
 * - claims.independent: other tasks and other projects are other claims;
 * - claims.release: releasing a task one does not hold changes nothing, twice included;
 * - claims.concurrent: of 8 fibers claiming one task at once exactly one wins.
 *
 * Claims across processes (a second runner kept off, a claim ending with its holder) are the
 * engine's own tests: a local store's claims are per process by design.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { randomBytes } from "node:crypto"
import * as TaskClaims from "@ratchet/storage/TaskClaims"
import { type Check, ConformanceViolation } from "./Kit.js"

/** An id no other check or run uses. */
const freshId = (label: string) => `${label}-${randomBytes(6).toString("hex")}`

const violation = (promise: string, detail: string) => new ConformanceViolation({ promise, detail })

/** The store's claims, or a violation naming the fix when the layer provides none. */
const claimsOf = Effect.flatMap(Effect.serviceOption(TaskClaims.TaskClaims), (found) =>
  Option.match(found, {
    onNone: () =>
      Effect.fail(violation(
        "the store provides TaskClaims",
        "the layer provides no TaskClaims; a store whose runners share one machine provides TaskClaims.layerLocal (merge it into the layer), one shared by machines its own."
      )),
    onSome: Effect.succeed
  }))

const expectClaim = (promise: string, what: string, claims: TaskClaims.Service, project: string, task: string, expected: boolean) =>
  Effect.flatMap(claims.tryClaim(project, task), (claimed) =>
    claimed === expected ? Effect.void : Effect.fail(violation(promise, `${what}: tryClaim answered ${claimed}, expected ${expected}`)))

const check = (id: string, title: string, run: Check["run"]): Check => ({ id, group: "claims", title, run })

const exclusive = check(
  "claims.exclusive",
  "a claim excludes a second claim of the same task by the same process, and one release frees it",
  Effect.gen(function*() {
    const promise = "a claim is exclusive and not re-entrant"
    const claims = yield* claimsOf
    const project = freshId("p")
    const task = freshId("t")
    yield* expectClaim(promise, "the first claim", claims, project, task, true)
    yield* expectClaim(promise, "a second claim while held", claims, project, task, false)
    yield* claims.release(project, task)
    yield* expectClaim(promise, "a claim after one release", claims, project, task, true)
    yield* claims.release(project, task)
  })
)

const independent = check(
  "claims.independent",
  "other tasks and other projects are other claims",
  Effect.gen(function*() {
    const promise = "claims of other tasks and projects are independent"
    const claims = yield* claimsOf
    const project = freshId("p")
    const other = freshId("p")
    const task = freshId("t")
    yield* expectClaim(promise, "the task", claims, project, task, true)
    yield* expectClaim(promise, "another task of the project", claims, project, freshId("t"), true)
    yield* expectClaim(promise, "the same task id in another project", claims, other, task, true)
    yield* claims.release(project, task)
  })
)

const release = check(
  "claims.release",
  "releasing a task one does not hold changes nothing, twice included",
  Effect.gen(function*() {
    const promise = "a release of what one does not hold changes nothing"
    const claims = yield* claimsOf
    const project = freshId("p")
    const task = freshId("t")
    yield* claims.release(project, task)
    yield* claims.release(project, task)
    yield* expectClaim(promise, "a claim after releases of an unheld task", claims, project, task, true)
    yield* expectClaim(promise, "a second claim after them", claims, project, task, false)
    // A release of another task leaves this one claimed.
    yield* claims.release(project, freshId("t"))
    yield* expectClaim(promise, "a claim after another task's release", claims, project, task, false)
    yield* claims.release(project, task)
  })
)

const concurrent = check(
  "claims.concurrent",
  "of 8 fibers claiming one task at once exactly one wins",
  Effect.gen(function*() {
    const claims = yield* claimsOf
    const project = freshId("p")
    const task = freshId("t")
    const answers = yield* Effect.all(Array.from({ length: 8 }, () => claims.tryClaim(project, task)), { concurrency: "unbounded" })
    const won = answers.filter((claimed) => claimed).length
    if (won !== 1) return yield* Effect.fail(violation("one claimant of concurrent claims wins", `${won} of 8 concurrent claims won`))
    yield* claims.release(project, task)
  })
)

/**
 * Every claims check, in the order the suite runs them.
 *
 * @since 0.5.0
 * @category testing
 */
export const checks: ReadonlyArray<Check> = [exclusive, independent, release, concurrent]
