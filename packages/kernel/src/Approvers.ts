/**
 * A project's approvers: the people whose approval keys may sign its person-only acts (approvals,
 * settlements, rewinds, verdicts), kept as a signed, hash-linked chain of entries, like git's
 * allowed signers with a history.
 *
 * Each entry adds or removes one approver (`id` and Ed25519 `key`), names the digest of the entry
 * before it (`prev`), and is signed:
 * - the first entry (the *genesis*) adds its own signer: whoever holds that key is the project's
 *   first approver. Nothing can prove a genesis is the right person's; a store trusts the first
 *   genesis it records for a project (trust on first use, ADR 0017) and refuses any other;
 * - every later entry is signed by a key that is an approver *before* that entry, so nobody can add
 *   themselves: an approver already trusted must sign them in.
 * The approvers are the fold of the chain. The chain is committed in the project
 * (`.ratchet/approvers.json`) and recorded in the runtime store, which is the authority: the file
 * lets another checkout or store learn the same chain and check it link by link.
 *
 * {@link verify} checks a whole chain; {@link compare} tells how a file's chain stands to the one
 * a store trusts (the same, ahead of it, behind it, or diverged from it). Pure; signatures are
 * checked with the caller's {@link Signature.Verify}.
 *
 * @since 0.2.0
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Digest from "./Digest.js"
import * as Signature from "./Signature.js"

/**
 * An approver's name: how receipts and verdicts name the person (`user:<id>`). 1 to 64 characters
 * from `A-Z a-z 0-9 . _ -`, starting with a letter or digit.
 *
 * @since 0.2.0
 * @category schemas
 */
export const ApproverId = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, {
    message: (issue) =>
      `expected an approver id: 1 to 64 characters from A-Z a-z 0-9 . _ -, starting with a letter or digit, got ${
        JSON.stringify(typeof issue.actual === "string" ? issue.actual.slice(0, 80) : issue.actual)
      }`
  })
)

/**
 * @since 0.2.0
 * @category schemas
 */
export const Approver = Schema.Struct({ id: ApproverId, key: Signature.Key })

/**
 * @since 0.2.0
 * @category models
 */
export type Approver = typeof Approver.Type

/**
 * The most entries a chain may have: far more than any team needs, and a bound on the work a
 * hostile file can cause.
 *
 * @since 0.2.0
 * @category models
 */
export const maxEntries = 1000

/**
 * One link of the chain.
 *
 * @since 0.2.0
 * @category schemas
 */
export const Entry = Schema.Struct({
  seq: Schema.Int.pipe(Schema.between(1, maxEntries)),
  op: Schema.Literal("add", "remove"),
  approver: Approver,
  /** Epoch milliseconds, by the signer's clock; informational. */
  at: Schema.Int.pipe(Schema.nonNegative()),
  /** The digest of the previous entry ({@link entryDigest}), `null` for the genesis. */
  prev: Schema.NullOr(Digest.Digest),
  signature: Signature.Signature
})

/**
 * @since 0.2.0
 * @category models
 */
export type Entry = typeof Entry.Type

/**
 * The committed file `.ratchet/approvers.json`.
 *
 * @since 0.2.0
 * @category schemas
 */
export const File = Schema.Struct({
  schemaVersion: Schema.Literal(1),
  projectId: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(128)),
  entries: Schema.Array(Entry).pipe(Schema.maxItems(maxEntries))
})

/**
 * @since 0.2.0
 * @category models
 */
export type File = typeof File.Type

/**
 * What a verified chain establishes: its head (the digest of its last entry; `null` for no chain),
 * its length and the approvers it leaves.
 *
 * @since 0.2.0
 * @category models
 */
export interface Trust {
  readonly head: Digest.Digest | null
  readonly length: number
  readonly approvers: ReadonlyArray<Approver>
}

/**
 * No chain: nobody may approve anything yet.
 *
 * @since 0.2.0
 * @category constructors
 */
export const none: Trust = { head: null, length: 0, approvers: [] }

/**
 * The fields an entry's signature covers: everything but the signature, and the project.
 *
 * @since 0.2.0
 * @category encoding
 */
export const entryFields = (projectId: string, entry: Omit<Entry, "signature">): Readonly<Record<string, unknown>> => ({
  projectId,
  seq: entry.seq,
  op: entry.op,
  approver: { id: entry.approver.id, key: entry.approver.key },
  at: entry.at,
  prev: entry.prev
})

/**
 * The digest an entry is linked by: over the whole entry, its signature included.
 *
 * @since 0.2.0
 * @category constructors
 */
export const entryDigest = (entry: Entry): Digest.Digest =>
  Either.getOrThrowWith(
    Digest.of({
      seq: entry.seq,
      op: entry.op,
      approver: { id: entry.approver.id, key: entry.approver.key },
      at: entry.at,
      prev: entry.prev,
      signature: { key: entry.signature.key, value: entry.signature.value }
    }),
    // Every field is a string or a safe integer: canonical JSON always accepts it.
    () => new Error("an approvers entry is always canonicalizable")
  )

/**
 * Why a chain does not verify. `seq` is the entry at fault (1-based), 0 for the chain as a whole.
 *
 * @since 0.2.0
 * @category errors
 */
export class ChainError extends Schema.TaggedError<ChainError>()("@ratchet/kernel/ApproversChainError", {
  seq: Schema.Int,
  reason: Schema.Literal(
    "wrong_project",
    "out_of_order",
    "broken_link",
    "genesis_not_self_signed",
    "genesis_not_add",
    "signer_not_approver",
    "bad_signature",
    "duplicate_id",
    "duplicate_key",
    "unknown_approver",
    "last_approver",
    "too_long",
    "foreign_event"
  ),
  detail: Schema.String
}) {
  override get message(): string {
    return `The approvers chain does not verify${this.seq > 0 ? ` at entry ${this.seq}` : ""}: ${this.detail} Nobody's approval counts until it does; restore .ratchet/approvers.json from version control (git checkout -- .ratchet/approvers.json), or see ratchet approver list.`
  }
}

