/**
 * `ratchet approver …`: your approval key and the project's approvers.
 *
 * - `init` makes your key (on a terminal: an id, a passphrase typed twice with the echo off) and,
 *   in a project with no approvers yet, registers you as its first approver (trust on first use).
 * - `show` prints your key's id, public key and file; no passphrase.
 * - `add <id> <key>` / `remove <id>`: an approver signs a teammate in or out.
 * - `list` shows whom the store trusts and how `.ratchet/approvers.json` stands; `--write` writes
 *   the store's chain back to the file.
 * - `trust` takes the committed chain into this store: entries an approver signed, or (a store
 *   that trusts nobody yet) a first chain you confirm after checking who is in it.
 *
 * Each command decodes, calls the controller and renders, as every command of the table does.
 *
 * @since 0.2.0
 */
import * as os from "node:os"
import * as ApproverKey from "@ratchet/controller/ApproverKey"
import * as Controller from "@ratchet/controller/Controller"
import * as ControllerError from "@ratchet/controller/ControllerError"
import * as Approvers from "@ratchet/kernel/Approvers"
import * as Signature from "@ratchet/kernel/Signature"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Approval from "./Approval.js"
import { type CommandSpec, type Env, ok, str } from "./Command.js"
import * as Render from "./Render.js"
import * as Terminal from "./Terminal.js"

const fromEither = <A, E>(either: Either.Either<A, E>): Effect.Effect<A, E> => Either.match(either, { onLeft: Effect.fail, onRight: Effect.succeed })

const onTerminal = (command: string) =>
  Terminal.channel() === "terminal"
    ? Effect.void
    : Effect.fail(
      new ControllerError.InvalidRequest({
        field: "terminal",
        reason: `ratchet approver ${command} asks for your passphrase, and needs an interactive terminal (standard input and standard error).`,
        fix: `Run it yourself in a terminal: ratchet approver ${command}`
      })
    )

/** Your key, unlocked with its passphrase; a missing key is an error here (there is nothing to sign with). */
const unlocked = (purpose: string) =>
  Effect.flatMap(Approval.unlock(purpose), (signer) =>
    signer === null
      ? Effect.fail(
        new ApproverKey.ApproverKeyError({
          reason: "missing",
          path: Approval.keyPath(),
          detail: "there is no approval key here.",
          fix: "Create yours: ratchet approver init"
        })
      )
      : Effect.succeed(signer))

const describe = (approver: Approvers.Approver): string => `${approver.id}  ${approver.key}`

const listingText = (listing: Controller.Service["approvers"]["list"] extends Effect.Effect<infer A, infer _E, infer _R> ? A : never, env: Env): string =>
  [
    listing.approvers.length === 0
      ? "No approvers: nothing in this project can be approved yet."
      : `Approvers (${listing.approvers.length}; chain of ${listing.length} entr${listing.length === 1 ? "y" : "ies"}):`,
    ...listing.approvers.map((approver) => `  ${describe(approver)}`),
    ...(listing.warning === null ? [] : [env.style.yellow(`warning: ${Render.visible(listing.warning)}`)])
  ].join("\n")

/** A new key: the person chooses the passphrase, typed twice, with the echo off. */
const newKey = (id: string, logN: number) =>
  Effect.gen(function*() {
    const file = Approval.keyPath()
    process.stderr.write(
      `Creating your approval key ${id} at ${file}.\nIts passphrase protects every approval you give: at least 10 characters; it is never stored.\n`
    )
    const first = yield* Terminal.askSecret("New passphrase: ")
    const second = first === null ? null : yield* Terminal.askSecret("The same passphrase again: ")
    if (first === null || second === null || first !== second) {
      return yield* new ControllerError.InvalidRequest({
        field: "passphrase",
        reason: first === null || second === null ? "no passphrase was typed." : "the two passphrases differ; no key was made.",
        fix: "Run ratchet approver init again and type the same passphrase twice."
      })
    }
    const made = yield* fromEither(ApproverKey.create({ id, passphrase: first, logN, at: Date.now() }, file))
    yield* fromEither(ApproverKey.write(file, made.file))
    return made.signer
  })

const idOf = (given: unknown): Effect.Effect<string, ControllerError.InvalidRequest> => {
  const id = typeof given === "string" ? given : os.userInfo().username
  return Schema.is(Approvers.ApproverId)(id)
    ? Effect.succeed(id)
    : Effect.fail(
      new ControllerError.InvalidRequest({
        field: "--id",
        reason: `${JSON.stringify(String(id).slice(0, 64))} is not an approver id (1 to 64 characters from A-Z a-z 0-9 . _ -, starting with a letter or digit).`,
        fix: "Name yourself: ratchet approver init --id <name>"
      })
    )
}

/**
 * The `ratchet approver …` commands, in the order help lists them.
 *
 * @since 0.2.0
 * @category commands
 */
