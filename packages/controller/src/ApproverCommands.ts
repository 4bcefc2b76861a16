/**
 * The use cases of a project's approvers (`ratchet approver …`): register the first approver,
 * sign another in or out, take a chain from the committed file, and list who is trusted.
 *
 * Every change is an entry signed by an approver the store already trusts (the genesis by its own
 * key), appended to the store's chain expecting its current version, then written to the
 * committed file. The store is written first: a crash between the two leaves the file behind the
 * store, which `ratchet approver list --write` (or the next change) repairs; never the reverse.
 *
 * @since 0.2.0
 */
import * as Approvers from "@ratchet/kernel/Approvers"
import type * as Event from "@ratchet/kernel/Event"
import * as Signature from "@ratchet/kernel/Signature"
import type * as EventStore from "@ratchet/storage/EventStore"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ApproverKey from "./ApproverKey.js"
import * as ControllerError from "./ControllerError.js"
import * as ProjectApprovers from "./ProjectApprovers.js"

/**
 * What `ratchet approver list` shows: who the store trusts, how the committed file stands to it,
 * and what to do when they differ.
 *
 * @since 0.2.0
 * @category models
 */
export interface Listing {
  readonly approvers: ReadonlyArray<Approvers.Approver>
  readonly length: number
  readonly head: string | null
  readonly file: ProjectApprovers.Standing
  readonly warning: string | null
}

/**
 * @since 0.2.0
 * @category constructors
 */
export const list = (projectId: string, root: string) =>
  Effect.map(ProjectApprovers.recorded(projectId), (chain): Listing => {
    const committed = ProjectApprovers.readFile(root)
    const file = ProjectApprovers.standing(chain, committed)
    return {
      approvers: chain.trust.approvers,
      length: chain.trust.length,
      head: chain.trust.head,
      file,
      warning: ProjectApprovers.warning(chain, file, committed)
    }
  })

/**
 * Writes the store's chain back to the committed file.
 *
 * @since 0.2.0
 * @category constructors
 */
export const writeBack = (projectId: string, root: string) =>
  Effect.flatMap(ProjectApprovers.recorded(projectId), (chain) => ProjectApprovers.writeFile(root, chain))

/** The next entry of `chain`, signed by `signer`. */
const entryBy = (
  chain: ProjectApprovers.Recorded,
  signer: ApproverKey.Signer,
  change: { readonly op: "add" | "remove"; readonly approver: Approvers.Approver },
  at: number
): Approvers.Entry => {
  const unsigned = { seq: chain.trust.length + 1, op: change.op, approver: change.approver, at, prev: chain.trust.head }
  const bytes = Signature.statement("ratchet/approvers-entry/1", Approvers.entryFields(chain.projectId, unsigned))
  if (bytes === null) throw new Error("an approvers entry always makes a statement")
  return { ...unsigned, signature: signer.sign(bytes) }
}

const refuse = (field: string, reason: string, fix: string) => Effect.fail(new ControllerError.InvalidRequest({ field, reason, fix }))

/** Appends `entry` after checking it continues `chain`, then writes the file. */
const record = (chain: ProjectApprovers.Recorded, entry: Approvers.Entry, actor: Event.Actor, at: number, root: string) =>
  Effect.gen(function*() {
    const next = Approvers.extend(chain.projectId, chain.trust, entry, ApproverKey.verify)
    if (Either.isLeft(next)) return yield* next.left
    yield* ProjectApprovers.append(chain, [entry], actor, at).pipe(
      Effect.catchTag("@ratchet/storage/VersionConflict", () =>
        refuse("approvers", "the project's approvers changed while this command ran; nothing was recorded.", "Run the command again."))
    )
    const warnings = yield* Effect.match(ProjectApprovers.writeFile(root, { projectId: chain.projectId, entries: [...chain.entries, entry] }), {
      onFailure: (error) => [`${ProjectApprovers.fileName} was not written (${error.message}); the store has the change. Write it: ratchet approver list --write`],
      onSuccess: () => [] as ReadonlyArray<string>
    })
    return { entry, trust: next.right, warnings }
  })

