/**
 * The shape of a benchmark and how one is measured.
 *
 * A benchmark is a *pair*: our code and the raw driver doing the same work in the same process,
 * on the same disk, with the same settings. The two sides alternate (ours first in even rounds,
 * raw first in odd ones) so that a slow moment of the machine, a filling page cache or a warming
 * JIT lands on both; each side's figure is the median over the rounds of its time per operation,
 * and the pair's result is the ratio ours / raw. One unrecorded warm-up round runs first.
 *
 * The figure is wall-clock time (`performance.now()`), which is what a user waits for. The process's
 * CPU time per operation is recorded beside it: on a busy machine wall time is inflated by waiting
 * for a CPU, CPU time much less so, and the two together tell disk-bound from CPU-bound costs.
 * Nothing here is ever asserted by a test.
 */
import { performance } from "node:perf_hooks"

/** One side of a pair: performs `operations` operations, then resolves. */
export type Side = (round: number, operations: number) => Promise<void>

/** Two ways of doing the same work, and how much of it to do per round. */
export interface Pair {
  /** Stable identifier, e.g. `sqlite/append-1/FULL`; the key in the JSON results. */
  readonly id: string
  /** What one operation is, for the table. */
  readonly operation: string
  readonly ours: Side
  readonly raw: Side
  readonly operationsPerRound: number
  /** The ratio ours / raw the pair must stay under. */
  readonly target: number
  /**
   * What the `raw` side is, for the table: `raw` (the driver doing the same work) unless the pair
   * compares against another system (`langgraph`, `dbos`) or another size of ours (`10^2 events`).
   */
  readonly baseline?: string | undefined
  /**
   * The target as the issue states it, when that is not "ours / raw ≤ target" (a throughput "≥ 0.5×"
   * is a time ratio ≤ 2); printed instead of `≤ target×`.
   */
  readonly targetText?: string | undefined
  /** How many events one operation writes (for the per-event column). */
  readonly eventsPerOperation: number
  /**
   * Untimed work before each timed call of a side, the warm-up's included: a pair whose operation
   * changes what it works on (a recovery writes to the store it recovers) puts back a fresh copy here.
   */
  readonly reset?: ((side: "ours" | "raw") => Promise<void>) | undefined
}

/** A benchmark file's export: it prepares its pairs (opening stores, creating tables) or skips. */
export interface Suite {
  readonly name: string
  readonly prepare: () => Promise<Prepared | Skipped>
}

export interface Prepared {
  readonly _tag: "Prepared"
  readonly pairs: ReadonlyArray<Pair>
  /** Facts about the engine for the report, e.g. its version. */
  readonly facts: Readonly<Record<string, string>>
  readonly close: () => Promise<void>
}

export interface Skipped {
  readonly _tag: "Skipped"
  readonly reason: string
}

/** What one pair measured. */
export interface PairResult {
  readonly id: string
  readonly operation: string
  readonly eventsPerOperation: number
  readonly rounds: number
  readonly operationsPerRound: number
  /** Milliseconds per operation, one entry per recorded round. */
  readonly oursMs: ReadonlyArray<number>
  readonly rawMs: ReadonlyArray<number>
  readonly oursMedianMs: number
  readonly rawMedianMs: number
  /** CPU time of this process per operation (user + system), medians: what contention does not inflate. */
  readonly oursCpuMs: ReadonlyArray<number>
  readonly rawCpuMs: ReadonlyArray<number>
  readonly oursCpuMedianMs: number
  readonly rawCpuMedianMs: number
  readonly ratio: number
  readonly target: number
  readonly baseline: string
  readonly targetText: string
  readonly met: boolean
}

export const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  if (sorted.length === 0) return Number.NaN
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

interface Timing {
  readonly wallMs: number
  readonly cpuMs: number
}

const timed = async (side: Side, round: number, operations: number): Promise<Timing> => {
  const cpu = process.cpuUsage()
  const start = performance.now()
  await side(round, operations)
  const wallMs = (performance.now() - start) / operations
  const used = process.cpuUsage(cpu)
  return { wallMs, cpuMs: (used.user + used.system) / 1000 / operations }
}

/** Runs a pair: one warm-up round, then `rounds` alternating rounds. */
export const measure = async (pair: Pair, rounds: number): Promise<PairResult> => {
  const warmUp = Math.max(1, Math.floor(pair.operationsPerRound / 4))
  // The pair's reset runs before the timer starts.
  const side = async (which: "ours" | "raw", round: number, operations: number) => {
    await pair.reset?.(which)
    return timed(which === "ours" ? pair.ours : pair.raw, round, operations)
  }
  await side("ours", -1, warmUp)
  await side("raw", -1, warmUp)
  const ours: Array<Timing> = []
  const raw: Array<Timing> = []
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) {
      ours.push(await side("ours", round, pair.operationsPerRound))
      raw.push(await side("raw", round, pair.operationsPerRound))
    } else {
      raw.push(await side("raw", round, pair.operationsPerRound))
      ours.push(await side("ours", round, pair.operationsPerRound))
    }
  }
  const oursMs = ours.map((timing) => timing.wallMs)
  const rawMs = raw.map((timing) => timing.wallMs)
  const oursCpuMs = ours.map((timing) => timing.cpuMs)
  const rawCpuMs = raw.map((timing) => timing.cpuMs)
  const oursMedianMs = median(oursMs)
  const rawMedianMs = median(rawMs)
  const ratio = oursMedianMs / rawMedianMs
  return {
    id: pair.id,
    operation: pair.operation,
    eventsPerOperation: pair.eventsPerOperation,
    rounds,
    operationsPerRound: pair.operationsPerRound,
    oursMs,
    rawMs,
    oursMedianMs,
    rawMedianMs,
    oursCpuMs,
    rawCpuMs,
    oursCpuMedianMs: median(oursCpuMs),
    rawCpuMedianMs: median(rawCpuMs),
    ratio,
    target: pair.target,
    baseline: pair.baseline ?? "raw",
    targetText: pair.targetText ?? `≤ ${pair.target}×`,
    met: ratio <= pair.target
  }
}
