/**
 * How a person gives a person-only act on the terminal: see what is decided and its digest, type
 * the digest's first characters, then the passphrase of their approval key, which unlocks the key
 * for this one command. The act is signed with it; nothing here keeps the passphrase or the key.
 *
 * The key file is `RATCHET_APPROVER_KEY`, or `$RATCHET_HOME/approver-key.json`. Without a terminal,
 * or without a key file, nobody is asked and the act goes to the controller unsigned: the kernel's
 * gate (or the controller, for acts it records itself) refuses it and says what to do.
 *
 * @since 0.2.0
 */
import * as path from "node:path"
import * as ApproverKey from "@ratchet/controller/ApproverKey"
import * as Controller from "@ratchet/controller/Controller"
import * as ControllerError from "@ratchet/controller/ControllerError"
import type * as Digest from "@ratchet/kernel/Digest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Render from "./Render.js"
import * as Store from "./Store.js"
import * as Terminal from "./Terminal.js"

/**
 * The approval key file of this invocation.
 *
 * @since 0.2.0
 * @category constructors
 */
export const keyPath = (): string => {
  const given = process.env["RATCHET_APPROVER_KEY"]
  return given !== undefined && given.trim() !== "" ? path.resolve(given) : path.join(Store.home(), "approver-key.json")
}

/**
 * What a person gave: the digest they confirmed, the channel, and their unlocked key (absent off
 * a terminal or without a key file: the act is then unsigned).
 *
 * @since 0.2.0
 * @category models
 */
export interface Given {
  readonly digest: Digest.Digest
  readonly channel: "terminal" | "non-interactive"
  readonly signer: ApproverKey.Signer | undefined
}

const fromEither = <A, E>(either: Either.Either<A, E>): Effect.Effect<A, E> => Either.match(either, { onLeft: Effect.fail, onRight: Effect.succeed })

/**
 * Asks for the key's passphrase and unlocks it. `null` when there is no key file to unlock (the
 * act is then unsigned); a wrong passphrase or a damaged file fails, and nothing is recorded.
 *
 * @since 0.2.0
 * @category prompts
 */
export const unlock = (purpose: string): Effect.Effect<ApproverKey.Signer | null, ApproverKey.ApproverKeyError | ControllerError.InvalidRequest> =>
  Effect.gen(function*() {
    const file = keyPath()
    const read = ApproverKey.read(file)
    if (Either.isLeft(read) && read.left.reason === "missing") return null
    const keyFile = yield* fromEither(read)
    const passphrase = yield* Terminal.askSecret(`Passphrase of the approval key of ${keyFile.id} (${keyFile.publicKey.slice(8, 20)}…) to ${purpose}: `)
    if (passphrase === null || passphrase === "") {
      return yield* new ControllerError.InvalidRequest({
        field: "passphrase",
        reason: "no passphrase was typed; nothing was signed or recorded.",
        fix: "Run the command again and type your approval key's passphrase."
      })
    }
    return yield* fromEither(ApproverKey.unlock(keyFile, passphrase, file))
  })

/**
 * What a person is shown before a person-only act: a heading, the text decided on, its digest, the
 * command that does it again, and what the passphrase is asked for.
 *
 * @since 0.3.0
 * @category models
 */
export interface Shown {
  readonly heading: string
  readonly text: string
  readonly digest: Digest.Digest
  /** How to try again, as a sentence's start: "Run ratchet approve t-… spec again". */
  readonly again: string
  /** What the passphrase unlocks the key for: "sign this spec". */
  readonly purpose: string
}

/**
 * Shows what is decided, asks for the confirmation of its digest and then for the passphrase; off
 * a terminal, or without a key file, asks nothing (the act is then unsigned, and refused where it
 * is judged). A mismatched confirmation decides nothing. Every person-only act goes through here:
 * a task's approvals and decisions ({@link give}) and a person's control of a lesson.
 *
 * @since 0.3.0
 * @category prompts
 */
export const confirm = (shown: Shown) =>
  Effect.gen(function*() {
    const channel = Terminal.channel()
    if (channel !== "terminal") return { digest: shown.digest, channel, signer: undefined } satisfies Given
    // Without a key there is nothing to sign with: nobody is asked, and the refusal says why.
    const found = ApproverKey.read(keyPath())
    if (Either.isLeft(found) && found.left.reason === "missing") return { digest: shown.digest, channel, signer: undefined } satisfies Given
    process.stderr.write(
      // Control characters are shown, never obeyed: a spec must not be able to redraw the screen
      // and hide what is being approved.
      `\n${shown.heading}:\n\n${Render.visible(shown.text.trimEnd())}\n\ndigest ${shown.digest}\n`
    )
    const expected = Controller.confirmationOf(shown.digest)
    const typed = yield* Terminal.ask(`Type the first ${Controller.confirmationLength} hex characters of the digest to approve (anything else cancels): `)
    if (typed === null || typed.trim().toLowerCase() !== expected) {
      return yield* new ControllerError.InvalidRequest({
        field: "confirmation",
        reason: typed === null ? "no confirmation was typed." : `"${typed.trim().slice(0, 20)}" does not match the digest; nothing was approved.`,
        fix: `${shown.again} and type the first ${Controller.confirmationLength} characters after "sha256:".`
      })
    }
    const signer = yield* unlock(shown.purpose)
    return { digest: shown.digest, channel, signer: signer ?? undefined } satisfies Given
  })

/**
 * Shows `subject`, asks for the confirmation of its digest and then for the passphrase; off a
 * terminal, asks nothing. A mismatched confirmation approves nothing.
 *
 * @since 0.2.0
 * @category prompts
 */
export const give = (subject: Controller.ApprovalSubject) =>
  confirm({
    heading: `${heading(subject)} of task ${subject.taskId}`,
    text: subject.text,
    digest: subject.digest,
    again: again(subject),
    purpose: `sign this ${subject.subject === "resolution" ? "decision" : subject.subject}`
  })

const heading = (subject: Controller.ApprovalSubject): string => {
  switch (subject.subject) {
    case "resolution":
      return "You are deciding about a step"
    case "unblock":
      return "You are lifting what blocks"
    case "rewind":
      return "You are rewinding"
    default:
      return `You are approving the ${subject.subject}`
  }
}

const again = (subject: Controller.ApprovalSubject): string => {
  switch (subject.subject) {
    case "resolution":
      return `Run the same ratchet unblock ${subject.taskId} --resolve … again`
    case "unblock":
      return `Run the same ratchet unblock ${subject.taskId} --to … again`
    case "rewind":
      return `Run the same ratchet rewind ${subject.taskId} --to … again`
    case "reopen":
      return `Run ratchet reopen ${subject.taskId} again`
    default:
      return `Run ratchet approve ${subject.taskId} ${subject.subject} again`
  }
}
