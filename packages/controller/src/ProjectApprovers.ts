/**
 * A project's approvers as the store records them, and as the project commits them.
 *
 * The authority is the store: the chain of `ApproversEntryRecorded` events on the project's
 * approvers stream (`Event.approversStreamOf`), verified link by link (`Approvers.verify`) every
 * time it is read. A chain that does not verify (a row written straight into the store, an edited
 * payload) trusts nobody: every person-only act then HOLDs, never the reverse. The first chain a
 * store records for a project is trusted on first use (ADR 0017); after that, the store only takes
 * entries that continue its chain, each signed by an approver it already trusts.
 *
 * The committed file `.ratchet/approvers.json` carries the same entries so that another checkout,
 * or a store on another machine, can learn the chain and check it. It never grants trust, but it
 * is a tripwire (ADR 0018, amendment): an agent that can write the store without the host's
 * sandbox could replace the whole chain with a self-consistent one under its own key, which the
 * store alone cannot tell from the real one. So {@link authority}, what every gate is given, fails
 * closed while the store names approvers and the file does not say exactly the same (missing,
 * unreadable, ahead, behind or diverged): no signature counts until a person reconciles them, and
 * a change to the committed file shows in git. {@link standing} compares the two, so `ratchet
 * status` and `ratchet approver list` say how they differ and {@link warning} what to check.
 *
 * @since 0.2.0
 */
import * as Approvers from "@ratchet/kernel/Approvers"
import type * as Authority from "@ratchet/kernel/Authority"
import * as Event from "@ratchet/kernel/Event"
import * as Signature from "@ratchet/kernel/Signature"
import * as EventStore from "@ratchet/storage/EventStore"
import type { StorageError } from "@ratchet/storage/StorageError"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as path from "node:path"
import * as ApproverKey from "./ApproverKey.js"
import * as ControllerError from "./ControllerError.js"
import * as Projection from "./Projection.js"

/**
 * Where the committed chain lives, relative to the project root.
 *
 * @since 0.2.0
 * @category models
 */
export const fileName = ".ratchet/approvers.json"

/**
 * The chain a store recorded for a project: its entries, the approvers stream's version (what the
 * next append expects) and what it establishes. `fault` is set when the recorded chain does not
 * verify: `trust` is then nobody.
 *
 * @since 0.2.0
 * @category models
 */
export interface Recorded {
  readonly projectId: string
  readonly entries: ReadonlyArray<Approvers.Entry>
  readonly version: number
  readonly trust: Approvers.Trust
  readonly fault: Approvers.ChainError | null
}

/**
 * Reads and verifies the chain the store recorded for `projectId`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const recorded = (
  projectId: string
): Effect.Effect<Recorded, StorageError | EventStore.InvalidRequest, EventStore.EventStore> =>
  Effect.gen(function*() {
    const store = yield* EventStore.EventStore
    const stored = Chunk.toReadonlyArray(
      yield* Stream.runCollect(store.read({ streamId: Event.approversStreamOf(projectId) })).pipe(
        Effect.catchTag("@ratchet/storage/BranchNotFound", () => Effect.succeed(Chunk.empty<EventStore.StoredEvent>()))
      )
    )
    const entries = stored.flatMap((row) => (row.event._tag === "ApproversEntryRecorded" ? [row.event.entry] : []))
    const version = stored.at(-1)?.version ?? 0
    // Only entries belong on this stream; anything else there was not written by Ratchet.
    const foreign = stored.find((row) => row.event._tag !== "ApproversEntryRecorded")
    if (foreign !== undefined) {
      const fault = new Approvers.ChainError({ seq: 0, reason: "foreign_event", detail: `the store's approvers stream holds a ${foreign.event._tag} event at LSN ${foreign.lsn}.` })
      return { projectId, entries, version, trust: Approvers.none, fault }
    }
    return Either.match(Approvers.verify(projectId, entries, ApproverKey.verify), {
      onLeft: (fault) => ({ projectId, entries, version, trust: Approvers.none, fault }),
      onRight: (trust) => ({ projectId, entries, version, trust, fault: null })
    })
  })

/**
 * Whom the store's chain trusts, not checked against the committed file: gates take
 * {@link authority}, which is this only while {@link tripwire} finds nothing.
 *
 * @since 0.2.0
 * @category constructors
 */
export const authorityOf = (chain: Recorded): Authority.Authority => ({
  projectId: chain.projectId,
  approvers: chain.trust.approvers,
  verify: ApproverKey.verify
})

/** Trusts nobody: what a gate is given while the store and the committed file disagree. */
const nobody = (projectId: string): Authority.Authority => ({ projectId, approvers: [], verify: ApproverKey.verify })

/**
 * Whom the project trusts, as every gate is given it: the store's approvers while the committed
 * file agrees with them, otherwise a refusal naming the divergence ({@link tripwire}), so no
 * approval, verdict or other signed act is taken until a person reconciles the two.
 *
 * @since 0.2.0
 * @category constructors
 */
