/**
 * The host's own sandbox, the outer of Ratchet's three layers (ADR 0017), as data the adapters
 * share: which paths a host's sandbox must keep out of an agent's writable roots — Ratchet's
 * runtime store (`$RATCHET_HOME`), the person's approval key, the project's `.ratchet/` — and the
 * warning `ratchet status` gives when a host's settings do not.
 *
 * Pure: paths come in resolved (absolute, `~` expanded) and nothing here reads a file or the
 * environment. Each adapter turns {@link Protected} into its host's settings
 * (`@ratchet/host-claude-code/Sandbox`, `@ratchet/host-codex/Sandbox`) and reads them back.
 *
 * @since 0.1.0
 */
import * as path from "node:path"
import * as Schema from "effect/Schema"

/**
 * What an agent's commands must not write: every path absolute and normalised.
 *
 * @since 0.1.0
 * @category models
 */
export interface Protected {
  /** `$RATCHET_HOME` (default `~/.ratchet`), and its real path when a symbolic link leads elsewhere. */
  readonly store: ReadonlyArray<string>
  /** The approval key file (`$RATCHET_HOME/approver-key.json`, or `RATCHET_APPROVER_KEY`), and its real path. */
  readonly key: ReadonlyArray<string>
  /** The project's root, when the settings are the project's; `.ratchet/` is below it. */
  readonly projectRoot: string | undefined
  /** The user's home directory, for the `~/` forms a host's settings use. */
  readonly home: string
}

/**
 * The project's `.ratchet/` directory, when {@link Protected} names a project.
 *
 * @since 0.1.0
 * @category getters
 */
export const projectState = (targets: Protected): string | undefined =>
  targets.projectRoot === undefined ? undefined : path.join(targets.projectRoot, ".ratchet")

/**
 * One thing a host's settings leave open: the host, the file to look at, what is missing, why it
 * matters, and the command (or edit) that fixes it. `ratchet status` prints these, and lists them
 * under `warnings` with `--json`.
 *
 * @since 0.1.0
 * @category models
 */
export const Warning = Schema.Struct({
  host: Schema.String,
  file: Schema.String,
  missing: Schema.String,
  detail: Schema.String,
  fix: Schema.String
})

/**
 * @since 0.1.0
 * @category models
 */
export interface Warning extends Schema.Schema.Type<typeof Warning> {}

/**
 * Whether `target` is `root` or below it (both absolute). `..foo` inside `root` is below it; `..`
 * is not.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isWithin = (target: string, root: string): boolean => {
  const relative = path.relative(root, target)
  return relative === "" || (relative !== ".." && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative))
}

/**
 * `target` written from the user's home as `~/…` when it is below it, else as it is: the form a
 * settings file committed to a repository can share between people whose homes differ.
 *
 * @since 0.1.0
 * @category constructors
 */
export const homeRelative = (target: string, home: string): string | undefined =>
  target !== home && isWithin(target, home) ? `~/${path.relative(home, target).split(path.sep).join("/")}` : undefined

/**
 * The distinct values of `values`, first occurrence first.
 *
 * @since 0.1.0
 * @category constructors
 */
export const distinct = <A>(values: Iterable<A>): ReadonlyArray<A> => [...new Set(values)]
