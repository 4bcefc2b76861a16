/**
 * The environment Ratchet runs git with: the caller's, without the variables that would point git
 * at another repository than the directory it is run in (a hook or an IDE may set them), with
 * optional locks off (reading must write nothing) and messages in the C locale (they are parsed).
 *
 * While the unattended loop holds the verifier's key, the runner's own git runs inside the loop's
 * sandbox too ({@link confined}, ADR 0043's amendment): git runs programs the workspace's
 * configuration names — a clean filter (`filter.<name>.clean` in `.git/config`, chosen by
 * `.git/info/attributes` or a `.gitattributes`), which `git status` runs on any tracked file whose
 * stat changed — and the agent can write that configuration. Outside the sandbox such a filter would
 * read the verifier's key and passphrase files, which the sandbox shows as empty.
 *
 * @internal
 */
import * as Effect from "effect/Effect"

/** Variables that would make git look at another repository than the one of its directory. */
const redirecting = [
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_INDEX_FILE",
  "GIT_COMMON_DIR",
  "GIT_OBJECT_DIRECTORY",
  "GIT_ALTERNATE_OBJECT_DIRECTORIES",
  "GIT_NAMESPACE"
]

export const gitEnvironment = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env, GIT_OPTIONAL_LOCKS: "0", LC_ALL: "C", LANGUAGE: "C" }
  for (const name of redirecting) delete env[name]
  return env
}

/** A program and its arguments. */
export interface GitArgv {
  readonly file: string
  readonly args: ReadonlyArray<string>
}

type Launcher = (argv: GitArgv, cwd: string) => GitArgv

/** How this process starts git now: directly (null), or through the loop's sandbox. */
let launcher: Launcher | null = null

/** The program and arguments that run `git <args>` in `cwd`, confined when {@link confined} says so. */
export const gitArgv = (args: ReadonlyArray<string>, cwd: string): GitArgv =>
  launcher === null ? { file: "git", args } : launcher({ file: "git", args }, cwd)

/**
 * Runs `effect` with every git this process starts wrapped by `wrap` (the loop's sandbox), and puts
 * back how git was started before, however `effect` ends. Process-wide on purpose: every module
 * that runs git (the work tree's changes, the preflight, the workspace) must be covered, including
 * ones a later change adds, and a runner works on one task at a time.
 */
export const confined = <A, E, R>(wrap: Launcher, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const before = launcher
      launcher = wrap
      return before
    }),
    () => effect,
    (before) => Effect.sync(() => void (launcher = before))
  )
