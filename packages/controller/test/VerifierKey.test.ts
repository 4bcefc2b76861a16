/**
 * The unattended verifier's key (ADR 0041): where its file and passphrase come from, every way it
 * is refused (fail closed, with the fix named), which verifier may verify a run, and that its
 * passphrase is stripped from a child's environment. A hand table, over a real key file.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import type * as Authority from "@ratchet/kernel/Authority"
import * as Either from "effect/Either"
import { execFileSync } from "node:child_process"
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
const wrongFile = path.join(dir, "wrong")
fs.writeFileSync(wrongFile, "not this one at all\n")
const fifo = path.join(dir, "fifo")
execFileSync("mkfifo", [fifo])

const messageOf = (env: Record<string, string>, given: string | null = null): string => {
  const result = VerifierKey.unlock(env, given)
  return Either.isLeft(result) ? result.left.message : `unlocked ${result.right.id}`
}

describe("VerifierKey.unlock", () => {
  // environment → what happens
  it.each<[string, Record<string, string>, string]>([
    ["the passphrase in a file (its first line)", { RATCHET_VERIFIER_KEY: keyFile, RATCHET_VERIFIER_PASSPHRASE_FILE: passphraseFile }, "unlocked ci-verifier"],
    ["the passphrase in a variable", { RATCHET_VERIFIER_KEY: keyFile, RATCHET_VERIFIER_PASSPHRASE: passphrase }, "every process of your user (the agent included) can read"],
    ["the variable beside a file", { RATCHET_VERIFIER_KEY: keyFile, RATCHET_VERIFIER_PASSPHRASE_FILE: passphraseFile, RATCHET_VERIFIER_PASSPHRASE: passphrase }, "/proc/<pid>/environ"],
    ["an empty variable", { RATCHET_VERIFIER_KEY: keyFile, RATCHET_VERIFIER_PASSPHRASE_FILE: passphraseFile, RATCHET_VERIFIER_PASSPHRASE: "" }, "Unset RATCHET_VERIFIER_PASSPHRASE"],
    ["no key", { RATCHET_VERIFIER_PASSPHRASE_FILE: passphraseFile }, "RATCHET_VERIFIER_KEY is not set"],
    ["an empty key variable", { RATCHET_VERIFIER_KEY: "", RATCHET_VERIFIER_PASSPHRASE_FILE: passphraseFile }, "RATCHET_VERIFIER_KEY is not set"],
    ["no passphrase", { RATCHET_VERIFIER_KEY: keyFile }, "RATCHET_VERIFIER_PASSPHRASE_FILE names no file that gives one"],
    ["a wrong passphrase", { RATCHET_VERIFIER_KEY: keyFile, RATCHET_VERIFIER_PASSPHRASE_FILE: wrongFile }, "the passphrase does not open this key"],
    ["a missing passphrase file", { RATCHET_VERIFIER_KEY: keyFile, RATCHET_VERIFIER_PASSPHRASE_FILE: path.join(dir, "none") }, "cannot be read (ENOENT)"],
    ["a passphrase file that is a symbolic link", { RATCHET_VERIFIER_KEY: keyFile, RATCHET_VERIFIER_PASSPHRASE_FILE: link }, "is a symbolic link; name the file itself"],
    ["a passphrase file that is a directory", { RATCHET_VERIFIER_KEY: keyFile, RATCHET_VERIFIER_PASSPHRASE_FILE: dir }, "it is not a regular file"],
    ["a passphrase file that is a FIFO (no hang)", { RATCHET_VERIFIER_KEY: keyFile, RATCHET_VERIFIER_PASSPHRASE_FILE: fifo }, "it is not a regular file"],
    ["a missing key file", { RATCHET_VERIFIER_KEY: path.join(dir, "none.json"), RATCHET_VERIFIER_PASSPHRASE_FILE: passphraseFile }, "RATCHET_VERIFIER_KEY="]
  ])("%s", (_, env, expected) => {
    expect(messageOf(env)).toContain(expected)
  })

  it("takes the passphrase ratchet run handed over instead of the file, and still refuses the variable", () => {
    expect(messageOf({ RATCHET_VERIFIER_KEY: keyFile }, passphrase)).toBe("unlocked ci-verifier")
    expect(messageOf({ RATCHET_VERIFIER_KEY: keyFile, RATCHET_VERIFIER_PASSPHRASE_FILE: wrongFile }, passphrase)).toBe("unlocked ci-verifier")
    expect(messageOf({ RATCHET_VERIFIER_KEY: keyFile }, "not this one at all")).toContain("the passphrase does not open this key")
    expect(messageOf({ RATCHET_VERIFIER_KEY: keyFile, RATCHET_VERIFIER_PASSPHRASE: passphrase }, passphrase)).toContain("/proc/<pid>/environ")
  })

  it("a missing key file names RATCHET_VERIFIER_KEY and the verifier's set-up, not the person's key", () => {
    const result = VerifierKey.unlock({ RATCHET_VERIFIER_KEY: path.join(dir, "none.json"), RATCHET_VERIFIER_PASSPHRASE_FILE: passphraseFile })
    if (Either.isRight(result)) throw new Error("unlocked")
    expect(result.left).toMatchObject({ field: "RATCHET_VERIFIER_KEY" })
    expect(result.left.message).toContain("there is no approval key here")
    expect(result.left.message).toContain("ratchet approver init --id <verifier-id>")
    expect(result.left.message).toContain("Loop until verified")
  })

  it("the variable's refusal names the variable, the reason and the file instead", () => {
    const refused = VerifierKey.variableRefusal({ RATCHET_VERIFIER_PASSPHRASE: "x" })
    expect(refused).toMatchObject({ field: "RATCHET_VERIFIER_PASSPHRASE" })
    expect(refused?.message).toContain("RATCHET_VERIFIER_PASSPHRASE_FILE=<file>")
    expect(refused?.message).toContain("umask 077")
    expect(VerifierKey.variableRefusal({ RATCHET_VERIFIER_PASSPHRASE_FILE: "x" })).toBeNull()
  })

  // what the descriptor carries → the passphrase, or the refusal
  it.each<[string, string, string]>([
    ["a line", `${passphrase}\n`, passphrase],
    ["its first line only", `${passphrase}\nmore\n`, passphrase],
    ["too much", "x".repeat(5000), "more than 4096 bytes"]
  ])("readPassphraseFd: %s", (_, written, expected) => {
    const file = path.join(dir, "piped")
    fs.writeFileSync(file, written)
    const fd = fs.openSync(file, "r")
    const read = VerifierKey.readPassphraseFd(fd)
    expect(Either.isRight(read) ? read.right : read.left.message).toContain(expected)
    // The descriptor is closed: no child inherits it.
    expect(() => fs.fstatSync(fd)).toThrow()
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
  const registered: Authority.Authority["approvers"] = [{ id: "alice", key: "ed25519:x" }, { id: "ci-verifier", key: signer.key }]
  // invoker, the person's own key, the spec and plan approvers, approvers → refused with / accepted
  it.each<[string, string, string | null, ReadonlyArray<string>, Authority.Authority["approvers"], string | null]>([
    ["an approver other than the invoker", "alice", "ed25519:x", ["alice"], registered, null],
    ["no key of the person's at hand", "alice", null, [], registered, null],
    ["the person's own approval key (login and approver id differ)", "alice-login", signer.key, ["alice"], registered, "is your own approval key"],
    ["the invoker's own id", "ci-verifier", null, [], registered, "who starts this run"],
    ["the approver who approved the spec or the plan", "alice-login", "ed25519:x", ["alice", "ci-verifier"], registered, "approved this task's spec or plan"],
    ["a key that is not an approver", "alice", null, [], [{ id: "alice", key: "ed25519:x" }], "is not one of this project's approvers"],
    ["an approver's key under another id", "alice", null, [], [{ id: "bob", key: signer.key }], "is not one of this project's approvers"]
  ])("%s", (_, invoker, personKey, approvedBy, approvers, expected) => {
    const refused = VerifierKey.refusal(signer, { invoker: { kind: "user", id: invoker }, personKey, approvedBy }, authority(approvers))
    if (expected === null) expect(refused).toBeNull()
    else expect(refused?.message).toContain(expected)
  })

  it("reads the person's key from RATCHET_APPROVER_KEY, else from the home", () => {
    expect(VerifierKey.personKeyOf({ RATCHET_APPROVER_KEY: keyFile }, "/nowhere")).toBe(signer.key)
    expect(VerifierKey.personKeyOf({}, dir)).toBeNull()
    fs.copyFileSync(keyFile, path.join(dir, "approver-key.json"))
    expect(VerifierKey.personKeyOf({}, dir)).toBe(signer.key)
    expect(VerifierKey.personKeyOf({ RATCHET_APPROVER_KEY: path.join(dir, "none.json") }, dir)).toBeNull()
  })
})

describe("VerifierKey.strip", () => {
  it("removes every verifier variable from a child's environment, and only them; the runner keeps the key's file", () => {
    const env = { PATH: "/bin", RATCHET_VERIFIER_KEY: keyFile, RATCHET_VERIFIER_PASSPHRASE: passphrase, RATCHET_VERIFIER_PASSPHRASE_FILE: passphraseFile }
    expect(VerifierKey.strip(env)).toStrictEqual({ PATH: "/bin" })
    expect(VerifierKey.forRunner(env)).toStrictEqual({ PATH: "/bin", RATCHET_VERIFIER_KEY: keyFile })
    expect(env.RATCHET_VERIFIER_PASSPHRASE).toBe(passphrase)
  })

  it("a step's environment (commands and agents alike) never holds them", () => {
    process.env["RATCHET_VERIFIER_PASSPHRASE"] = passphrase
    process.env["RATCHET_VERIFIER_PASSPHRASE_FILE"] = passphraseFile
    process.env["RATCHET_VERIFIER_KEY"] = keyFile
    try {
      const env = StepProcess.environment({ taskId: "t-1", stepId: "impl", attempt: 2 })
      expect(env["RATCHET_VERIFIER_PASSPHRASE"]).toBeUndefined()
      expect(env["RATCHET_VERIFIER_PASSPHRASE_FILE"]).toBeUndefined()
      expect(env["RATCHET_VERIFIER_KEY"]).toBeUndefined()
      expect(Object.values(env)).not.toContain(passphrase)
      expect(env["RATCHET_ATTEMPT"]).toBe("2")
    } finally {
      delete process.env["RATCHET_VERIFIER_PASSPHRASE"]
      delete process.env["RATCHET_VERIFIER_PASSPHRASE_FILE"]
      delete process.env["RATCHET_VERIFIER_KEY"]
    }
  })
})
