/**
 * A person's approval key: the Ed25519 key their person-only acts are signed with (approvals,
 * settlements, rewinds, verdicts), kept in one file only its owner can read, its private half
 * encrypted under a passphrase.
 *
 * The passphrase is stretched with scrypt (memory-hard: 2^17 × 8 × 128 bytes = 128 MiB and about
 * a third of a second per try by default, so guessing a passphrase from a copied key file is slow
 * and memory-bound) into an AES-256-GCM key that seals the private key's PKCS#8 bytes; the file
 * records the public key, the KDF's parameters, the salt, the nonce and the tag. Unlocking takes
 * the passphrase every time: nothing here caches it or the private key beyond the one process that
 * asked the person, so another process of the same user (an agent's shell) cannot use the key
 * without them. The file is written once, exclusively, with mode 0600 in a 0700 directory, and is
 * never overwritten.
 *
 * {@link verify} is the platform's Ed25519 check, the `Signature.Verify` every gate is given.
 *
 * @since 0.2.0
 */
import * as Approvers from "@ratchet/kernel/Approvers"
import * as Signature from "@ratchet/kernel/Signature"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"

const base64url = (min: number, max: number) =>
  Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9_-]*$/), Schema.minLength(min), Schema.maxLength(max))

/**
 * The least and the default scrypt cost (log2 of N). 14 is 16 MiB, the floor below which a
 * stolen file could be guessed cheaply; 17 (128 MiB) is the default.
 *
 * @since 0.2.0
 * @category models
 */
export const kdfCost = { min: 14, default: 17, max: 20 } as const

/**
 * The key file.
 *
 * @since 0.2.0
 * @category schemas
 */
export const KeyFile = Schema.Struct({
  schemaVersion: Schema.Literal(1),
  id: Approvers.ApproverId,
  publicKey: Signature.Key,
  kdf: Schema.Struct({
    name: Schema.Literal("scrypt"),
    logN: Schema.Int.pipe(Schema.between(kdfCost.min, kdfCost.max)),
    r: Schema.Literal(8),
    p: Schema.Literal(1),
    salt: base64url(22, 88)
  }),
  cipher: Schema.Struct({
    name: Schema.Literal("aes-256-gcm"),
    iv: base64url(16, 16),
    tag: base64url(22, 22),
    data: base64url(16, 1024)
  }),
  createdAt: Schema.Int.pipe(Schema.nonNegative())
})

/**
 * @since 0.2.0
 * @category models
 */
export type KeyFile = typeof KeyFile.Type

/**
 * An unlocked key for the life of one command: whose it is, and a signature over any bytes. It
 * holds the private key only in this process's memory.
 *
 * @since 0.2.0
 * @category models
 */
export interface Signer {
  readonly id: string
  readonly key: Signature.Key
  readonly sign: (message: Uint8Array) => Signature.Signature
}

/**
 * Why a key could not be created, read or unlocked, with the fix.
 *
 * @since 0.2.0
 * @category errors
 */
export class ApproverKeyError extends Schema.TaggedError<ApproverKeyError>()("@ratchet/controller/ApproverKeyError", {
  reason: Schema.Literal("missing", "exists", "unreadable", "malformed", "wrong_passphrase", "weak_passphrase", "unwritable"),
  path: Schema.String,
  detail: Schema.String,
  fix: Schema.String
}) {
  override get message(): string {
    return `Approval key ${this.path}: ${this.detail} ${this.fix}`
  }
}

/** The largest key file read: a real one is under 1 KiB. */
const maxFileBytes = 64 * 1024

/**
 * Ed25519 verification with the platform's crypto: `false`, never a throw, on any malformed input.
 *
 * @since 0.2.0
 * @category constructors
 */
export const verify: Signature.Verify = (key, message, value) => {
  try {
    const publicKey = crypto.createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: key.slice("ed25519:".length) }, format: "jwk" })
    return crypto.verify(null, message, publicKey, Buffer.from(value, "base64url"))
  } catch {
    return false
  }
}

