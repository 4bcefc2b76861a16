/**
 * A step's scope check: the paths a step changed, held against the contract's `allowedScope` and
 * `forbiddenScope`, and the `scope_violation` blocker a violation raises. A command step's changes
 * are the work tree observed before its command and after it (the runner, ADR 0011 (h)). A manual
 * step's are the tree at its start against the tree when its worker runs `ratchet step done`
 * (ADR 0011 (l)): the same observation, the same comparison, the same blocker.
 *
 * A manual step starts at the `BoundaryRecorded` the runner appends right after it opens the
 * step's attempt (the next append, so the next event of the stream). When the runner stopped in
 * between (a crash, or a rewind to between the two), the start is the run's last boundary before
 * the attempt opened: an earlier tree, so the check can only see more, never less. A later
 * boundary (a pause the runner recorded while the step awaited its worker) is never the start: it
 * already holds the worker's changes.
 *
 * A boundary keeps the HEAD, the dirty paths and one digest over their contents, not each path's
 * hash, and an edit of a file that was already dirty must count. So the runner stores the
 * observation itself in the blob store, as the exact bytes the boundary's `dirtyDigest` hashes:
 * the blob's reference (SHA-256 of its bytes) *is* the digest, the boundary names its tree without
 * a new field, and the blob store verifies the bytes against it on every read. Without that blob
 * (a run started by an older Ratchet, a blob that could not be stored), a path dirty at both ends
 * counts as changed unless the digests show the dirty contents identical: the check errs towards
 * blocking, and the blocker says which paths it could not tell about.
 *
 * @since 0.1.0
 */
import type * as Event from "@ratchet/kernel/Event"
import type * as Task from "@ratchet/kernel/Task"
import * as BlobStore from "@ratchet/storage/BlobStore"
import type * as EventStore from "@ratchet/storage/EventStore"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Progress from "@ratchet/kernel/Progress"
import * as HostConfiguration from "./HostConfiguration.js"
import * as Scope from "./Scope.js"
import * as WorkTree from "./WorkTree.js"

/**
 * @since 0.1.0
 * @category models
 */
export type Boundary = Extract<Event.Event, { readonly _tag: "BoundaryRecorded" }>

/** How many violating paths a blocker's action names, and how many its evidence lists. */
const namedInAction = 10
const namedInEvidence = 50

/** A blocker's `requiredAction` holds at most this many characters (the event schema's bound). */
const actionLimit = 4096

const fit = (text: string) => (text.length <= actionLimit ? text : `${text.slice(0, actionLimit - 1)}…`)

/**
 * A changed path a step may not leave: the scope's violations (`Scope.Violation`), and, for a step
 * the runner ran, the hosts' configuration whatever the scope says (`host_configuration`, see
 * {@link ranViolations}).
 *
 * @since 0.5.0
 * @category models
 */
export type Violation =
  | Scope.Violation
  | { readonly path: string; readonly reason: "host_configuration" | "repository"; readonly pattern: null }

/**
 * Whether `path` (repository-relative, `/` or `\\` separated) is git's own: a part named `.git`
 * (at any depth, case folded as macOS and Windows fold it), or a directory git lists as untracked
 * with a trailing `/` (under `--untracked-files=all` it does so only for a nested repository).
 *
 * @since 0.5.0
 * @category predicates
 */
export const isGitPath = (path: string): boolean =>
  path.endsWith("/") || path.split(/[/\\]/).some((part) => part.toLowerCase().replace(/[. ]+$/, (tail) => (part === tail ? tail : "")) === ".git")

/**
 * The paths a step the runner ran (a command's or an agent's) changed that it may not leave: the
 * hosts' configuration (`HostConfiguration`: `.claude/`, `.codex/`, `.mcp.json`), whatever the
 * scope allows, since the next agent step's host reads it (a setting that switches its hooks off,
 * an MCP server that runs as its tool) and nothing held the code that wrote it; then the scope's
 * violations. Git's own too, whatever the scope allows (`repository`, ADR 0045's amendment): a
 * path with a `.git` part ({@link isGitPath}) and a nested repository or gitlink (`repositories`,
 * the changed paths that hold a `.git` on disk: `WorkTree.repositoriesAmong`), since `git status`
 * of the parent — the runner's own and the person's later, outside the sandbox — runs git in it
 * with its own settings (a clean filter in its `.git/config` and `.git/info/attributes`). A manual
 * step's worker is a person (or a session they watch), whose hosts' settings are theirs to change:
 * its check is the scope's alone.
 *
 * @since 0.5.0
 * @category constructors
 */
