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
fs.writeFileSync(passphraseFile, `${passphrase}\nignored second line\n`, { mode: 0o600 })
const link = path.join(dir, "passphrase-link")
fs.symlinkSync(passphraseFile, link)
const wrongFile = path.join(dir, "wrong")
fs.writeFileSync(wrongFile, "not this one at all\n", { mode: 0o600 })
/** A passphrase file (the right passphrase) made with `mode`, at `where` under the test's directory. */
const withMode = (where: string, mode: number): string => {
  const file = path.join(dir, where)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, `${passphrase}\n`)
  fs.chmodSync(file, mode)
  return file
}
// Someone else's file: made and given away when this runs as root, else one of the system's.
const othersFile = process.getuid?.() === 0
  ? (() => {
    const file = withMode("others", 0o600)
    fs.chownSync(file, 65534, 65534)
    return file
  })()
  : "/etc/passwd"
/** A passphrase file (mode 600) at `where` with a second name (a hard link) beside it: two names. */
const withSecondName = (where: string): string => {
  const file = withMode(where, 0o600)
  fs.linkSync(file, `${file}-second-name`)
  return file
}
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

  // [the file, where it may not be, what the refusal says (null: read)]: yours alone, outside the workspace and the home.
  const workspace = path.join(dir, "project")
  const home = path.join(dir, "ratchet-home")
  const places = { workspace, home }
  it.each<[string, string, string | null]>([
    ["mode 600", withMode("outside/600", 0o600), null],
    ["mode 400", withMode("outside/400", 0o400), null],
    ["mode 640 (its group may read it)", withMode("outside/640", 0o640), "has mode 640"],
    ["mode 604 (everyone may read it)", withMode("outside/604", 0o604), "Fix: chmod 600"],
    ["mode 620 (its group may write it)", withMode("outside/620", 0o620), "readable by you alone"],
    ["someone else's file", othersFile, "not by you"],
    ["inside the workspace", withMode("project/secrets/passphrase", 0o600), "inside the workspace"],
    ["the workspace reached through ..", path.join(workspace, "..", "project", "p"), "inside the workspace"],
    ["inside $RATCHET_HOME", withMode("ratchet-home/passphrase", 0o600), "inside $RATCHET_HOME"],
    ["one name (nlink 1)", withMode("outside/one-name", 0o600), null],
    ["two names (nlink 2: a hard link the sandbox does not hide)", withSecondName("outside/two-names"), "2 names (hard links)"],
    ["beside the workspace, with a name that starts like it", withMode("project-secrets/passphrase", 0o600), null]
  ])("readPassphraseFile: %s", (_, file, expected) => {
    if (file.endsWith(`${path.sep}p`)) withMode("project/p", 0o600)
    const read = VerifierKey.readPassphraseFile(file, places)
    if (expected === null) expect(read).toStrictEqual(Either.right(passphrase))
    else {
      if (Either.isRight(read)) throw new Error(`read ${file}`)
      expect(read.left.field).toBe("RATCHET_VERIFIER_PASSPHRASE_FILE")
      expect(read.left.message).toContain(expected)
    }
  })

  // [the file's contents, what the refusal says]: a file without a passphrase is refused, never tried.
  it.each<[string, string, string]>([
    ["an empty file", "", "its first line is empty"],
    ["a file of one empty line", "\n", "its first line is empty"],
    ["a file whose passphrase is on its second line", `\n${passphrase}\n`, "its first line is empty"],
    ["a file of spaces", "   \n", "its first line is only whitespace"],
    ["a file of a tab and a carriage return", "\t\r\n", "its first line is only whitespace"]
  ])("readPassphraseFile refuses %s, with the field, the reason and the fix", (_, contents, expected) => {
    const file = withMode(`outside/blank-${contents.length}-${contents.charCodeAt(0) || 0}`, 0o600)
    fs.writeFileSync(file, contents)
    const read = VerifierKey.readPassphraseFile(file, places)
    if (Either.isRight(read)) throw new Error(`read ${JSON.stringify(contents)} as a passphrase`)
    expect(read.left.field).toBe("RATCHET_VERIFIER_PASSPHRASE_FILE")
    expect(read.left.reason).toBe(`${file} holds no passphrase: ${expected}, and the passphrase is the first line.`)
    expect(read.left.fix).toContain(`printf '%s\\n' "$p" > ${file}`)
    expect(read.left.fix).toContain(VerifierKey.setup)
    // The runner started directly reads the same file: refused there too, before the key is tried.
    expect(messageOf({ RATCHET_VERIFIER_KEY: keyFile, RATCHET_VERIFIER_PASSPHRASE_FILE: file })).toContain("holds no passphrase")
  })

  it("names a fresh copy as the fix for a file with a second name", () => {
    const file = withSecondName("outside/linked")
    expect(fs.statSync(file).nlink).toBe(2)
    const read = VerifierKey.readPassphraseFile(file)
    expect(Either.isLeft(read) ? read.left.fix : "read").toContain(`umask 077; cp ${file} ${file}.new && rm ${file} && mv ${file}.new ${file}`)
  })

  it("names chmod 600 <file> as the fix for a file others may read", () => {
    const file = withMode("outside/644", 0o644)
    const read = VerifierKey.readPassphraseFile(file)
    expect(Either.isLeft(read) ? read.left.fix : "read").toContain(`chmod 600 ${file}`)
  })

  it("finds the workspace of a runner started directly: the nearest directory with .ratchet/project.json", () => {
    withMode("project/.ratchet/project.json", 0o600)
    fs.mkdirSync(path.join(workspace, "src", "deep"), { recursive: true })
    expect(VerifierKey.workspaceOf(path.join(workspace, "src", "deep"))).toBe(workspace)
    expect(VerifierKey.workspaceOf(workspace)).toBe(workspace)
    expect(VerifierKey.workspaceOf(path.join(dir, "outside"))).toBeNull()
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

  // what the descriptor carries → the passphrase and the file's path, or the refusal
  it.each<[string, string, string, string | null]>([
    ["a line", `${passphrase}\n`, passphrase, null],
    ["the file's path after it", VerifierKey.pipeText(passphrase, "/secrets/verifier pass\nphrase"), passphrase, "/secrets/verifier pass\nphrase"],
    ["no path after it", VerifierKey.pipeText(passphrase, ""), passphrase, null],
    ["a second line that is not a JSON string", `${passphrase}\nmore\n`, passphrase, null],
    ["too much", "x".repeat(5000), "more than 4096 bytes", null],
    ["nothing (closed at once)", "", "was closed with no passphrase on it", null],
    ["an empty first line", "\nsecond\n", "was closed with no passphrase on it", null]
  ])("readPassphraseFd: %s", (_, written, expected, file) => {
    const piped = path.join(dir, "piped")
    fs.writeFileSync(piped, written)
    const fd = fs.openSync(piped, "r")
    const read = VerifierKey.readPassphraseFd(fd)
    expect(Either.isRight(read) ? read.right.passphrase : read.left.message).toContain(expected)
    if (Either.isRight(read)) expect(read.right.file).toBe(file)
    // The descriptor is closed: no child inherits it.
    expect(() => fs.fstatSync(fd)).toThrow()
  })

  it("readPassphraseFd: a blocking descriptor whose writer never writes nor closes is refused once the wait is over, on its option's field", () => {
    // A FIFO opened for reading and writing: a blocking descriptor that nothing will ever end.
    const fd = fs.openSync(fifo, "r+")
    const read = VerifierKey.readPassphraseFd(fd, 300)
    if (Either.isRight(read)) throw new Error("read")
    expect(read.left.field).toBe("--verifier-passphrase-fd")
    expect(read.left.message).toContain(`nothing arrived on descriptor ${fd} within 0.3 s`)
    expect(read.left.message).toContain("Start the runner with ratchet run")
    expect(() => fs.fstatSync(fd)).toThrow()
  })

  it("readPassphraseFd: a descriptor that is not open is refused on its option's field", () => {
    const read = VerifierKey.readPassphraseFd(987)
    expect(Either.isLeft(read) ? read.left.field : "read").toBe("--verifier-passphrase-fd")
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