const publicKeyOf = (privateKey: crypto.KeyObject): Signature.Key =>
  `ed25519:${String(crypto.createPublicKey(privateKey).export({ format: "jwk" }).x)}`

const signerOf = (id: string, privateKey: crypto.KeyObject): Signer => {
  const key = publicKeyOf(privateKey)
  return { id, key, sign: (message) => ({ key, value: crypto.sign(null, message, privateKey).toString("base64url") }) }
}

const derive = (passphrase: string, salt: Buffer, logN: number): Buffer =>
  crypto.scryptSync(passphrase.normalize("NFC"), salt, 32, { N: 2 ** logN, r: 8, p: 1, maxmem: 256 * 2 ** logN * 8 + 1024 * 1024 })

/**
 * Why `passphrase` is too weak to protect a key, or null: at least 10 characters, not all the
 * same, not only digits.
 *
 * @since 0.2.0
 * @category guards
 */
export const weakness = (passphrase: string): string | null => {
  const text = passphrase.normalize("NFC")
  if ([...text].length < 10) return "it has fewer than 10 characters."
  if (new Set(text).size < 4) return "it repeats too few characters."
  if (/^[0-9\s]*$/.test(text)) return "it is only digits."
  return null
}

/**
 * A new key for approver `id`, sealed under `passphrase`, and the signer it unlocks to.
 *
 * @since 0.2.0
 * @category constructors
 */
export const create = (
  input: { readonly id: string; readonly passphrase: string; readonly logN?: number; readonly at: number },
  file = "(new key)"
): Either.Either<{ readonly file: KeyFile; readonly signer: Signer }, ApproverKeyError> => {
  const weak = weakness(input.passphrase)
  if (weak !== null) {
    return Either.left(
      new ApproverKeyError({ reason: "weak_passphrase", path: file, detail: `the passphrase is too weak: ${weak}`, fix: "Choose a longer passphrase (a few words)." })
    )
  }
  const logN = input.logN ?? kdfCost.default
  const { privateKey } = crypto.generateKeyPairSync("ed25519")
  const salt = crypto.randomBytes(32)
  const iv = crypto.randomBytes(12)
  const cipher = crypto.createCipheriv("aes-256-gcm", derive(input.passphrase, salt, logN), iv)
  const sealed = Buffer.concat([cipher.update(privateKey.export({ format: "der", type: "pkcs8" })), cipher.final()])
  const keyFile: KeyFile = {
    schemaVersion: 1,
    id: input.id,
    publicKey: publicKeyOf(privateKey),
    kdf: { name: "scrypt", logN, r: 8, p: 1, salt: salt.toString("base64url") },
    cipher: { name: "aes-256-gcm", iv: iv.toString("base64url"), tag: cipher.getAuthTag().toString("base64url"), data: sealed.toString("base64url") },
    createdAt: input.at
  }
  return Either.right({ file: keyFile, signer: signerOf(input.id, privateKey) })
}

/**
 * Opens the key with `passphrase`. A wrong passphrase (or a file whose sealed bytes were altered)
 * fails the AES-GCM tag and is `wrong_passphrase`; a key that opens to another public key than
 * the file names is `malformed`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const unlock = (keyFile: KeyFile, passphrase: string, file: string): Either.Either<Signer, ApproverKeyError> => {
  let privateKey: crypto.KeyObject
  try {
    const decipher = crypto.createDecipheriv(
      "aes-256-gcm",
      derive(passphrase, Buffer.from(keyFile.kdf.salt, "base64url"), keyFile.kdf.logN),
      Buffer.from(keyFile.cipher.iv, "base64url")
    )
    decipher.setAuthTag(Buffer.from(keyFile.cipher.tag, "base64url"))
    const der = Buffer.concat([decipher.update(Buffer.from(keyFile.cipher.data, "base64url")), decipher.final()])
    privateKey = crypto.createPrivateKey({ key: der, format: "der", type: "pkcs8" })
  } catch {
    return Either.left(
      new ApproverKeyError({
        reason: "wrong_passphrase",
        path: file,
        detail: "the passphrase does not open this key; nothing was signed.",
        fix: "Type the passphrase you chose at ratchet approver init."
      })
    )
  }
  if (privateKey.asymmetricKeyType !== "ed25519" || publicKeyOf(privateKey) !== keyFile.publicKey) {
    return Either.left(
      new ApproverKeyError({
        reason: "malformed",
        path: file,
        detail: "the key inside does not match the public key the file names; the file was altered.",
        fix: "Restore the key file from your backup, or create a new key and have it registered."
      })
    )
  }
  return Either.right(signerOf(keyFile.id, privateKey))
}

/**
 * Reads and decodes the key file at `file`; `missing` when there is none.
 *
 * @since 0.2.0
 * @category constructors
 */