export const ranViolations = (
  changed: ReadonlyArray<string>,
  allowed: ReadonlyArray<string>,
  forbidden: ReadonlyArray<string>,
  repositories: ReadonlyArray<string> = []
): ReadonlyArray<Violation> =>
  changed.flatMap((path): ReadonlyArray<Violation> =>
    HostConfiguration.isHostConfiguration(path)
      ? [{ path, reason: "host_configuration", pattern: null }]
      : isGitPath(path) || repositories.includes(path)
      ? [{ path, reason: "repository", pattern: null }]
      : Scope.violations([path], allowed, forbidden)
  )

const why = (v: Violation): string => {
  switch (v.reason) {
    case "forbidden":
      return `forbidden by ${v.pattern}`
    case "protected":
      return "a trust file no task may change"
    case "host_configuration":
      return "the hosts' configuration, which no step may change"
    case "repository":
      return "a nested git repository or git's own files, which no step may add or change"
    case "outside_allowed":
      return "outside allowedScope"
  }
}

/**
 * The `scope_violation` blocker for `violations` of a step of `taskId`: each path and why it is
 * refused, and the ways on. `uncertain` are paths counted as changed because the contents they
 * had when the step started were not stored (see the module comment); the action says so. When
 * the hosts' configuration is among them, the action says that no scope allows it and how to undo
 * it; widening the scope is offered only for paths a scope could allow.
 *
 * @since 0.1.0
 * @category constructors
 */
export const blocker = (
  taskId: string,
  stepId: string,
  violations: ReadonlyArray<Violation>,
  uncertain: ReadonlyArray<string> = []
): Event.Blocker => {
  const shown = violations.slice(0, namedInAction).map((v) => `${v.path} (${why(v)})`)
  const more = violations.length > namedInAction ? ` and ${violations.length - namedInAction} more` : ""
  const unsure = violations.filter((v) => uncertain.includes(v.path))
  const caveat = unsure.length === 0
    ? ""
    : ` (${unsure.length === 1 ? "one of them was" : `${unsure.length} of them were`} already changed when the step started, and the contents then were not stored, so ${unsure.length === 1 ? "it counts" : "they count"} as changed: ${unsure.slice(0, namedInAction).map((v) => v.path).join(", ")})`
  const unblock = `ratchet unblock ${taskId} --to RUNNING --resolution "…"`
  const host = violations.filter((v) => v.reason === "host_configuration")
  const repository = violations.filter((v) => v.reason === "repository")
  const action = repository.length > 0
    ? `Step ${stepId} added or changed a nested git repository or git's own files: ${shown.join(", ")}${more}${caveat}. Run no git in this checkout (git status runs git inside a nested repository, with the filters and hooks of its own settings) until you have looked at what the step wrote there with a pager or an editor (its .git/config, .git/info/attributes, .git/hooks/) and removed it (rm -r <path>, git rm --cached <gitlink>); no scope lets a step change git's own files. Then: ${unblock}`
    : host.length === 0
    ? `Step ${stepId} changed paths outside the contract's scope: ${shown.join(", ")}${more}${caveat}. Undo them (then: ${unblock}), or widen the scope: ratchet reopen ${taskId} --reason "…"`
    : `Step ${stepId} changed ${host.length === violations.length ? "the hosts' configuration" : "the hosts' configuration and paths outside the contract's scope"}: ${shown.join(", ")}${more}${caveat}. The next agent step's host would read the hosts' configuration, and no scope lets a step change it: look at what the step wrote there and remove it (git checkout -- <tracked path>, rm <new file>), or keep it only if you mean every later agent to run with it${
      host.length === violations.length ? "" : `; undo the other paths, or widen the scope for them (ratchet reopen ${taskId} --reason "…")`
    }; then: ${unblock}`
  return {
    category: "scope_violation",
    owner: "user",
    requiredAction: fit(action),
    lastEvidence: violations.slice(0, namedInEvidence).map((v) => v.path)
  }
}

/** The bytes whose SHA-256 is `WorkTree.dirtyDigest(tree)`: the dirty paths and their hashes. */
const treeBytes = (tree: WorkTree.Observation): Uint8Array => new TextEncoder().encode(JSON.stringify([...tree.dirty.entries()]))

/**
 * Stores `tree`'s dirty paths and their content hashes in the blob store, under the reference
 * that equals the boundary's `dirtyDigest`, so a boundary recorded from `tree` names it. Nothing
 * is stored for a clean tree (a boundary with no dirty paths needs no blob). Best effort: a tree
 * that cannot be stored makes a later check err towards blocking, it never stops the run.
 *
 * @since 0.1.0
 * @category constructors
 */