export const authority = (projectId: string, root: string) =>
  Effect.flatMap(recorded(projectId), (chain) => {
    const tripped = tripwire(chain, readFile(root))
    return tripped === null ? Effect.succeed(authorityOf(chain)) : Effect.fail(tripped)
  })

/**
 * Whom a report counts as trusted (what `ratchet evidence`, a host's view or a verification report
 * shows as counted): {@link authority}, but trusting nobody instead of failing while the store and
 * the committed file disagree, so reading a task never stops.
 *
 * @since 0.2.0
 * @category constructors
 */
export const counting = (projectId: string, root: string) =>
  Effect.map(recorded(projectId), (chain) => tripwire(chain, readFile(root)) === null ? authorityOf(chain) : nobody(projectId))

/**
 * Appends `entries` to the store's chain, expecting it at `chain.version`: a chain that moved in
 * between is a `VersionConflict`, and nothing is written.
 *
 * @since 0.2.0
 * @category constructors
 */
export const append = (chain: Recorded, entries: ReadonlyArray<Approvers.Entry>, actor: Event.Actor, at: number) =>
  Effect.flatMap(EventStore.EventStore, (store) =>
    store.append({
      projectId: chain.projectId,
      streamId: Event.approversStreamOf(chain.projectId),
      expectedVersion: chain.version,
      epoch: null,
      operationId: `op-${crypto.randomUUID()}`,
      events: entries.map((entry) => Event.make<Extract<Event.Event, { _tag: "ApproversEntryRecorded" }>>({ _tag: "ApproversEntryRecorded", actor, at, entry }))
    }))

/**
 * The committed file as found: absent, unreadable or malformed (with why), or its entries.
 *
 * @since 0.2.0
 * @category models
 */
export type Committed =
  | { readonly _tag: "missing" }
  | { readonly _tag: "invalid"; readonly reason: string }
  | { readonly _tag: "present"; readonly file: Approvers.File }

/** The largest approvers file read: a thousand entries are well under it. */
const maxFileBytes = 2 * 1024 * 1024

/**
 * Reads `.ratchet/approvers.json` under `root`, never through a symbolic link, at most 2 MiB.
 *
 * @since 0.2.0
 * @category constructors
 */
export const readFile = (root: string): Committed => {
  const file = path.join(root, fileName)
  let bytes: Buffer
  try {
    const handle = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | (fs.constants.O_NONBLOCK ?? 0))
    try {
      const stat = fs.fstatSync(handle)
      if (!stat.isFile()) return { _tag: "invalid", reason: "it is not a regular file." }
      if (stat.size > maxFileBytes) return { _tag: "invalid", reason: `it has ${stat.size} bytes; at most ${maxFileBytes}.` }
      bytes = fs.readFileSync(handle)
    } finally {
      fs.closeSync(handle)
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === "ENOENT") return { _tag: "missing" }
    return { _tag: "invalid", reason: code === "ELOOP" ? "it is a symbolic link." : `it cannot be read (${code ?? String(error)}).` }
  }
  let json: unknown
  try {
    json = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes))
  } catch {
    return { _tag: "invalid", reason: "it is not JSON in UTF-8." }
  }
  return Either.match(Schema.decodeUnknownEither(Approvers.File, { onExcessProperty: "error" })(json), {
    onLeft: (error) => ({
      _tag: "invalid",
      reason: ParseResult.ArrayFormatter.formatErrorSync(error)
        .slice(0, 3)
        .map((issue) => `${issue.path.map(String).join(".") || "(root)"}: ${issue.message}`)
        .join("; ")
    }),
    onRight: (file) => ({ _tag: "present", file })
  })
}

/**
 * Writes the store's chain to `.ratchet/approvers.json` (atomically; a file already holding it is
 * left alone).
 *
 * @since 0.2.0
 * @category constructors
 */
export const writeFile = (root: string, chain: Pick<Recorded, "projectId" | "entries">) =>
  Projection.writeProjectFile(
    root,
    path.basename(fileName),
    `${JSON.stringify({ schemaVersion: 1, projectId: chain.projectId, entries: chain.entries } satisfies Approvers.File, null, 2)}\n`
  )

/**
 * How the committed file stands to the store's chain.
 *
 * @since 0.2.0
 * @category models
 */
export type Standing =
  | { readonly _tag: "same" }
  | { readonly _tag: "missing" }
  | { readonly _tag: "invalid"; readonly reason: string }
  | { readonly _tag: "ahead"; readonly extra: ReadonlyArray<Approvers.Entry> }
  | { readonly _tag: "behind"; readonly missing: number }
  | { readonly _tag: "diverged"; readonly seq: number }

/**
 * Compares the committed file with the store's chain.
 *
 * @since 0.2.0
 * @category constructors
 */
export const standing = (chain: Recorded, committed: Committed): Standing => {
  switch (committed._tag) {
    case "missing":
      return chain.entries.length === 0 ? { _tag: "same" } : { _tag: "missing" }
    case "invalid":
      return committed
    case "present":
      if (committed.file.projectId !== chain.projectId) return { _tag: "invalid", reason: `it is for project ${committed.file.projectId.slice(0, 64)}.` }
      return Approvers.compare(chain.entries, committed.file.entries)
  }
}