const noFault = (chain: ProjectApprovers.Recorded) =>
  chain.fault === null ? Effect.void : Effect.fail(chain.fault)

/**
 * A change is written over the committed file, so it is refused while the file holds entries the
 * store does not (ahead, or another chain): writing would erase the evidence of which one is right.
 * A file that is only behind, missing or unreadable is brought up to date by the change.
 */
const inStep = (chain: ProjectApprovers.Recorded, root: string) => {
  const committed = ProjectApprovers.readFile(root)
  const found = ProjectApprovers.standing(chain, committed)
  const tripped = found._tag === "ahead" || found._tag === "diverged" ? ProjectApprovers.tripwire(chain, committed) : null
  return tripped === null ? Effect.void : Effect.fail(tripped)
}

/**
 * Registers `signer` as the project's first approver (trust on first use), or says why not: the
 * project already has approvers (in the store, or in the committed file this store has not taken
 * yet), and an approver signs newcomers in. Already an approver: nothing is written.
 *
 * @since 0.2.0
 * @category constructors
 */
export const register = (projectId: string, root: string, signer: ApproverKey.Signer, at: number) =>
  Effect.gen(function*() {
    const chain = yield* ProjectApprovers.recorded(projectId)
    yield* noFault(chain)
    const mine = Approvers.byKey(chain.trust, signer.key)
    if (mine !== undefined) return { registered: false, approver: mine, warnings: [] as ReadonlyArray<string> }
    if (chain.entries.length > 0) {
      return yield* refuse(
        "approver",
        `this project already has ${chain.trust.approvers.length} approver(s) (${chain.trust.approvers.map((a) => a.id).join(", ")}), and your key is not one of them.`,
        `Ask one of them to run: ratchet approver add ${signer.id} ${signer.key}`
      )
    }
    const committed = ProjectApprovers.readFile(root)
    if (committed._tag === "present" && committed.file.entries.length > 0) {
      return yield* refuse(
        "approver",
        `${ProjectApprovers.fileName} already names approvers this store has not taken yet.`,
        `Check them, trust them once (ratchet approver trust), then ask one of them to run: ratchet approver add ${signer.id} ${signer.key}`
      )
    }
    const approver = { id: signer.id, key: signer.key }
    const done = yield* record(chain, entryBy(chain, signer, { op: "add", approver }, at), { kind: "user", id: signer.id }, at, root)
    return { registered: true, approver, warnings: done.warnings }
  })

/**
 * Signs `approver` in, by `signer`, an approver the store trusts.
 *
 * @since 0.2.0
 * @category constructors
 */
export const add = (projectId: string, root: string, signer: ApproverKey.Signer, approver: Approvers.Approver, at: number) =>
  Effect.gen(function*() {
    const chain = yield* ProjectApprovers.recorded(projectId)
    yield* noFault(chain)
    yield* inStep(chain, root)
    if (Approvers.byKey(chain.trust, signer.key) === undefined) {
      return yield* refuse(
        "approver",
        `your key (${Signature.fingerprint(signer.key)}) is not one of this project's approvers, so it cannot sign anyone in.`,
        chain.entries.length === 0 ? "Register yourself first: ratchet approver init" : "Ask an approver to run this command."
      )
    }
    return yield* record(chain, entryBy(chain, signer, { op: "add", approver }, at), { kind: "user", id: signer.id }, at, root)
  })

/**
 * Signs approver `id` out, by `signer`, an approver the store trusts.
 *
 * @since 0.2.0
 * @category constructors
 */
export const remove = (projectId: string, root: string, signer: ApproverKey.Signer, id: string, at: number) =>
  Effect.gen(function*() {
    const chain = yield* ProjectApprovers.recorded(projectId)
    yield* noFault(chain)
    yield* inStep(chain, root)
    if (Approvers.byKey(chain.trust, signer.key) === undefined) {
      return yield* refuse("approver", `your key (${Signature.fingerprint(signer.key)}) is not one of this project's approvers.`, "Ask an approver to run this command.")
    }
    const approver = chain.trust.approvers.find((known) => known.id === id)
    if (approver === undefined) {
      return yield* refuse("<id>", `${JSON.stringify(id.slice(0, 64))} is not an approver of this project.`, "See who is: ratchet approver list")
    }
    return yield* record(chain, entryBy(chain, signer, { op: "remove", approver }, at), { kind: "user", id: signer.id }, at, root)
  })

