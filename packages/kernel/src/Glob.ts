/**
 * Globs over repository-relative paths: whether a pattern covers a path, and whether a pattern
 * written by someone else stays inside the repository. Scope entries of a spec (`execution.
 * allowedScope`, `forbiddenScope`), the guard's checks of a tool call and a lesson's scope are all
 * matched here, so a path means the same thing to each of them. Pure; no file system is read.
 *
 * Patterns, matched against `/`-separated relative paths:
 * - a plain path matches itself and everything under it (`src` and `src/` cover `src/a/b.ts`);
 * - `*` matches within one path segment, `?` one character of a segment, `**` any number of
 *   segments (zero included), `[abc]` one of a set, `{a,b}` either alternative.
 *
 * @since 0.3.0
 */

// Patterns come from a spec anyone may write, so they are matched by an automaton simulated over
// the path (time proportional to the pattern's length times the path's), never by a backtracking
// regular expression: `*a*a*a*a*a*a*a*a*a*b` against a long name must not hang the runner.

/** A state of the automaton: consume one character that passes `test`, an ε-fork, or the end. */
type State =
  | { readonly _tag: "Char"; readonly test: (char: string) => boolean; out: number }
  | { readonly _tag: "Split"; readonly out: Array<number> }
  | { readonly _tag: "Match" }

/** A parsed pattern: a sequence of single characters, wildcards and `{…}` alternatives. */
type Node =
  | { readonly _tag: "Char"; readonly test: (char: string) => boolean }
  | { readonly _tag: "Star" | "Any" | "Segments" }
  | { readonly _tag: "Alt"; readonly alternatives: ReadonlyArray<ReadonlyArray<Node>> }

const notSlash = (char: string) => char !== "/"
const anyChar = () => true

/**
 * `[…]` at `i`: its character test and the index after it, or null when it is not a set (no `]`,
 * or a set JavaScript cannot express such as `[z-a]`), in which case `[` is an ordinary character.
 * A set never matches `/`, as `?` does not: both stand for one character of a segment.
 */
const setAt = (pattern: string, i: number): { readonly test: (char: string) => boolean; readonly end: number } | null => {
  const close = pattern.indexOf("]", i + 1)
  if (close === -1) return null
  const set = pattern.slice(i + 1, close).replace(/\\/g, "\\\\").replace(/^!/, "^")
  let expression: RegExp
  try {
    expression = new RegExp(`^[${set}]$`)
  } catch {
    return null
  }
  return { test: (char) => char !== "/" && expression.test(char), end: close + 1 }
}

/** Braces nest this deep at most; a `{` deeper than that is an ordinary character. */
const maxBraceDepth = 32

/** Parses `pattern` from `i` up to an unmatched `}` or `,` inside braces (`depth` > 0) or its end. */
const parse = (pattern: string): ReadonlyArray<Node> => {
  let i = 0
  const sequence = (depth: number): Array<Node> => {
    const nodes: Array<Node> = []
    while (i < pattern.length) {
      const char = pattern[i] as string
      if (char === "*") {
        if (pattern[i + 1] === "*") {
          // `**/` is zero or more whole segments; a trailing `**` is anything below.
          if (pattern[i + 2] === "/") {
            nodes.push({ _tag: "Segments" })
            i += 3
          } else {
            nodes.push({ _tag: "Any" })
            i += 2
          }
        } else {
          nodes.push({ _tag: "Star" })
          i += 1
        }
      } else if (char === "?") {
        nodes.push({ _tag: "Char", test: notSlash })
        i += 1
      } else if (char === "[") {
        const set = setAt(pattern, i)
        if (set === null) {
          nodes.push({ _tag: "Char", test: (c) => c === "[" })
          i += 1
        } else {
          nodes.push({ _tag: "Char", test: set.test })
          i = set.end
        }
      } else if (char === "{" && depth < maxBraceDepth) {
        i += 1
        // An unclosed `{` runs to the end of the pattern.
        const alternatives: Array<Array<Node>> = [sequence(depth + 1)]
        while (pattern[i] === ",") {
          i += 1
          alternatives.push(sequence(depth + 1))
        }
        if (pattern[i] === "}") i += 1
        nodes.push({ _tag: "Alt", alternatives })
      } else if ((char === "}" || char === ",") && depth > 0) {
        return nodes
      } else {
        nodes.push({ _tag: "Char", test: (c) => c === char })
        i += 1
      }
    }
    return nodes
  }
  return sequence(0)
}

