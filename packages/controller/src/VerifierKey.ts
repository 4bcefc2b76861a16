/**
 * The unattended verifier's key (ADR 0041): the approval key the person made for the verifier that
 * `ratchet run --until-verified` signs its verdicts and the completion with, and how the runner
 * gets its passphrase.
 *
 * Only signed verdicts count (ADR 0018), so an unattended verifier needs a key of its own, one of
 * the project's approvers, and its passphrase at hand:
 * - `RATCHET_VERIFIER_KEY`: the key file (made with `ratchet approver init` under
 *   `RATCHET_APPROVER_KEY=<that file>`, registered with `ratchet approver add`);
 * - `RATCHET_VERIFIER_PASSPHRASE_FILE`: a file holding its passphrase (its first line).
 *
 * The passphrase is never in an environment variable (Amendment to ADR 0041): a process's
 * environment is readable by every process of the same user (`/proc/<pid>/environ`), the agent
 * included, for as long as the process lives, and deleting a variable later does not change it. So
 * `RATCHET_VERIFIER_PASSPHRASE` refuses the run, naming the file variable instead; `ratchet run`
 * reads the file itself and hands the passphrase to the runner over an inherited pipe
 * (`--verifier-passphrase-fd`), starting it without the file's name; a runner started directly
 * reads the file. {@link strip} removes every verifier variable from any environment made for a
 * child (an agent, a step's command, a verify command). Anything missing or wrong refuses the run
 * up front (fail closed), naming the fix: there is no unsigned path to COMPLETED.
 *
 * The verifier is not the worker nor the person it works for: a key that is the invoker's own
 * approval key, or whose approver signed this task's spec or plan approval, is refused (its
 * verdicts would be a person verifying their own run).
 *
 * @since 0.5.0
 */
import type * as Authority from "@ratchet/kernel/Authority"
import type * as Event from "@ratchet/kernel/Event"
import * as Either from "effect/Either"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
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
 * The runner's option naming the inherited descriptor `ratchet run` writes the passphrase to.
 *
 * @since 0.5.0
 * @category models
 */
export const passphraseFdOption = "verifier-passphrase-fd"

/**
 * The variables a runner started by `ratchet run` is not given: the passphrase, and where it is
 * (the runner gets the passphrase over a pipe).
 *
 * @since 0.5.0
 * @category models
 */
export const secretVariables: ReadonlyArray<string> = [variables.passphrase, variables.passphraseFile]

/**
 * The variables no process the runner starts is given: the secrets, and the key's file (an agent
 * has no business with the verifier's key, sealed or not).
 *
 * @since 0.5.0
 * @category models
 */
export const childVariables: ReadonlyArray<string> = [variables.key, ...secretVariables]

const without = <E extends Readonly<Record<string, string | undefined>>>(env: E, names: ReadonlyArray<string>): E => {
  const copy: Record<string, string | undefined> = { ...env }
  for (const name of names) delete copy[name]
  return copy as E
}

/**
 * `env` without any verifier variable: the environment of a step, an agent or a check.
 *
 * @since 0.5.0
 * @category constructors
 */
export const strip = <E extends Readonly<Record<string, string | undefined>>>(env: E): E => without(env, childVariables)

/**
 * `env` without the passphrase's variables: the environment `ratchet run` starts the runner with.
 *
 * @since 0.5.0
 * @category constructors
 */
export const forRunner = <E extends Readonly<Record<string, string | undefined>>>(env: E): E => without(env, secretVariables)

/** Where the verifier's set-up is described. */
const guide = "docs/guides/agent-steps.md, \"Loop until verified\""

/** The fix every refusal names: how to give the runner a verifier key. */
export const setup =
  `Make a key for the verifier (RATCHET_APPROVER_KEY=<file> ratchet approver init --id <verifier-id>), register it (ratchet approver add <verifier-id> <key>), then run with RATCHET_VERIFIER_KEY=<file> RATCHET_VERIFIER_PASSPHRASE_FILE=<a file holding its passphrase> ratchet run <task> --until-verified (see ${guide}).`

const refuse = (field: string, reason: string, fix: string = setup) =>
  Either.left(new ControllerError.InvalidRequest({ field, reason, fix }))

/**
 * Why the passphrase may not come from `RATCHET_VERIFIER_PASSPHRASE`, or null when it is unset.
 *
 * @since 0.5.0
 * @category guards
 */