/** A chain's fingerprint: the first 16 hex digits of its head's digest (each entry names the one before). */
const fingerprintOf = (entries: ReadonlyArray<Approvers.Entry>): string => {
  const last = entries.at(-1)
  return last === undefined ? "(empty)" : `sha256:${Approvers.entryDigest(last).slice("sha256:".length, "sha256:".length + 16)}`
}

const named = (approvers: ReadonlyArray<Approvers.Approver>): string =>
  approvers.length === 0 ? "nobody" : approvers.map((approver) => `${approver.id.slice(0, 64)} (key ${Signature.fingerprint(approver.key)})`).join(", ")

/** What the committed file says, for a sentence: its chain's fingerprint and whom it trusts. */
const describeFile = (chain: Recorded, committed: Committed): string => {
  switch (committed._tag) {
    case "missing":
      return `${fileName} is missing`
    case "invalid":
      return `${fileName} cannot be used`
    case "present": {
      const trust = Approvers.verifyFile(chain.projectId, committed.file, ApproverKey.verify)
      return `${fileName} holds chain ${fingerprintOf(committed.file.entries)} (${committed.file.entries.length} entr${committed.file.entries.length === 1 ? "y" : "ies"}; ${
        Either.match(trust, { onLeft: (fault) => `it does not verify: ${fault.detail}`, onRight: (found) => `trusts ${named(found.approvers)}` })
      })`
    }
  }
}

const howDiffer = (found: Exclude<Standing, { readonly _tag: "same" }>): string => {
  switch (found._tag) {
    case "missing":
      return "the file is missing"
    case "invalid":
      return `the file cannot be used: ${found.reason}`
    case "ahead":
      return `the file has ${found.extra.length} entr${found.extra.length === 1 ? "y" : "ies"} the store has not recorded`
    case "behind":
      return `the file is ${found.missing} entr${found.missing === 1 ? "y" : "ies"} behind the store`
    case "diverged":
      return `they differ at entry ${found.seq}`
  }
}

/**
 * Why every gate stops, or `null` when it need not: the store names approvers and the committed
 * file does not say exactly the same. The refusal names how they differ, both chains'
 * fingerprints and whom each trusts, and how to find out which one is right, without presuming
 * either: the store may have been rewritten outside Ratchet (an agent writing the database), or
 * the file edited or checked out from an older commit.
 *
 * @since 0.2.0
 * @category constructors
 */
export const tripwire = (chain: Recorded, committed: Committed): ControllerError.InvalidRequest | null => {
  if (chain.fault !== null || chain.entries.length === 0) return null
  const found = standing(chain, committed)
  if (found._tag === "same") return null
  return new ControllerError.InvalidRequest({
    field: "approvers",
    reason: `approvers_diverged: the store's approvers and ${fileName} disagree (${howDiffer(found)}), so no approval, verdict or other signed act counts until a person reconciles them. ` +
      `The store holds chain ${fingerprintOf(chain.entries)} (${chain.entries.length} entr${chain.entries.length === 1 ? "y" : "ies"}; trusts ${named(chain.trust.approvers)}); ${describeFile(chain, committed)}.`,
    fix: reconcile(chain.projectId)
  })
}

/** How a person finds out which of the two is right, and restores it; never one of them blindly. */
const reconcile = (projectId: string): string =>
  `Find out which one is right before changing either: git log -p -- ${fileName} shows who changed the file and when, and ratchet approver list shows the store's. ` +
  `If the committed file is right, the store's approvers stream (approvers.${projectId}) was rewritten outside Ratchet: stop every Ratchet process and restore the store from a backup taken before that, ` +
  `or delete that stream's rows (ratchet_events, ratchet_branches, ratchet_streams where stream_id is approvers.${projectId}) and take the committed chain again with ratchet approver trust, checking the head it shows. ` +
  `If the store is right (the file was edited, or is from an older commit), write it back with ratchet approver list --write and commit it.`

/**
 * A sentence for `ratchet status` and `ratchet approver list` when the file and the store differ,
 * with what to check and do; `null` when they agree.
 *
 * @since 0.2.0
 * @category constructors
 */
export const warning = (chain: Recorded, found: Standing, committed: Committed): string | null => {
  if (chain.fault !== null) return `The store's approvers chain does not verify (${chain.fault.detail}): nobody's approval counts until it is repaired from a backup.`
  if (found._tag === "same") {
    return chain.entries.length === 0 ? "This project has no approvers yet: nothing can be approved. Create your approval key and register it: ratchet approver init" : null
  }
  if (chain.entries.length === 0) {
    return found._tag === "ahead"
      ? `${fileName} names approvers this store has never trusted. Check who they are, then trust them once: ratchet approver trust`
      : `${fileName} cannot be used (${found._tag === "invalid" ? found.reason : found._tag}); restore it: git checkout -- ${fileName}`
  }
  const tripped = tripwire(chain, committed)
  return tripped === null ? null : `${tripped.reason} ${tripped.fix}${found._tag === "ahead" ? " If the file's extra entries were added in another checkout, take them: ratchet approver trust" : ""}`
}
