/**
 * The stand-in host programs: plain ESM scripts (`stand-in/*.mjs` of this package, run with node)
 * that behave like the `claude` and `codex` CLIs as Ratchet's runner starts them — they check the
 * flags, write streams in each host's format (held to the hosts' published types by the adapters'
 * tests), edit files, make tool calls through the real hooks, succeed, fail, hang, crash mid-stream
 * and print garbage, as their environment asks — so a host's vendor or a user can drive Ratchet's
 * agent steps without a model. Point `RATCHET_CLAUDE_BIN` / `RATCHET_CODEX_BIN` at `claude` /
 * `codex`; the behaviours and their variables are in this package's README.
 *
 * Also here: `sameShape`, the check that holds a line a stand-in writes to a golden line typed by
 * the host's published types.
 *
 * @since 0.5.0
 */
import { fileURLToPath } from "node:url"

const at = (file: string): string => fileURLToPath(new URL(`../stand-in/${file}`, import.meta.url))

/**
 * The stand-in `claude` (Claude Code's `claude -p … --output-format stream-json --verbose`).
 *
 * @since 0.5.0
 * @category paths
 */
export const claude: string = at("claude.mjs")

/**
 * The stand-in `codex` (Codex's `codex exec --json --sandbox workspace-write …`).
 *
 * @since 0.5.0
 * @category paths
 */
export const codex: string = at("codex.mjs")

/**
 * The leak probe (`node probe.mjs <label> <dir> <needles.json>`): looks for secrets in the
 * environment and command line of every process it can read.
 *
 * @since 0.5.0
 * @category paths
 */
export const probe: string = at("probe.mjs")

/**
 * The names `STAND_IN_STREAM` takes.
 *
 * @since 0.5.0
 * @category models
 */
export const streams = ["success", "error", "truncated", "crash", "garbage"] as const

/**
 * @since 0.5.0
 * @category models
 */
export type Stream = (typeof streams)[number]

/**
 * The file of a stand-in's stream (what `STAND_IN_STREAM=<name>` prints; `crash` prints `truncated`'s).
 *
 * @since 0.5.0
 * @category paths
 */
export const streamFile = (host: "claude" | "codex", name: Stream): string =>
  at(name === "garbage" ? "streams/garbage.txt" : `streams/${host}.${name === "crash" ? "truncated" : name}.jsonl`)

const kindOf = (value: unknown): string =>
  value === null ? "null" : Array.isArray(value) ? "array" : typeof value

/**
 * Why `actual` does not have the shape of `sample` (null when it has): the same kind of value at
 * every path, objects with the same keys, and every element of an array with the shape of some
 * element of the sample's array (an empty sample array takes only an empty array).
 *
 * @since 0.5.0
 * @category checks
 */
export const shapeMismatch = (actual: unknown, sample: unknown, path = "$"): string | null => {
  const kind = kindOf(actual)
  if (kind !== kindOf(sample)) return `${path}: ${kind} where the sample has ${kindOf(sample)}`
  if (kind === "array") {
    const samples = sample as ReadonlyArray<unknown>
    for (const [index, element] of (actual as ReadonlyArray<unknown>).entries()) {
      const misses = samples.map((one) => shapeMismatch(element, one, `${path}[${index}]`))
      if (!misses.includes(null)) return misses[0] ?? `${path}[${index}]: the sample's array is empty`
    }
    return null
  }
  if (kind !== "object") return null
  const mine = Object.keys(actual as object).sort()
  const theirs = Object.keys(sample as object).sort()
  const extra = mine.filter((key) => !theirs.includes(key))
  const missing = theirs.filter((key) => !mine.includes(key))
  if (extra.length > 0 || missing.length > 0) {
    return `${path}: ${[...extra.map((key) => `unexpected ${key}`), ...missing.map((key) => `missing ${key}`)].join(", ")}`
  }
  for (const key of mine) {
    const miss = shapeMismatch((actual as Record<string, unknown>)[key], (sample as Record<string, unknown>)[key], `${path}.${key}`)
    if (miss !== null) return miss
  }
  return null
}

/**
 * Why `actual` has the shape of none of `samples` (null when it has one's): the first sample's
 * mismatch, or a note that there is no sample.
 *
 * @since 0.5.0
 * @category checks
 */
export const sameShape = (actual: unknown, samples: ReadonlyArray<unknown>): string | null => {
  if (samples.length === 0) return "no golden line of this kind"
  const misses = samples.map((sample) => shapeMismatch(actual, sample))
  return misses.includes(null) ? null : misses[0] ?? null
}