/**
 * What taking the committed chain would do: nothing (the same), continue the store's chain with
 * entries its approvers signed, or, on a store that trusts nobody yet, adopt the file's chain
 * whole (trust on first use: the person must confirm its head).
 *
 * @since 0.2.0
 * @category models
 */
export type Adoption =
  | { readonly _tag: "nothing" }
  | { readonly _tag: "extend"; readonly extra: ReadonlyArray<Approvers.Entry>; readonly trust: Approvers.Trust }
  | { readonly _tag: "first"; readonly entries: ReadonlyArray<Approvers.Entry>; readonly trust: Approvers.Trust }

const adoptionOf = (chain: ProjectApprovers.Recorded, root: string) =>
  Effect.gen(function*() {
    yield* noFault(chain)
    const committed = ProjectApprovers.readFile(root)
    if (committed._tag === "missing") {
      return yield* refuse("approvers", `there is no ${ProjectApprovers.fileName} to trust.`, "Register the first approver with: ratchet approver init")
    }
    if (committed._tag === "invalid") {
      return yield* refuse("approvers", `${ProjectApprovers.fileName} cannot be used: ${committed.reason}`, `Restore it: git checkout -- ${ProjectApprovers.fileName}`)
    }
    const verified = Approvers.verifyFile(chain.projectId, committed.file, ApproverKey.verify)
    if (Either.isLeft(verified)) return yield* verified.left
    const found = Approvers.compare(chain.entries, committed.file.entries)
    switch (found._tag) {
      case "same":
      case "behind":
        return { _tag: "nothing" } satisfies Adoption
      case "diverged":
        // A store never trusts another chain once it has one; which of the two is right is for a
        // person to find out (the tripwire's refusal says how).
        return yield* Effect.fail(ProjectApprovers.tripwire(chain, committed) ?? new ControllerError.InvalidRequest({ field: "approvers", reason: "the file differs from the store's chain.", fix: "ratchet approver list" }))
      case "ahead":
        return chain.entries.length === 0
          ? ({ _tag: "first", entries: found.extra, trust: verified.right } satisfies Adoption)
          : ({ _tag: "extend", extra: found.extra, trust: verified.right } satisfies Adoption)
    }
  })

/**
 * What {@link trust} would take, for the person to confirm a first chain before it is trusted.
 *
 * @since 0.2.0
 * @category constructors
 */
export const adoption = (projectId: string, root: string) => Effect.flatMap(ProjectApprovers.recorded(projectId), (chain) => adoptionOf(chain, root))

/**
 * Takes the committed chain into the store: entries that continue the store's chain (signed by
 * its approvers, checked link by link), or a first chain when `confirmedHead` is the head the
 * person was shown (`adoption`) and confirmed.
 *
 * @since 0.2.0
 * @category constructors
 */
export const trust = (projectId: string, root: string, actor: Event.Actor, at: number, confirmedHead: string | null) =>
  Effect.gen(function*() {
    const chain = yield* ProjectApprovers.recorded(projectId)
    const found = yield* adoptionOf(chain, root)
    if (found._tag === "nothing") return { taken: 0, approvers: chain.trust.approvers }
    const entries = found._tag === "extend" ? found.extra : found.entries
    if (found._tag === "first" && confirmedHead !== found.trust.head) {
      return yield* refuse(
        "confirmation",
        "a first chain is trusted only when you confirm its head, after checking who its approvers are.",
        "Run ratchet approver trust in a terminal and type the confirmation it asks for."
      )
    }
    yield* ProjectApprovers.append(chain, entries, actor, at).pipe(
      Effect.catchTag("@ratchet/storage/VersionConflict", () =>
        refuse("approvers", "the project's approvers changed while this command ran; nothing was recorded.", "Run the command again."))
    )
    return { taken: entries.length, approvers: found.trust.approvers }
  })

/**
 * The services these use cases need.
 *
 * @since 0.2.0
 * @category models
 */
export type Requirements = EventStore.EventStore
