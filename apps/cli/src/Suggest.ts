/**
 * "Did you mean": the closest of a few known words (commands, subcommands, options, choices) to a
 * mistyped one. Only called on the way to a usage error, and cheap to load: two small functions.
 *
 * @since 0.3.0
 */

/**
 * The optimal string alignment distance between `a` and `b`: Levenshtein's insertions, deletions
 * and substitutions, plus the swap of two adjacent characters (`lsit` → `list` is one edit), each
 * part of the text edited at most once. Counted in code points.
 *
 * @since 0.3.0
 * @category suggestions
 */
export const distance = (a: string, b: string): number => {
  const s = [...a]
  const t = [...b]
  // Three rows of the matrix are enough: the transposition looks two rows back.
  let before = new Array<number>(t.length + 1).fill(0)
  let previous = Array.from({ length: t.length + 1 }, (_, j) => j)
  for (let i = 1; i <= s.length; i++) {
    const current = new Array<number>(t.length + 1).fill(0)
    current[0] = i
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1
      let best = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost)
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) best = Math.min(best, before[j - 2]! + 1)
      current[j] = best
    }
    before = previous
    previous = current
  }
  return previous[t.length]!
}

/** Longest word compared: anything longer is not a mistyped command or option. */
const maxLength = 64

/**
 * The one or two `candidates` closest to `typed`, best first, or none. A candidate is close when
 * it is at most one edit away (two for a word of four characters or more), ignoring case, or when
 * `typed` (two characters or more) begins it. Of the close ones, those at the best distance or one
 * more are kept (only the best when it differs in case alone), so a clear winner stands alone and
 * a near tie shows both.
 *
 * @since 0.3.0
 * @category suggestions
 */
export const closest = (typed: string, candidates: Iterable<string>): ReadonlyArray<string> => {
  const word = typed.toLowerCase()
  if (word === "" || word.length > maxLength) return []
  const limit = word.length >= 4 ? 2 : 1
  const close: Array<{ readonly candidate: string; readonly distance: number; readonly prefix: boolean; readonly order: number }> = []
  let order = 0
  for (const candidate of new Set(candidates)) {
    const lower = candidate.toLowerCase()
    const prefix = word.length >= 2 && lower.startsWith(word)
    const edits = distance(word, lower)
    if (edits <= limit || prefix) close.push({ candidate, distance: edits, prefix, order: order++ })
  }
  close.sort((x, y) => x.distance - y.distance || Number(y.prefix) - Number(x.prefix) || x.order - y.order)
  const best = close[0]?.distance ?? 0
  // Only the case differs (`Status`): that is the one meant.
  const within = best === 0 ? 0 : best + 1
  return close.filter((c) => c.distance <= within).slice(0, 2).map((c) => c.candidate)
}

/**
 * "Did you mean ratchet task list?" / "… --json or --verbose?", or `""` when there is nothing to
 * suggest.
 *
 * @since 0.3.0
 * @category suggestions
 */
export const didYouMean = (suggestions: ReadonlyArray<string>, prefix = ""): string =>
  suggestions.length === 0 ? "" : `Did you mean ${suggestions.map((s) => `${prefix}${s}`).join(" or ")}?`
