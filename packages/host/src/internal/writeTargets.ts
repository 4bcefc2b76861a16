/**
 * Whether the text of a write's target says which file it is. A target with an expansion left in
 * it (`"$f"`, `${d}/x`, `$(pwd)/x`, backquotes, read as `$(…)`) or a glob (`*`, `?`, `[`, a brace list) is chosen
 * when the command runs: `f=.mcp.json; cp s "$f"` or `cp s .mcp.js[o]n` writes a protected file
 * that no word of the text names. The guard cannot read such a write, and fails closed.
 *
 * @internal
 */

/** `$NAME`, `${NAME}`: the variables the guard resolves are replaced before the test. */
const variable = /\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g

/**
 * What is left unresolved in `target` once `known` variables are replaced: `expansion`, `glob`,
 * or null when the text names the file. Glob characters count quoted or not (the classification
 * keeps the text, not its quoting): a file whose name holds one is named another way.
 */
export const unresolved = (target: string, known: Readonly<Record<string, string>>): "expansion" | "glob" | null => {
  const expanded = target.replace(variable, (whole, name: string) => known[name] ?? whole)
  if (/[$`]/.test(expanded)) return "expansion"
  // A brace list or range (`.mcp.{json,x}`, `f{1..3}`) expands to names no word of the text holds.
  if (/[*?[]|\{[^{}]*(?:,|\.\.)[^{}]*\}/.test(expanded)) return "glob"
  return null
}

/**
 * Why the first target (of the files a command writes, then of the directories it writes anything
 * below, `trees`) its text does not resolve cannot be read; undefined when every one is named. A
 * directory with an expansion in it is left to the tree rule, which already refuses a place it
 * cannot resolve under a contract; a glob in one is not.
 */
export const unresolvedWrite = (
  paths: ReadonlyArray<string>,
  trees: ReadonlyArray<string>,
  known: Readonly<Record<string, string>>
): string | undefined => {
  const found = [...paths.map((target) => [target, unresolved(target, known)] as const), ...trees.map((target) => [target, unresolved(target, known) === "glob" ? "glob" : null] as const)]
    .find(([, why]) => why !== null)
  if (found === undefined) return undefined
  const [target, why] = found
  const what = why === "glob" ? "a glob the shell matches against the files there" : "a variable or substitution the shell expands"
  return `the command writes to ${target.slice(0, 200)}, a place Ratchet cannot resolve from its text (${what} when it runs, and may name the host's configuration or Ratchet's own)`
}

/**
 * The files a copy or move (`cp`, `mv`, `install`, `rsync`) may write that no word names: into a
 * target that is a directory, each source lands as `<target>/<its name>`, and a name the text does
 * not resolve (`cp "$f" .`, `cp tpl/.m* .`) is such a file. Whether the target is a directory is
 * not in the text, so it is taken to be one (fail closed). Sources whose names are spelled are
 * handed over (`touches`) and tested there.
 */
export const landings = (sources: ReadonlyArray<string>, target: string): ReadonlyArray<string> =>
  sources.flatMap((source) => {
    const trimmed = source.replace(/\/+\.?$/, "")
    const name = trimmed.slice(trimmed.lastIndexOf("/") + 1)
    return /[$`*?[]/.test(name) ? [`${target.replace(/\/+$/, "") || "/"}/${name}`] : []
  })
