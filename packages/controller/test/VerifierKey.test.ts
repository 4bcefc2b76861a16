/**
 * The unattended verifier's key (ADR 0041): where its file and passphrase come from, every way it
 * is refused (fail closed, with the fix named), which verifier may verify a run, and that its
 * passphrase is stripped from a child's environment. A hand table, over a real key file.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import type * as Authority from "@ratchet/kernel/Authority"
import * as Either from "effect/Either"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as ApproverKey from "../src/ApproverKey.js"
import * as StepProcess from "../src/StepProcess.js"
import * as VerifierKey from "../src/VerifierKey.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "verifier-key-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
const passphrase = "a verifier's own passphrase"
const made = Either.getOrThrow(ApproverKey.create({ id: "ci-verifier", passphrase, logN: 14, at: 1 }))
const keyFile = path.join(dir, "verifier-key.json")
Either.getOrThrow(ApproverKey.write(keyFile, made.file))
const passphraseFile = path.join(dir, "passphrase")
fs.writeFileSync(passphraseFile, `${passphrase}\nignored second line\n`)
const link = path.join(dir, "passphrase-link")
fs.symlinkSync(passphraseFile, link)

const messageOf = (env: Record<string, string>): string => {
  const result = VerifierKey.unlock(env)
  return Either.isLeft(result) ? result.left.message : `unlocked ${result.right.id}`
}

describe("VerifierKey.unlock", () => {
  // environment → what happens
  it.each<[string, Record<string, string>, string]>([
    ["the passphrase in a file (its first line)", { RATCHET_VERIFIER_KEY: keyFile, RATCHET_VERIFIER_PASSPHRASE_FILE: passphraseFile }, "unlocked ci-verifier"],
    ["the passphrase in a variable", { RATCHET_VERIFIER_KEY: keyFile, RATCHET_VERIFIER_PASSPHRASE: passphrase }, "unlocked ci-verifier"],
    ["the file wins over the variable", { RATCHET_VERIFIER_KEY: keyFile, RATCHET_VERIFIER_PASSPHRASE_FILE: passphraseFile, RATCHET_VERIFIER_PASSPHRASE: "wrong" }, "unlocked ci-verifier"],
    ["no key", { RATCHET_VERIFIER_PASSPHRASE: passphrase }, "RATCHET_VERIFIER_KEY is not set"],
    ["an empty key variable", { RATCHET_VERIFIER_KEY: "", RATCHET_VERIFIER_PASSPHRASE: passphrase }, "RATCHET_VERIFIER_KEY is not set"],
    ["no passphrase", { RATCHET_VERIFIER_KEY: keyFile }, "neither RATCHET_VERIFIER_PASSPHRASE_FILE nor RATCHET_VERIFIER_PASSPHRASE gives one"],
    ["a wrong passphrase", { RATCHET_VERIFIER_KEY: keyFile, RATCHET_VERIFIER_PASSPHRASE: "not this one at all" }, "the passphrase does not open this key"],
    ["a missing passphrase file", { RATCHET_VERIFIER_KEY: keyFile, RATCHET_VERIFIER_PASSPHRASE_FILE: path.join(dir, "none") }, "cannot be read (ENOENT)"],
    ["a passphrase file that is a symbolic link", { RATCHET_VERIFIER_KEY: keyFile, RATCHET_VERIFIER_PASSPHRASE_FILE: link }, "cannot be read (ELOOP)"],
    ["a passphrase file that is a directory", { RATCHET_VERIFIER_KEY: keyFile, RATCHET_VERIFIER_PASSPHRASE_FILE: dir }, "is not a passphrase file"],
    ["a missing key file", { RATCHET_VERIFIER_KEY: path.join(dir, "none.json"), RATCHET_VERIFIER_PASSPHRASE: passphrase }, "there is no approval key here"]
  ])("%s", (_, env, expected) => {
    expect(messageOf(env)).toContain(expected)
  })

  it("names the fix when the key or the passphrase is missing", () => {
    for (const env of [{}, { RATCHET_VERIFIER_KEY: keyFile }]) {
      const message = messageOf(env)
      expect(message).toContain("ratchet approver init --id <verifier-id>")
      expect(message).toContain("ratchet approver add <verifier-id> <key>")
      expect(message).toContain("RATCHET_VERIFIER_PASSPHRASE_FILE")
    }
  })
})

describe("VerifierKey.refusal", () => {
  const signer = made.signer
  const authority = (approvers: Authority.Authority["approvers"]): Authority.Authority => ({ projectId: "p", approvers, verify: ApproverKey.verify })
  // invoker, approvers → refused with / accepted
  it.each<[string, string, Authority.Authority["approvers"], string | null]>([
    ["an approver other than the invoker", "alice", [{ id: "alice", key: "ed25519:x" }, { id: "ci-verifier", key: signer.key }], null],
    ["the invoker's own key", "ci-verifier", [{ id: "ci-verifier", key: signer.key }], "who starts this run"],
    ["a key that is not an approver", "alice", [{ id: "alice", key: "ed25519:x" }], "is not one of this project's approvers"],
    ["an approver's key under another id", "alice", [{ id: "bob", key: signer.key }], "is not one of this project's approvers"]
  ])("%s", (_, invoker, approvers, expected) => {
    const refused = VerifierKey.refusal(signer, { kind: "user", id: invoker }, authority(approvers))
    if (expected === null) expect(refused).toBeNull()
    else expect(refused?.message).toContain(expected)
  })
})

describe("VerifierKey.strip", () => {
  it("removes the passphrase and its file from a child's environment, and only them", () => {
    const env = { PATH: "/bin", RATCHET_VERIFIER_KEY: keyFile, RATCHET_VERIFIER_PASSPHRASE: passphrase, RATCHET_VERIFIER_PASSPHRASE_FILE: passphraseFile }
    expect(VerifierKey.strip(env)).toStrictEqual({ PATH: "/bin", RATCHET_VERIFIER_KEY: keyFile })
    expect(env.RATCHET_VERIFIER_PASSPHRASE).toBe(passphrase)
  })

  it("a step's environment (commands and agents alike) never holds them", () => {
    process.env["RATCHET_VERIFIER_PASSPHRASE"] = passphrase
    process.env["RATCHET_VERIFIER_PASSPHRASE_FILE"] = passphraseFile
    try {
      const env = StepProcess.environment({ taskId: "t-1", stepId: "impl", attempt: 2 })
      expect(env["RATCHET_VERIFIER_PASSPHRASE"]).toBeUndefined()
      expect(env["RATCHET_VERIFIER_PASSPHRASE_FILE"]).toBeUndefined()
      expect(Object.values(env)).not.toContain(passphrase)
      expect(env["RATCHET_ATTEMPT"]).toBe("2")
    } finally {
      delete process.env["RATCHET_VERIFIER_PASSPHRASE"]
      delete process.env["RATCHET_VERIFIER_PASSPHRASE_FILE"]
    }
  })
})