export const storeTree = (tree: WorkTree.Observation): Effect.Effect<void, never, BlobStore.BlobStore> =>
  tree.dirty.size === 0
    ? Effect.void
    : Effect.flatMap(BlobStore.BlobStore, (blobs) => blobs.put(treeBytes(tree))).pipe(Effect.asVoid, Effect.catchAll(() => Effect.void))

const StoredTree = Schema.parseJson(Schema.Array(Schema.Tuple(Schema.String, Schema.String)))

/** Stands for a content hash that is not known: it equals no hash git gives. */
const unknownContents = "unknown"

/**
 * The tree `boundary` recorded, and whether each dirty path's contents are known (`exact`): from
 * the stored blob, or trivially for a clean tree. Otherwise the dirty paths carry no hash.
 *
 * @since 0.1.0
 * @category constructors
 */
export const treeAt = (boundary: Boundary): Effect.Effect<{ readonly tree: WorkTree.Observation; readonly exact: boolean }, never, BlobStore.BlobStore> =>
  Effect.gen(function*() {
    if (boundary.dirtyPaths.length === 0) return { tree: { head: boundary.head, dirty: new Map() }, exact: true }
    const blobs = yield* BlobStore.BlobStore
    const bytes = yield* Effect.either(blobs.get(boundary.dirtyDigest))
    const entries = Either.isRight(bytes)
      ? Either.getOrNull(Schema.decodeUnknownEither(StoredTree)(new TextDecoder().decode(bytes.right)))
      : null
    // The blob store verified the bytes against the digest; the paths must still be the boundary's.
    if (entries !== null && entries.length === boundary.dirtyPaths.length && entries.every(([path], i) => path === boundary.dirtyPaths[i])) {
      return { tree: { head: boundary.head, dirty: new Map(entries) }, exact: true }
    }
    return { tree: { head: boundary.head, dirty: new Map(boundary.dirtyPaths.map((path) => [path, unknownContents])) }, exact: false }
  })

/**
 * Where a manual step's attempt started: the boundary recorded right after it opened
 * (`opened`), or, when none was, the run's last boundary before it opened (`before`); with the
 * lease epoch it was written under.
 *
 * @since 0.1.0
 * @category models
 */
export interface Start {
  readonly boundary: Boundary
  readonly epoch: number | null
  readonly lsn: number
  readonly kind: "opened" | "before"
}

/**
 * The start of attempt `attempt` of `stepId` in run `runId`, from the stream's events in order
 * (see the module comment), or null when the attempt never opened or the run recorded no tree
 * before it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const startOf = (
  events: ReadonlyArray<EventStore.StoredEvent>,
  at: { readonly runId: string; readonly stepId: string; readonly attempt: number }
): Start | null => {
  const isBoundary = (stored: EventStore.StoredEvent | undefined): stored is EventStore.StoredEvent & { readonly event: Boundary } =>
    stored !== undefined && stored.event._tag === "BoundaryRecorded" && stored.event.runId === at.runId
  const opened = events.findIndex(({ event }) =>
    event._tag === "AttemptTransitioned" && event.runId === at.runId && event.stepId === at.stepId && event.attempt === at.attempt &&
    event.from === "Pending" && event.to === "Running"
  )
  if (opened === -1) return null
  const next = events[opened + 1]
  if (isBoundary(next) && next.version === (events[opened] as EventStore.StoredEvent).version + 1) {
    return { boundary: next.event, epoch: next.epoch, lsn: next.lsn, kind: "opened" }
  }
  for (let i = opened - 1; i >= 0; i--) {
    const earlier = events[i]
    if (isBoundary(earlier)) return { boundary: earlier.event, epoch: earlier.epoch, lsn: earlier.lsn, kind: "before" }
  }
  return null
}

/**
 * The owner of the lease written at `epoch` (the last `LeaseAcquired` or `LeaseTakenOver` with
 * that epoch), or null when the events hold none.
 *
 * @since 0.1.0
 * @category constructors
 */
export const ownerAt = (events: ReadonlyArray<EventStore.StoredEvent>, epoch: number | null): Event.LeaseOwner | null => {
  if (epoch === null) return null
  for (let i = events.length - 1; i >= 0; i--) {
    const { event } = events[i] as EventStore.StoredEvent
    if ((event._tag === "LeaseAcquired" || event._tag === "LeaseTakenOver") && event.epoch === epoch) return event.owner
  }
  return null
}