export const variableRefusal = (env: Readonly<Record<string, string | undefined>>): ControllerError.InvalidRequest | null =>
  env[variables.passphrase] === undefined
    ? null
    : new ControllerError.InvalidRequest({
      field: variables.passphrase,
      reason:
        `the verifier's passphrase is in an environment variable, and every process of your user (the agent included) can read a process's environment in /proc/<pid>/environ for as long as it runs: it is refused rather than handed on.`,
      fix:
        `Unset ${variables.passphrase}; put the passphrase in a file outside the workspace and $RATCHET_HOME (umask 077; read -rs p; printf '%s\\n' "$p" > <file>) and name it on the command line: ${variables.passphraseFile}=<file> ${variables.key}=<key> ratchet run <task> --until-verified (see ${guide}).`
    })

/** The longest passphrase read: a passphrase is a line. */
const maxPassphraseBytes = 4096

const firstLine = (text: string) => text.split(/\r?\n/)[0] ?? ""

/**
 * Where a passphrase file may not be: the workspace (the project's root, which the agent edits and
 * whose files a step may read or commit) and `$RATCHET_HOME` (where the agent's runs and logs are).
 *
 * @since 0.5.0
 * @category models
 */
export interface Places {
  readonly workspace?: string | null | undefined
  readonly home?: string | null | undefined
}

/**
 * The Ratchet project `from` is in (the nearest directory at or above it holding
 * `.ratchet/project.json`), or null: where a runner started directly looks for the workspace
 * before it has located it.
 *
 * @since 0.5.0
 * @category constructors
 */
export const workspaceOf = (from: string): string | null => {
  for (let directory = path.resolve(from); ; directory = path.dirname(directory)) {
    if (fs.existsSync(path.join(directory, ".ratchet", "project.json"))) return directory
    if (path.dirname(directory) === directory) return null
  }
}

const realOf = (place: string): string => {
  try {
    return fs.realpathSync(place)
  } catch {
    return path.resolve(place)
  }
}

const within = (directory: string, file: string): boolean => {
  const relative = path.relative(realOf(directory), file)
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative))
}

/** How a passphrase file with several names (hard links) gets back to one. */
const freshCopy = (file: string): string =>
  `list its other names (find / -xdev -samefile ${file} 2>/dev/null) and remove them, each of which reads the passphrase; or make a fresh file with one name: umask 077; cp ${file} ${file}.new && rm ${file} && mv ${file}.new ${file}, then remove the old names all the same`

/** Why the passphrase file's owner, mode, names or place is refused (as ssh refuses a key others can read), or null. */
const exposure = (file: string, stat: fs.Stats, places: Places): string | null => {
  const uid = typeof process.getuid === "function" ? process.getuid() : null
  if (uid !== null && stat.uid !== uid) {
    return `${file} is owned by uid ${stat.uid}, not by you (uid ${uid}): whoever owns it can change or read the verifier's passphrase. Make your own: umask 077; read -rs p; printf '%s\\n' "$p" > <file>`
  }
  if ((stat.mode & 0o077) !== 0) {
    return `${file} has mode ${(stat.mode & 0o777).toString(8).padStart(3, "0")}, so other users (its group or everyone) may read the verifier's passphrase; it must be readable by you alone. Fix: chmod 600 ${file}`
  }
  // The sandbox hides the file by its path (ADR 0043): a second name of it (a hard link) would not be.
  if (stat.nlink > 1) {
    return `${file} has ${stat.nlink} names (hard links), and the loop's sandbox hides only this one: any other name reads the verifier's passphrase. Fix: ${freshCopy(file)}`
  }
  const real = realOf(file)
  if (places.workspace !== undefined && places.workspace !== null && within(places.workspace, real)) {
    return `${file} is inside the workspace (${places.workspace}), where the agent works and a step may read or commit it. Move it outside the workspace and $RATCHET_HOME (for example under ~/.config), keeping mode 600.`
  }
  if (places.home !== undefined && places.home !== null && within(places.home, real)) {
    return `${file} is inside $RATCHET_HOME (${places.home}), where the runner's agents and their logs live. Move it outside the workspace and $RATCHET_HOME (for example under ~/.config), keeping mode 600.`
  }
  return null
}

/**
 * The passphrase in `file` (its first line), or why it cannot be read. The file is opened without
 * following a symbolic link and without blocking (a FIFO would otherwise wait for a writer), and
 * read only when it is a regular file that you own, that nobody else may read or write (no group
 * or other bits in its mode, as ssh asks of a key), and that is neither in the workspace nor in
 * `$RATCHET_HOME` (`places`). A first line that is empty or only whitespace is refused, never tried
 * as the passphrase.
 *
 * @since 0.5.0
 * @category constructors
 */
