/**
 * The environment Ratchet runs git with: the caller's, without the variables that would point git
 * at another repository than the directory it is run in (a hook or an IDE may set them), with
 * optional locks off (reading must write nothing) and messages in the C locale (they are parsed).
 *
 * @internal
 */

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