const fail = (seq: number, reason: ChainError["reason"], detail: string) => Either.left(new ChainError({ seq, reason, detail }))

/**
 * Extends `trust` by one entry, checking its place, its link, its signer and its effect.
 *
 * @since 0.2.0
 * @category constructors
 */
export const extend = (
  projectId: string,
  trust: Trust,
  entry: Entry,
  verify: Signature.Verify
): Either.Either<Trust, ChainError> => {
  const seq = entry.seq
  if (seq !== trust.length + 1) return fail(seq, "out_of_order", `expected entry ${trust.length + 1}, found entry ${seq}.`)
  if (trust.length >= maxEntries) return fail(seq, "too_long", `a chain has at most ${maxEntries} entries.`)
  if (entry.prev !== trust.head) {
    return fail(seq, "broken_link", `it names ${entry.prev ?? "no previous entry"} as the entry before it, but that entry is ${trust.head ?? "absent"}.`)
  }
  if (trust.length === 0) {
    if (entry.op !== "add") return fail(seq, "genesis_not_add", "the first entry must add its signer.")
    if (entry.signature.key !== entry.approver.key) {
      return fail(seq, "genesis_not_self_signed", "the first entry must be signed by the key it adds.")
    }
  } else if (!trust.approvers.some((approver) => approver.key === entry.signature.key)) {
    return fail(seq, "signer_not_approver", `it is signed by ${Signature.fingerprint(entry.signature.key)}, which is not an approver before it.`)
  }
  if (!Signature.holds(verify, entry.signature, "ratchet/approvers-entry/1", entryFields(projectId, entry))) {
    return fail(seq, "bad_signature", "its signature does not match its content (edited, or signed for another project).")
  }
  const { id, key } = entry.approver
  if (entry.op === "add") {
    if (trust.approvers.some((approver) => approver.id === id)) return fail(seq, "duplicate_id", `${id} is already an approver.`)
    if (trust.approvers.some((approver) => approver.key === key)) {
      return fail(seq, "duplicate_key", `the key ${Signature.fingerprint(key)} is already an approver's.`)
    }
    return Either.right({ head: entryDigest(entry), length: seq, approvers: [...trust.approvers, { id, key }] })
  }
  if (!trust.approvers.some((approver) => approver.id === id && approver.key === key)) {
    return fail(seq, "unknown_approver", `it removes ${id} (${Signature.fingerprint(key)}), who is not an approver.`)
  }
  if (trust.approvers.length === 1) return fail(seq, "last_approver", "it removes the last approver; add another one first.")
  return Either.right({ head: entryDigest(entry), length: seq, approvers: trust.approvers.filter((approver) => approver.key !== key) })
}

/**
 * Verifies a whole chain, from nothing (or from `from`, a trust already verified, with `entries`
 * continuing it).
 *
 * @since 0.2.0
 * @category constructors
 */
export const verify = (
  projectId: string,
  entries: ReadonlyArray<Entry>,
  check: Signature.Verify,
  from: Trust = none
): Either.Either<Trust, ChainError> => {
  let trust = from
  for (const entry of entries) {
    const next = extend(projectId, trust, entry, check)
    if (Either.isLeft(next)) return next
    trust = next.right
  }
  return Either.right(trust)
}

/**
 * Verifies a committed approvers file: its project, then its chain.
 *
 * @since 0.2.0
 * @category constructors
 */
export const verifyFile = (projectId: string, file: File, check: Signature.Verify): Either.Either<Trust, ChainError> =>
  file.projectId !== projectId
    ? fail(0, "wrong_project", `the file is for project ${JSON.stringify(file.projectId.slice(0, 64))}, not ${projectId}.`)
    : verify(projectId, file.entries, check)

/**
 * How a file's chain stands to the one a store has recorded, entry by entry:
 * - `same`: the same entries;
 * - `ahead`: the file continues the recorded chain (`extra` are its entries beyond it);
 * - `behind`: the file is a shorter prefix of the recorded chain (an older checkout);
 * - `diverged`: they differ at `seq` (another genesis, an edited or a dropped entry).
 *
 * @since 0.2.0
 * @category constructors
 */
export const compare = (
  recorded: ReadonlyArray<Entry>,
  file: ReadonlyArray<Entry>
):
  | { readonly _tag: "same" }
  | { readonly _tag: "ahead"; readonly extra: ReadonlyArray<Entry> }
  | { readonly _tag: "behind"; readonly missing: number }
  | { readonly _tag: "diverged"; readonly seq: number } =>
{
  const shared = Math.min(recorded.length, file.length)
  for (let index = 0; index < shared; index++) {
    if (entryDigest(recorded[index] as Entry) !== entryDigest(file[index] as Entry)) return { _tag: "diverged", seq: index + 1 }
  }
  if (file.length === recorded.length) return { _tag: "same" }
  return file.length > recorded.length
    ? { _tag: "ahead", extra: file.slice(recorded.length) }
    : { _tag: "behind", missing: recorded.length - file.length }
}

/**
 * The approver a key belongs to, if any.
 *
 * @since 0.2.0
 * @category constructors
 */
export const byKey = (trust: Pick<Trust, "approvers">, key: string): Approver | undefined =>
  trust.approvers.find((approver) => approver.key === key)