export const readPassphraseFile = (file: string, places: Places = {}): Either.Either<string, ControllerError.InvalidRequest> => {
  try {
    const handle = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK)
    try {
      const stat = fs.fstatSync(handle)
      if (!stat.isFile() || stat.size > maxPassphraseBytes) {
        return refuse(
          variables.passphraseFile,
          `${file} is not a passphrase file (${stat.isFile() ? `it has ${stat.size} bytes` : "it is not a regular file"}; a passphrase file is a regular file of at most ${maxPassphraseBytes} bytes).`
        )
      }
      const exposed = exposure(file, stat, places)
      if (exposed !== null) return refuse(variables.passphraseFile, exposed, `${exposed.includes("chmod 600") ? `chmod 600 ${file}` : stat.nlink > 1 ? freshCopy(file) : `Keep the passphrase file outside the workspace and $RATCHET_HOME, owned by you, mode 600`} (see ${guide}).`)
      const passphrase = firstLine(fs.readFileSync(handle, "utf8"))
      // An empty or blank first line is a file made wrong (a `read` that got nothing, a redirect
      // that truncated it), not a passphrase: trying it would only say the key does not open.
      if (passphrase.trim() === "") {
        return refuse(
          variables.passphraseFile,
          `${file} holds no passphrase: its first line is ${passphrase === "" ? "empty" : "only whitespace"}, and the passphrase is the first line.`,
          `Write the verifier key's passphrase on the file's first line: umask 077; read -rs p; printf '%s\\n' "$p" > ${file}. ${setup}`
        )
      }
      return Either.right(passphrase)
    } finally {
      fs.closeSync(handle)
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    return code === "ELOOP"
      ? refuse(variables.passphraseFile, `${file} is a symbolic link; name the file itself.`)
      : refuse(variables.passphraseFile, `${file} cannot be read (${code ?? String(error)}).`)
  }
}

/** How long the runner waits for what `ratchet run` writes to the descriptor, and closes it after. */
const fdWaitMs = 5_000

/** Copies its standard input to its standard output, to the end (the parent bounds how much it takes). */
const fdReader = "process.stdin.pipe(process.stdout)"

/**
 * What `ratchet run` writes to the runner's descriptor: the passphrase on the first line, and the
 * passphrase file's path as a JSON string on the second, so the runner can hide the file from the
 * loop's children (ADR 0043) without the path ever being in its environment or command line.
 *
 * @since 0.5.0
 * @category constructors
 */
export const pipeText = (passphrase: string, file: string): string => `${passphrase}\n${JSON.stringify(file)}\n`

/** The passphrase file's path on the second line of what came over the pipe, or null. */
const fileLine = (text: string): string | null => {
  const line = text.split(/\r?\n/)[1] ?? ""
  try {
    const file: unknown = line === "" ? null : JSON.parse(line)
    return typeof file === "string" && file !== "" ? file : null
  } catch {
    return null
  }
}

/**
 * The passphrase `ratchet run` wrote to the inherited descriptor `fd` (its first line; the writer
 * closes its end) and the passphrase file's path when it followed ({@link pipeText}), or why there
 * is none. The descriptor is closed after, so no child inherits it.
 *
 * It is read by a short-lived child given the descriptor as its standard input, and killed after
 * `waitMs` (5 s): a descriptor that blocks (a pipe whose writer neither writes nor closes it, a
 * terminal) can never hold the runner, whether it is blocking or not. Nothing by then, nothing at
 * all, or no end, is refused on the option's field, naming what happened.
 *
 * @since 0.5.0
 * @category constructors
 */
export const readPassphraseFd = (
  fd: number,
  waitMs: number = fdWaitMs
): Either.Either<{ readonly passphrase: string; readonly file: string | null }, ControllerError.InvalidRequest> => {
  const field = `--${passphraseFdOption}`
  const fix = `Start the runner with ratchet run, which writes the passphrase there and closes it; a runner started directly reads the file ${variables.passphraseFile} names instead.`
  const seconds = `${Math.round(waitMs / 100) / 10} s`
  try {
    const read = spawnSync(process.execPath, ["-e", fdReader], {
      stdio: [fd, "pipe", "ignore"],
      env: {},
      timeout: waitMs,
      killSignal: "SIGKILL",
      maxBuffer: 2 * maxPassphraseBytes
    })
    const got = read.stdout ?? Buffer.alloc(0)
    if (got.length > maxPassphraseBytes) return refuse(field, `descriptor ${fd} carried more than ${maxPassphraseBytes} bytes; a passphrase is a line.`, fix)
    if (read.error !== undefined || read.status !== 0) {
      const code = (read.error as NodeJS.ErrnoException | undefined)?.code
      if (code === "ETIMEDOUT" || read.signal !== null) {
        return refuse(
          field,
          got.length === 0
            ? `nothing arrived on descriptor ${fd} within ${seconds}: its writer neither wrote the verifier's passphrase nor closed it.`
            : `descriptor ${fd} was not closed within ${seconds} after ${got.length} bytes: its writer did not end what it wrote.`,
          fix
        )
      }
      return refuse(field, `descriptor ${fd} cannot be read (${code ?? `its reader exited with ${read.status}`}).`, fix)
    }
    const text = got.toString("utf8")
    const passphrase = firstLine(text)
    if (passphrase === "") return refuse(field, `descriptor ${fd} was closed with no passphrase on it (an empty first line).`, fix)
    return Either.right({ passphrase, file: fileLine(text) })
  } catch (error) {
    return refuse(field, `descriptor ${fd} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)}).`, fix)
  } finally {
    try {
      fs.closeSync(fd)
    } catch {
      // Already closed.
    }
  }
}

