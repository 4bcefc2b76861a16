/**
 * `ratchet init` makes a git repository a Ratchet project, and refuses anywhere else: a checkout's
 * identity lives in its git directory, the preflight and the run's scope checks read the work tree
 * through git, and `.ratchet/project.json` is meant to be committed (ADR 0027). Git itself answers
 * whether a directory is in a work tree, with the environment the workspace runs it with.
 *
 * @since 0.3.0
 */
import { execFile } from "node:child_process"
import * as ControllerError from "@ratchet/controller/ControllerError"
import * as Effect from "effect/Effect"

/** Variables that would make git answer for another repository than the directory's own. */
const redirecting = ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE"]

const gitEnvironment = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env, GIT_OPTIONAL_LOCKS: "0", LC_ALL: "C", LANGUAGE: "C" }
  for (const name of redirecting) delete env[name]
  return env
}

/**
 * What git says of `cwd`: the work tree's top, or why it has none (git's own first line, or that
 * git could not be run).
 *
 * @since 0.3.0
 * @category models
 */
export type Answer =
  | { readonly _tag: "WorkTree"; readonly top: string }
  | { readonly _tag: "NotAWorkTree"; readonly git: string }
  | { readonly _tag: "NoGit"; readonly reason: string }

/**
 * Asks git whether `cwd` is inside a work tree.
 *
 * @since 0.3.0
 * @category constructors
 */
export const ask = (cwd: string): Effect.Effect<Answer> =>
  Effect.async((resume) => {
    execFile("git", ["rev-parse", "--show-toplevel"], { cwd, timeout: 10_000, env: gitEnvironment() }, (error, stdout, stderr) => {
      if (error === null && stdout.trim() !== "") return resume(Effect.succeed({ _tag: "WorkTree", top: stdout.trim() }))
      const code = (error as NodeJS.ErrnoException | null)?.code
      if (typeof code === "string") {
        // Spawning failed (ENOENT: no git on PATH), as opposed to git answering with a status.
        return resume(Effect.succeed({ _tag: "NoGit", reason: code === "ENOENT" ? "git is not installed, or not on PATH" : `git could not be run (${code})` }))
      }
      const said = String(stderr).split("\n").find((line) => line.trim() !== "")?.trim() ?? "git rev-parse --show-toplevel failed"
      resume(Effect.succeed({ _tag: "NotAWorkTree", git: said.slice(0, 300) }))
    })
  })

/**
 * Succeeds when `cwd` is inside a git work tree, else fails (exit 2) saying why and what to do.
 *
 * @since 0.3.0
 * @category constructors
 */
export const requireWorkTree = (cwd: string): Effect.Effect<void, ControllerError.InvalidRequest> =>
  Effect.flatMap(ask(cwd), (answer) => {
    switch (answer._tag) {
      case "WorkTree":
        return Effect.void
      case "NotAWorkTree":
        return Effect.fail(
          new ControllerError.InvalidRequest({
            field: "directory",
            reason: `${cwd} is not inside a git repository (git: ${answer.git}). Ratchet keeps a project in a git repository: the checkout's identity lives in its git directory, and .ratchet/project.json is committed.`,
            fix: "Run git init there first (then ratchet init), or cd into your repository (or pass -C <repository>)."
          })
        )
      case "NoGit":
        return Effect.fail(
          new ControllerError.InvalidRequest({
            field: "git",
            reason: `${answer.reason}; ratchet init needs it to find the repository.`,
            fix: "Install git, make sure it is on PATH, and run ratchet init again inside your repository."
          })
        )
    }
  })