export const read = (file: string): Either.Either<KeyFile, ApproverKeyError> => {
  let bytes: Buffer
  try {
    const handle = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW)
    try {
      const stat = fs.fstatSync(handle)
      if (!stat.isFile() || stat.size > maxFileBytes) {
        return Either.left(
          new ApproverKeyError({
            reason: "malformed",
            path: file,
            detail: stat.isFile() ? `it has ${stat.size} bytes; a key file has under ${maxFileBytes}.` : "it is not a regular file.",
            fix: "Point RATCHET_APPROVER_KEY at your key file, or create one: ratchet approver init"
          })
        )
      }
      bytes = fs.readFileSync(handle)
    } finally {
      fs.closeSync(handle)
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    return Either.left(
      code === "ENOENT"
        ? new ApproverKeyError({ reason: "missing", path: file, detail: "there is no approval key here.", fix: "Create yours: ratchet approver init" })
        : new ApproverKeyError({
          reason: "unreadable",
          path: file,
          detail: code === "ELOOP" ? "it is a symbolic link; a key file is read only as itself." : `it cannot be read (${code ?? String(error)}).`,
          fix: "Check the file's owner and permissions (it should be yours, mode 0600)."
        })
    )
  }
  let json: unknown
  try {
    json = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes))
  } catch {
    return Either.left(
      new ApproverKeyError({ reason: "malformed", path: file, detail: "it is not JSON.", fix: "Restore the key file from your backup, or create a new key: ratchet approver init" })
    )
  }
  return Either.mapLeft(
    Schema.decodeUnknownEither(KeyFile, { onExcessProperty: "error" })(json),
    (error) =>
      new ApproverKeyError({
        reason: "malformed",
        path: file,
        detail: `it is not a key file: ${ParseResult.ArrayFormatter.formatErrorSync(error).slice(0, 3).map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`).join("; ")}.`,
        fix: "Restore the key file from your backup, or create a new key: ratchet approver init"
      })
  )
}

/**
 * Writes a new key file: its directory made 0700, the file created exclusively with mode 0600 and
 * fsynced. An existing file is never replaced (`exists`).
 *
 * @since 0.2.0
 * @category constructors
 */
export const write = (file: string, keyFile: KeyFile): Either.Either<void, ApproverKeyError> => {
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
    const handle = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o600)
    try {
      fs.writeFileSync(handle, `${JSON.stringify(keyFile, null, 2)}\n`)
      fs.fsyncSync(handle)
    } finally {
      fs.closeSync(handle)
    }
    return Either.right(undefined)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    return Either.left(
      code === "EEXIST"
        ? new ApproverKeyError({
          reason: "exists",
          path: file,
          detail: "a key already exists here; it is never overwritten.",
          fix: "Use it (ratchet approver show), or set RATCHET_APPROVER_KEY to another file for a new one."
        })
        : new ApproverKeyError({ reason: "unwritable", path: file, detail: `it cannot be written (${code ?? String(error)}).`, fix: "Check that the directory is yours and writable." })
    )
  }
}
