/**
 * The unattended verifier's key (ADR 0041): the approval key the person made for the verifier that
 * `ratchet run --until-verified` signs its verdicts and the completion with, and how the runner
 * gets its passphrase.
 *
 * Only signed verdicts count (ADR 0018), so an unattended verifier needs a key of its own, one of
 * the project's approvers, and its passphrase at hand:
 * - `RATCHET_VERIFIER_KEY`: the key file (made with `ratchet approver init` under
 *   `RATCHET_APPROVER_KEY=<that file>`, registered with `ratchet approver add`);
 * - `RATCHET_VERIFIER_PASSPHRASE_FILE`: a file holding its passphrase (its first line), or
 *   `RATCHET_VERIFIER_PASSPHRASE`: the passphrase itself (a CI secret).
 *
 * The runner reads them once, unlocks the key before anything runs, and removes the passphrase's
 * variables from its own environment, so no process it starts (an agent, a step's command, a
 * verify command) inherits them; {@link strip} removes them from any environment made for a child
 * as well. Anything missing or wrong refuses the run up front (fail closed), naming the fix: there
 * is no unsigned path to COMPLETED.
 *
 * The verifier is not the worker: a key whose approver id is the runner's own invoker's is refused
 * (the runner acts as `runner:<id>`; its verdicts would be a person verifying their own run).
 *
 * @since 0.5.0
 */
import type * as Authority from "@ratchet/kernel/Authority"
import type * as Event from "@ratchet/kernel/Event"
import * as Either from "effect/Either"
import * as fs from "node:fs"
import * as ApproverKey from "./ApproverKey.js"
import * as ControllerError from "./ControllerError.js"

/**
 * The variables that configure the unattended verifier.
 *
 * @since 0.5.0
 * @category models
 */
export const variables = {
  key: "RATCHET_VERIFIER_KEY",
  passphrase: "RATCHET_VERIFIER_PASSPHRASE",
  passphraseFile: "RATCHET_VERIFIER_PASSPHRASE_FILE"
} as const

/**
 * The variables no child process is given: the passphrase, and where it is.
 *
 * @since 0.5.0
 * @category models
 */
export const secretVariables: ReadonlyArray<string> = [variables.passphrase, variables.passphraseFile]

/**
 * `env` without the verifier's secrets.
 *
 * @since 0.5.0
 * @category constructors
 */
export const strip = <E extends Readonly<Record<string, string | undefined>>>(env: E): E => {
  const copy: Record<string, string | undefined> = { ...env }
  for (const name of secretVariables) delete copy[name]
  return copy as E
}

/** The fix every refusal names: how to give the runner a verifier key. */
export const setup =
  "Make a key for the verifier (RATCHET_APPROVER_KEY=<file> ratchet approver init --id <verifier-id>), register it (ratchet approver add <verifier-id> <key>), then set RATCHET_VERIFIER_KEY=<file> and RATCHET_VERIFIER_PASSPHRASE_FILE=<a file holding its passphrase> (or RATCHET_VERIFIER_PASSPHRASE)."

const refuse = (field: string, reason: string, fix: string = setup) =>
  Either.left(new ControllerError.InvalidRequest({ field, reason, fix }))

/** The longest passphrase file read: a passphrase is a line. */
const maxPassphraseBytes = 4096

const readPassphraseFile = (file: string): Either.Either<string, ControllerError.InvalidRequest> => {
  try {
    const handle = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW)
    try {
      const stat = fs.fstatSync(handle)
      if (!stat.isFile() || stat.size > maxPassphraseBytes) {
        return refuse(variables.passphraseFile, `${file} is not a passphrase file (a regular file of at most ${maxPassphraseBytes} bytes).`)
      }
      const text = fs.readFileSync(handle, "utf8")
      return Either.right(text.split(/\r?\n/)[0] ?? "")
    } finally {
      fs.closeSync(handle)
    }
  } catch (error) {
    return refuse(variables.passphraseFile, `${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)}).`)
  }
}

/**
 * The verifier's unlocked key from `env`, or why `--until-verified` is refused.
 *
 * @since 0.5.0
 * @category constructors
 */
export const unlock = (env: Readonly<Record<string, string | undefined>>): Either.Either<ApproverKey.Signer, ControllerError.InvalidRequest | ApproverKey.ApproverKeyError> => {
  const file = env[variables.key] ?? ""
  if (file === "") return refuse(variables.key, "--until-verified needs a verifier key of its own, and RATCHET_VERIFIER_KEY is not set: unsigned verdicts never count.")
  const fromFile = env[variables.passphraseFile] ?? ""
  const given = env[variables.passphrase] ?? ""
  const passphrase = fromFile !== "" ? readPassphraseFile(fromFile) : Either.right(given)
  if (Either.isLeft(passphrase)) return Either.left(passphrase.left)
  if (passphrase.right === "") {
    return refuse(
      variables.passphraseFile,
      `--until-verified needs the passphrase of the verifier key ${file}, and neither RATCHET_VERIFIER_PASSPHRASE_FILE nor RATCHET_VERIFIER_PASSPHRASE gives one.`
    )
  }
  const keyFile = ApproverKey.read(file)
  if (Either.isLeft(keyFile)) return Either.left(keyFile.left)
  return ApproverKey.unlock(keyFile.right, passphrase.right, file)
}

/**
 * Why `signer` cannot verify a run started by `invoker` under `authority`, or null: it must be one
 * of the project's approvers, and not the invoker (whose runner is the run's worker).
 *
 * @since 0.5.0
 * @category guards
 */
export const refusal = (signer: ApproverKey.Signer, invoker: Event.Actor, authority: Authority.Authority): ControllerError.InvalidRequest | null => {
  if (signer.id === invoker.id) {
    return new ControllerError.InvalidRequest({
      field: variables.key,
      reason: `the verifier key is ${signer.id}'s, who starts this run: the runner works as runner:${invoker.id}, and its verifier must be someone else.`,
      fix: setup
    })
  }
  const approver = authority.approvers.find((known) => known.key === signer.key)
  if (approver === undefined || approver.id !== signer.id) {
    return new ControllerError.InvalidRequest({
      field: variables.key,
      reason: `the verifier key ${signer.id} (${signer.key.slice(8, 20)}…) is not one of this project's approvers, so its verdicts would not count.`,
      fix: `Register it: ratchet approver add ${signer.id} ${signer.key}`
    })
  }
  return null
}
