/**
 * The storage conformance suite: one function of a store layer that proves, through the port
 * only, every promise `@ratchet/storage` makes. Every store layer in this repository runs it (the
 * SQLite default, PostgreSQL), and a third party runs it against their own to swap stores with
 * proof.
 *
 * A backend writes two files. The test file (a vitest test, e.g. `test/conformance.test.ts`):
 *
 * ```ts
 * import { StorageFaults } from "@ratchet/testkit"
 * import { StorageConformance } from "@ratchet/testkit/vitest"
 * import * as Layer from "effect/Layer"
 * import { MyStore } from "my-store"
 *
 * const fresh = () => mkdtempSync(join(tmpdir(), "my-store-"))
 * StorageConformance.suite("MyStore", () => { const dir = fresh(); return Layer.merge(MyStore.layer({ dir }), StorageFaults.fileBlobs(dir)) }, {
 *   processes: { share: () => { const dir = fresh(); return { layer: MyStore.layer({ dir }), child: StorageConformance.tsxChild(new URL("./child.ts", import.meta.url), { MY_STORE_DIR: dir }) } } }
 * })
 * ```
 *
 * and the child script the multi-process checks start (`test/child.ts`):
 *
 * ```ts
 * import { runChild } from "@ratchet/testkit/StorageChild"
 * import { MyStore } from "my-store"
 * runChild(MyStore.layer({ dir: process.env["MY_STORE_DIR"]! }))
 * ```
 *
 * `makeLayer` is called once per group of checks, so each group gets a fresh store; checks inside
 * a group share it and keep to streams of their own. `processes.share` is called once per
 * multi-process check for a fresh store that this process and its children open together.
 *
 * The checks, by group (ids in parentheses, for `skip`):
 * - append: creation on main (append.create), atomic batches (append.atomic), expected version
 *   conflicts naming the current version (append.expected-version), 8 concurrent appends with one
 *   winner (append.concurrent), the project fixed per stream (append.project), missing branches
 *   (append.unknown-branch);
 * - invalid: bad ids, empty batches and bad versions are InvalidRequest naming the field and
 *   write nothing (invalid.ids, invalid.shape);
 * - fencing: lease acquire / held / takeover / release epoch rules, on every branch (lease.*);
 * - operations: replay returns the first result and writes nothing, even after the version and
 *   epoch moved (operation.replay); a reused id is OperationReused (operation.reused);
 * - lsn: global strictly increasing LSNs, sequential and concurrent (lsn.global, lsn.concurrent);
 * - read: inclusive LSN ranges and paging (read.range, read.paging);
 * - branches: fork semantics, nested forks, BranchExists and invalid fork LSNs (fork.*);
 * - read models: per-append updates, forks, listing, and random histories where the stored read
 *   models equal the cold rebuild after every append (readmodels.*);
 * - blobs: content addressing, dedup, missing, hostile refs, hash verification (blob.*; the last
 *   needs a `StorageFaults` service in the layer);
 * - lessons: the lesson store's streams, read model and search (lesson.*; see `LessonChecks`);
 * - claims: `TaskClaims` within one process — exclusive and not re-entrant, independent per task and
 *   project, releases of unheld tasks change nothing, one winner of concurrent claims (claims.*);
 *   a store without claims of its own merges `TaskClaims.layerLocal` into its layer;
 * - processes: real OS processes opening a fresh store at once, racing one expected version, and
 *   writing under a fenced epoch (processes.*).
 *
 * A failing check reports a `ConformanceViolation`: the promise broken, the first place the store's
 * answer differs from the expected one (`path: expected …, got …`), and for random histories the
 * fast-check seed and the shrunk script that reproduces it.
 *
 * @since 0.1.0
 */
import { describe, it, layer } from "@effect/vitest"
import type * as Layer from "effect/Layer"
import * as LessonChecks from "./LessonChecks.js"
import * as StorageChecks from "./StorageChecks.js"
import type { ProcessHarness, Services } from "./StorageChild.js"

/**
 * @since 0.1.0
 * @category models
 */
export type { ChildCommand, ProcessHarness, Services, SharedStore } from "./StorageChild.js"

/**
 * @since 0.1.0
 * @category constructors
 */
export { tsxChild } from "./StorageChild.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** How the multi-process checks share a store with child processes. */
  readonly processes: ProcessHarness
  /**
   * The random histories of `readmodels.random`: how many (default 25; more find more, each
   * costs appends), and the `seed`/`path` a failure prints, to replay exactly that failure.
   */
  readonly histories?: StorageChecks.HistoryOptions
  /** Child processes per multi-process check (default 6). */
  readonly children?: number
  /** Check ids to skip; each shows as skipped, so the gap is visible in every run. */
  readonly skip?: ReadonlyArray<string>
  /** Milliseconds per check when the check sets none (default 60,000). */
  readonly timeout?: number
}

const groupOrder = (checks: ReadonlyArray<StorageChecks.Check>): ReadonlyArray<string> => [...new Set(checks.map((check) => check.group))]

/**
 * Registers the whole suite as a vitest `describe` block named `name`.
 *
 * @since 0.1.0
 * @category testing
 */
export const suite = (
  name: string,
  makeLayer: () => Layer.Layer<Services, unknown>,
  options: Options
): void => {
  const skip = new Set(options.skip ?? [])
  const timeout = options.timeout ?? 60_000
  const checks: ReadonlyArray<StorageChecks.Check> = [...StorageChecks.checks({ histories: options.histories }), ...LessonChecks.checks]
  describe(name, () => {
    for (const group of groupOrder(checks)) {
      layer(makeLayer(), { excludeTestServices: true })(group, (it) => {
        for (const check of checks.filter((candidate) => candidate.group === group)) {
          const register = skip.has(check.id) ? it.effect.skip : it.effect
          register(`${check.id}: ${check.title}`, () => check.run, check.timeout ?? timeout)
        }
      })
    }
    describe("processes", () => {
      for (const check of StorageChecks.processChecks) {
        const register = skip.has(check.id) ? it.scopedLive.skip : it.scopedLive
        register(`${check.id}: ${check.title}`, () => check.run(options.processes, options.children ?? 6), Math.max(timeout, 600_000))
      }
    })
  })
}