export const commands: ReadonlyArray<CommandSpec> = [
  {
    name: "approver init",
    usage: "ratchet approver init [--id <name>] [--kdf-cost <14-20>]",
    summary: "Create your approval key and register it as this project's first approver",
    description: [
      "Person-only acts (approvals, reopening a FAILED task, settling a step, lifting a scope violation or a decision, rewinding, and verdicts) are signed with your approval key: an Ed25519 key whose private half is sealed under your passphrase (scrypt, 128 MiB per try by default) in $RATCHET_HOME/approver-key.json, or RATCHET_APPROVER_KEY, readable only by you. Every gate checks the signature against the project's approvers, so nothing an agent can produce without your passphrase counts.",
      "On an interactive terminal: makes the key when there is none (you type the passphrase twice), then, when the project has no approvers yet, registers you as the first one (trust on first use: the store records you, and .ratchet/approvers.json, which you commit, names you). When it already has approvers, prints your public key for one of them to add: ratchet approver add <id> <key>."
    ].join(" "),
    positionals: [],
    options: {
      id: { type: "string", valueName: "<name>", description: "Your approver id (default: your login name); receipts name you user:<id>." },
      "kdf-cost": {
        type: "string",
        valueName: "<14-20>",
        integer: { min: ApproverKey.kdfCost.min, max: ApproverKey.kdfCost.max },
        description: `log2 of scrypt's cost for a new key (default ${ApproverKey.kdfCost.default}: 128 MiB and about a third of a second per passphrase try; each step doubles both).`
      }
    },
    examples: ["ratchet approver init", "ratchet approver init --id ada"],
    needs: "project",
    run: (parsed, env) =>
      Effect.flatMap(Controller.Controller, (c) =>
        Effect.gen(function*() {
          yield* onTerminal("init")
          const file = Approval.keyPath()
          const existing = ApproverKey.read(file)
          let created = false
          let signer: ApproverKey.Signer
          if (Either.isLeft(existing) && existing.left.reason === "missing") {
            const cost = parsed.options["kdf-cost"]
            signer = yield* newKey(yield* idOf(parsed.options["id"]), typeof cost === "number" ? cost : ApproverKey.kdfCost.default)
            created = true
          } else {
            const keyFile = yield* fromEither(existing)
            if (typeof parsed.options["id"] === "string" && parsed.options["id"] !== keyFile.id) {
              return yield* new ControllerError.InvalidRequest({
                field: "--id",
                reason: `your key at ${file} is ${keyFile.id}'s; a key's id never changes.`,
                fix: "Leave --id out, or set RATCHET_APPROVER_KEY to another file for a new key."
              })
            }
            signer = yield* unlocked("register it")
          }
          const registered = yield* c.approvers.register(signer)
          const headline = registered.registered
            ? `Registered ${signer.id} as this project's first approver. Commit .ratchet/approvers.json.`
            : `${signer.id} is already an approver of this project.`
          return ok(
            { id: signer.id, key: signer.key, file, created, registered: registered.registered, warnings: registered.warnings },
            [
              created ? `Created the approval key of ${signer.id}: ${signer.key}\n  (${file}; back it up, and keep the passphrase to yourself)` : null,
              headline,
              ...registered.warnings.map((warning) => env.style.yellow(`warning: ${warning}`))
            ].filter((line): line is string => line !== null).join("\n")
          )
        }))
  },
  {
    name: "approver show",
    usage: "ratchet approver show",
    summary: "Show your approval key: its id, public key and file (no passphrase)",
    description: "Prints what another approver needs to register you (ratchet approver add <id> <key>). Reads the key file only; never asks for the passphrase.",
    positionals: [],
    options: {},
    examples: ["ratchet approver show", "ratchet approver show --json"],
    needs: "standalone",
    readsHome: true,
    run: () =>
      Effect.gen(function*() {
        const file = Approval.keyPath()
        const keyFile = yield* fromEither(ApproverKey.read(file))
        return ok(
          { id: keyFile.id, key: keyFile.publicKey, fingerprint: Signature.fingerprint(keyFile.publicKey), file, kdf: keyFile.kdf.name, kdfCost: keyFile.kdf.logN },
          `${keyFile.id} ${keyFile.publicKey}\nfile: ${file}\nregister it: ratchet approver add ${keyFile.id} ${keyFile.publicKey}`
        )
      })
  },
  {
    name: "approver add",
    usage: "ratchet approver add <id> <key>",
    summary: "Sign a teammate in as an approver of this project (interactive)",
    description:
      "An approver signs the new entry with their key (you type your passphrase), and the store and .ratchet/approvers.json record it; commit the file so other checkouts learn it (ratchet approver trust there). Nobody can add themselves: only a key the store already trusts signs anyone in.",
    positionals: [
      { name: "id", description: "The newcomer's approver id", required: true },
      { name: "key", description: "Their public key (ed25519:…, from their ratchet approver show)", required: true }
    ],
    options: {},
    examples: ["ratchet approver add grace ed25519:Zm9vYmFyYmF6cXV4cXV1eHF1dXhxdXV4cXV1eHF1dXg"],
    needs: "project",
    run: (parsed, env) =>
      Effect.flatMap(Controller.Controller, (c) =>
        Effect.gen(function*() {
          const approver = yield* fromEither(
            Either.mapLeft(
              Schema.decodeUnknownEither(Approvers.Approver)({ id: str(parsed, "id"), key: str(parsed, "key") }),
              (error) =>
                new ControllerError.InvalidRequest({
                  field: "<id> <key>",
                  reason: String(error.message).split("\n").slice(-1)[0] ?? "not an approver",
                  fix: "Pass the id and the key exactly as the newcomer's ratchet approver show prints them."
                })
            )
          )
          yield* onTerminal("add")
          const signer = yield* unlocked(`sign ${approver.id} in`)
          const done = yield* c.approvers.add(signer, approver)
          return ok(
            { added: approver, by: signer.id, warnings: done.warnings },
            [`Added ${describe(approver)} (signed by ${signer.id}). Commit .ratchet/approvers.json.`, ...done.warnings.map((w) => env.style.yellow(`warning: ${w}`))].join("\n")
          )
        }))
  },
  {
    name: "approver remove",
    usage: "ratchet approver remove <id>",
    summary: "Sign an approver out of this project (interactive)",
    description:
      "An approver signs the removal with their key; the last approver cannot be removed (add another first). Receipts the removed key signed stop counting at every gate from now on.",
    positionals: [{ name: "id", description: "The approver to remove", required: true }],
    options: {},
    examples: ["ratchet approver remove grace"],
    needs: "project",
    run: (parsed, env) =>
      Effect.flatMap(Controller.Controller, (c) =>
        Effect.gen(function*() {
          yield* onTerminal("remove")
          const signer = yield* unlocked(`sign ${str(parsed, "id")} out`)
          const done = yield* c.approvers.remove(signer, str(parsed, "id"))
          return ok(
            { removed: str(parsed, "id"), by: signer.id, warnings: done.warnings },
            [`Removed ${str(parsed, "id")} (signed by ${signer.id}). Commit .ratchet/approvers.json.`, ...done.warnings.map((w) => env.style.yellow(`warning: ${w}`))].join("\n")
          )
        }))
  },
  {
    name: "approver list",
    usage: "ratchet approver list [--write]",
    summary: "List whom this project's store trusts to approve, and how .ratchet/approvers.json stands",
    description:
      "The store's chain is the authority; the committed file is how other checkouts learn it, and the tripwire: while the store names approvers and the file says otherwise (missing, behind, ahead or diverged), every gate refuses until a person finds out which is right (git log -p -- .ratchet/approvers.json) and reconciles them. --write writes the store's chain to the file: only when the store is the right one.",
    positionals: [],
    options: { write: { type: "boolean", description: "Write the store's chain to .ratchet/approvers.json." } },
    examples: ["ratchet approver list", "ratchet approver list --write"],
    needs: "project",
    run: (parsed, env) =>
      Effect.flatMap(Controller.Controller, (c) =>
        Effect.gen(function*() {
          if (parsed.options["write"] === true) yield* c.approvers.writeBack
          const listing = yield* c.approvers.list
          return ok({ ...listing }, listingText(listing, env))
        }))
  },
  {
    name: "approver trust",
    usage: "ratchet approver trust",
    summary: "Take the approvers named in .ratchet/approvers.json into this store",
    description:
      "Entries that continue the store's chain are checked link by link (each signed by an approver before it) and recorded. A store that trusts nobody yet takes a first chain only from you, on an interactive terminal, after you check who is in it and type the confirmation of its head: trust on first use, as with an SSH host key. A file that contradicts the store's chain is refused.",
    positionals: [],
    options: {},
    examples: ["ratchet approver trust"],
    needs: "project",
    run: (_parsed, env) =>
      Effect.flatMap(Controller.Controller, (c) =>
        Effect.gen(function*() {
          const found = yield* c.approvers.adoption
          let confirmed: string | null = null
          if (found._tag === "first") {
            yield* onTerminal("trust")
            process.stderr.write(
              `\nThis store trusts nobody for this project yet. ${".ratchet/approvers.json"} names:\n\n${
                found.trust.approvers.map((approver) => `  ${Render.visible(describe(approver))}`).join("\n")
              }\n\nCheck with them that these are their keys. Trusting them lets them approve everything here.\nhead ${found.trust.head}\n`
            )
            const head = found.trust.head ?? ""
            const typed = yield* Terminal.ask(`Type the first ${Controller.confirmationLength} hex characters of the head to trust them (anything else cancels): `)
            if (typed === null || typed.trim().toLowerCase() !== Controller.confirmationOf(head)) {
              return yield* new ControllerError.InvalidRequest({ field: "confirmation", reason: "the confirmation does not match; nothing was trusted.", fix: "Run ratchet approver trust again." })
            }
            confirmed = head
          }
          const done = yield* c.approvers.trust(env.actor, confirmed)
          return ok(
            { taken: done.taken, approvers: done.approvers },
            done.taken === 0
              ? "Nothing to take: the store already has every entry of .ratchet/approvers.json."
              : `Took ${done.taken} entr${done.taken === 1 ? "y" : "ies"}; approvers now: ${done.approvers.map((a) => a.id).join(", ")}.`
          )
        }))
  }
]