/**
 * What a manual step changed since its start, against the scope.
 *
 * - `InScope`: every changed path is allowed.
 * - `OutOfScope`: `violations` are not; `uncertain` are changed paths whose contents at the start
 *   were not known (see the module comment).
 * - `Unchecked`: the changes could not be computed (`reason` says why).
 * - `OtherCheckout`: the step started in another checkout of the project (`owner` recorded it),
 *   so this checkout's tree says nothing about it.
 *
 * @since 0.1.0
 * @category models
 */
export type Verdict =
  | { readonly _tag: "InScope"; readonly changed: ReadonlyArray<string> }
  | {
    readonly _tag: "OutOfScope"
    readonly changed: ReadonlyArray<string>
    readonly violations: ReadonlyArray<Scope.Violation>
    readonly uncertain: ReadonlyArray<string>
  }
  | { readonly _tag: "Unchecked"; readonly reason: string }
  | { readonly _tag: "OtherCheckout"; readonly owner: Event.LeaseOwner }

/**
 * Checks attempt `attempt` of manual step `stepId` in run `runId`: its start found in `events`
 * (the task's stream on its current branch, in order), the tree of `root` (the checkout of
 * `workspaceId`) observed now, the changed paths held against `scope`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const check = (input: {
  readonly events: ReadonlyArray<EventStore.StoredEvent>
  readonly runId: string
  readonly stepId: string
  readonly attempt: number
  readonly root: string
  readonly workspaceId: string
  readonly scope: { readonly allowed: ReadonlyArray<string>; readonly forbidden: ReadonlyArray<string> }
}): Effect.Effect<Verdict, never, BlobStore.BlobStore> =>
  Effect.gen(function*() {
    const start = startOf(input.events, input)
    if (start === null) {
      return {
        _tag: "Unchecked",
        reason: "the work tree at the step's start was never recorded (its runner stopped between opening the step and recording the tree)"
      } as const
    }
    const writer = ownerAt(input.events, start.epoch)
    if (writer !== null && writer.workspaceId !== input.workspaceId) return { _tag: "OtherCheckout", owner: writer } as const
    const recorded = yield* treeAt(start.boundary)
    const observed = yield* Effect.either(WorkTree.observe(input.root))
    if (Either.isLeft(observed)) return { _tag: "Unchecked", reason: observed.left.message } as const
    const now = observed.right
    // Equal digests mean the same dirty paths with the same contents, whatever was stored.
    const exact = recorded.exact || WorkTree.dirtyDigest(now) === start.boundary.dirtyDigest
    const before = exact && !recorded.exact ? { head: start.boundary.head, dirty: now.dirty } : recorded.tree
    const changed = yield* Effect.either(WorkTree.changedBetween(input.root, before, now))
    if (Either.isLeft(changed)) return { _tag: "Unchecked", reason: changed.left.message } as const
    const violations = Scope.violations(changed.right, input.scope.allowed, input.scope.forbidden)
    if (violations.length === 0) return { _tag: "InScope", changed: changed.right } as const
    const uncertain = exact ? [] : changed.right.filter((path) => before.dirty.has(path) && now.dirty.has(path))
    return { _tag: "OutOfScope", changed: changed.right, violations, uncertain } as const
  })

/**
 * The kernel commands a verdict adds to the step's end: a `scope_violation` block, a
 * `decision_needed` block when the changes could not be computed, nothing when they are in scope.
 * (`OtherCheckout` is a refusal, not a command: see the controller's `stepDone`.)
 *
 * @since 0.1.0
 * @category constructors
 */
export const commands = (
  verdict: Verdict,
  meta: { readonly actor: Event.Actor; readonly at: number },
  taskId: string,
  stepId: string
): ReadonlyArray<Task.Command> => {
  switch (verdict._tag) {
    case "InScope":
    case "OtherCheckout":
      return []
    case "OutOfScope":
      return [{ _tag: "Block", actor: meta.actor, at: meta.at, blocker: blocker(taskId, stepId, verdict.violations, verdict.uncertain) }]
    case "Unchecked":
      return [Progress.decisionNeeded(
        meta,
        fit(`Step ${stepId} was marked done, but what it changed could not be checked against the scope: ${verdict.reason}. Check what the step changed (git status, git log), undo anything outside the scope, then: ratchet unblock ${taskId} --to RUNNING --resolution "…"`),
        []
      )]
  }
}
