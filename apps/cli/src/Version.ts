/**
 * What this `ratchet` is: its package version and the commit it was built from, both stamped
 * into the bundle by the build (tools/bundle.mjs), so a bug report names the exact sources. The
 * commit is the short hash, `-dirty` when the build's work tree had changes, or `unknown` when it
 * was not built in a git checkout. Run from source (not bundled), it is `0.0.0-source` at `unknown`.
 *
 * `ratchet version`, `ratchet --version`, `-v` and `-V` all print it; `--json` as `{ version, commit }`.
 *
 * Only the CLI's entry imports this module (the MCP server's chunk reads the version itself), so
 * the bundle's commit sits in `dist/ratchet.mjs` alone: a build whose only change is the stamp
 * replaces no chunk that a running process may still import.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import { type CommandSpec, ok } from "./Command.js"

declare const __RATCHET_VERSION__: string | undefined
declare const __RATCHET_COMMIT__: string | undefined

/**
 * The package version this build was made from.
 *
 * @since 0.1.0
 * @category constants
 */
export const version: string = typeof __RATCHET_VERSION__ === "string" ? __RATCHET_VERSION__ : "0.0.0-source"

/**
 * The commit this build was made from: `abc1234`, `abc1234-dirty` or `unknown`.
 *
 * @since 0.1.0
 * @category constants
 */
export const commit: string = typeof __RATCHET_COMMIT__ === "string" ? __RATCHET_COMMIT__ : "unknown"

/**
 * `ratchet 0.1.0 (abc1234)`.
 *
 * @since 0.1.0
 * @category constants
 */
export const line = `ratchet ${version} (${commit})`

/**
 * The words that ask for the version in place of a command.
 *
 * @since 0.1.0
 * @category constants
 */
export const flags: ReadonlyArray<string> = ["--version", "-v", "-V"]

/**
 * `ratchet version`.
 *
 * @since 0.1.0
 * @category commands
 */
export const command: CommandSpec = {
  name: "version",
  usage: "ratchet version",
  summary: "Print the version and the commit this ratchet was built from",
  description:
    "Prints ratchet <version> (<commit>): the package version and the short commit of the sources it was built from, -dirty when they had uncommitted changes, unknown when they were not a git checkout. ratchet --version and ratchet -v print the same. Opens no store.",
  positionals: [],
  options: {},
  examples: ["ratchet version", "ratchet version --json"],
  needs: "standalone",
  run: () => Effect.succeed(ok({ version, commit }, line))
}