/** The automaton of `nodes` followed by the state `next`; returns the start state. */
const compile = (states: Array<State>, nodes: ReadonlyArray<Node>, next: number): number => {
  const add = (state: State) => states.push(state) - 1
  let start = next
  for (let k = nodes.length - 1; k >= 0; k--) {
    const node = nodes[k] as Node
    switch (node._tag) {
      case "Char":
        start = add({ _tag: "Char", test: node.test, out: start })
        break
      case "Star":
      case "Any": {
        const loop = add({ _tag: "Split", out: [] })
        const one = add({ _tag: "Char", test: node._tag === "Star" ? notSlash : anyChar, out: loop })
        ;(states[loop] as { out: Array<number> }).out.push(one, start)
        start = loop
        break
      }
      case "Segments": {
        // (?:[^/]+/)*
        const loop = add({ _tag: "Split", out: [] })
        const slash = add({ _tag: "Char", test: (c) => c === "/", out: loop })
        const more = add({ _tag: "Split", out: [] })
        const first = add({ _tag: "Char", test: notSlash, out: more })
        ;(states[more] as { out: Array<number> }).out.push(first, slash)
        ;(states[loop] as { out: Array<number> }).out.push(first, start)
        start = loop
        break
      }
      case "Alt": {
        const next = start
        start = add({ _tag: "Split", out: node.alternatives.map((alternative) => compile(states, alternative, next)) })
        break
      }
    }
  }
  return start
}

/** Whether the automaton of `nodes` matches `target` or a `/`-prefix of it (a path below it). */
const covers = (nodes: ReadonlyArray<Node>, target: string): boolean => {
  const states: Array<State> = [{ _tag: "Match" }]
  const start = compile(states, nodes, 0)
  const seen = new Int32Array(states.length).fill(-1)
  let current: Array<number> = []
  let generation = 0
  const enter = (into: Array<number>, from: number) => {
    const stack = [from]
    while (stack.length > 0) {
      const index = stack.pop() as number
      if (seen[index] === generation) continue
      seen[index] = generation
      const state = states[index] as State
      if (state._tag === "Split") for (let k = state.out.length - 1; k >= 0; k--) stack.push(state.out[k] as number)
      else into.push(index)
    }
  }
  enter(current, start)
  for (let i = 0; ; i++) {
    // The pattern names `target[0, i)`; it covers the path when that is all of it or a directory.
    if ((i === target.length || target[i] === "/") && current.includes(0)) return true
    if (i === target.length || current.length === 0) return false
    const char = target[i] as string
    generation += 1
    const next: Array<number> = []
    for (const index of current) {
      const state = states[index] as State
      if (state._tag === "Char" && state.test(char)) enter(next, state.out)
    }
    current = next
  }
}

/**
 * `path` without a leading `./` and trailing `/`s: the form patterns and paths are compared in.
 *
 * @since 0.3.0
 * @category constructors
 */
export const normalise = (path: string): string => path.replace(/^\.\//, "").replace(/\/+$/, "")

/**
 * Whether `path` (repository-relative) is covered by `pattern`.
 *
 * @since 0.3.0
 * @category predicates
 */
export const matches = (pattern: string, path: string): boolean => {
  const target = normalise(path)
  const glob = normalise(pattern)
  if (glob === "" || glob === ".") return true
  // A pattern covers what it names and everything below it.
  return covers(parse(glob), target)
}

/**
 * What is wrong with `entry` as a pattern a project file may hold, or `undefined` when nothing is:
 * it must be relative (no leading `/`), use `/` separators (no backslash), hold no NUL, and stay
 * inside the repository (no `..` segment). A sentence fragment, for "<field> entry "…" <problem>".
 *
 * @since 0.3.0
 * @category predicates
 */
export const problem = (entry: string): string | undefined => {
  if (entry === "") return "is empty"
  if (entry.startsWith("/")) return "is absolute (it starts with \"/\")"
  if (entry.includes("\0")) return "contains a NUL character"
  if (entry.includes("\\")) return "contains a backslash (scope entries use \"/\" separators)"
  if (entry.split("/").includes("..")) return "escapes the repository (it has a \"..\" segment)"
  return undefined
}