/**
 * The verifier's unlocked key from `env`, or why `--until-verified` is refused. `given` is the
 * passphrase when it came another way (the pipe from `ratchet run`); otherwise it is read from the
 * file `RATCHET_VERIFIER_PASSPHRASE_FILE` names, which may not be in `places`.
 *
 * @since 0.5.0
 * @category constructors
 */
export const unlock = (
  env: Readonly<Record<string, string | undefined>>,
  given: string | null = null,
  places: Places = {}
): Either.Either<ApproverKey.Signer, ControllerError.InvalidRequest | ApproverKey.ApproverKeyError> => {
  const inVariable = variableRefusal(env)
  if (inVariable !== null) return Either.left(inVariable)
  const file = env[variables.key] ?? ""
  if (file === "") return refuse(variables.key, "--until-verified needs a verifier key of its own, and RATCHET_VERIFIER_KEY is not set: unsigned verdicts never count.")
  const fromFile = env[variables.passphraseFile] ?? ""
  const passphrase = given !== null ? Either.right(given) : fromFile !== "" ? readPassphraseFile(fromFile, places) : Either.right("")
  if (Either.isLeft(passphrase)) return Either.left(passphrase.left)
  if (passphrase.right === "") {
    return refuse(
      variables.passphraseFile,
      `--until-verified needs the passphrase of the verifier key ${file}, and RATCHET_VERIFIER_PASSPHRASE_FILE names no file that gives one.`
    )
  }
  const keyFile = ApproverKey.read(file)
  // The key's own error would say "ratchet approver init", which makes the person's key, not the verifier's.
  if (Either.isLeft(keyFile)) return refuse(variables.key, `RATCHET_VERIFIER_KEY=${file}: ${keyFile.left.detail}`)
  return ApproverKey.unlock(keyFile.right, passphrase.right, file)
}

/**
 * The public key of the person's own approval key (`RATCHET_APPROVER_KEY`, else
 * `approver-key.json` in `home`), or null when there is none to read.
 *
 * @since 0.5.0
 * @category constructors
 */
export const personKeyOf = (env: Readonly<Record<string, string | undefined>>, home: string): string | null => {
  const given = env["RATCHET_APPROVER_KEY"]
  const file = given !== undefined && given.trim() !== "" ? path.resolve(given) : path.join(home, "approver-key.json")
  const read = ApproverKey.read(file)
  return Either.isRight(read) ? read.right.publicKey : null
}

/**
 * Who `signer` must not be: the invoker (whose runner is the run's worker), the person's own
 * approval key, and the approvers who signed the task's spec or plan.
 *
 * @since 0.5.0
 * @category models
 */
export interface Others {
  readonly invoker: Event.Actor
  /** The public key of the invoker's own approval key (`personKeyOf`), or null. */
  readonly personKey: string | null
  /** The approver ids on the task's spec and plan approval receipts. */
  readonly approvedBy: ReadonlyArray<string>
}

/**
 * Why `signer` cannot verify a run under `authority`, or null: it must be one of the project's
 * approvers, and none of {@link Others}.
 *
 * @since 0.5.0
 * @category guards
 */
export const refusal = (signer: ApproverKey.Signer, others: Others, authority: Authority.Authority): ControllerError.InvalidRequest | null => {
  const invalid = (reason: string) => new ControllerError.InvalidRequest({ field: variables.key, reason, fix: setup })
  if (others.personKey !== null && others.personKey === signer.key) {
    return invalid(
      `the verifier key is your own approval key (${signer.id}; RATCHET_APPROVER_KEY or $RATCHET_HOME/approver-key.json): the run works for you, and its verifier must be a key of its own.`
    )
  }
  if (signer.id === others.invoker.id) {
    return invalid(`the verifier key is ${signer.id}'s, who starts this run: the runner works as runner:${others.invoker.id}, and its verifier must be someone else.`)
  }
  if (others.approvedBy.includes(signer.id)) {
    return invalid(`${signer.id} approved this task's spec or plan: the approver who set the contract does not verify the run unattended.`)
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
