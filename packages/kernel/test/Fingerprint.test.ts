/**
 * The structured fingerprint: its key is the successor budget's (pinned here against a SHA-256
 * computed by the platform, so neither can drift from the other), and its normaliser removes what
 * belongs to one run before the budget's own rules — a hand-written table of inputs and the text
 * they normalise to, then pairs of runs that must agree (two workspaces, two temp dirs, two UUIDs)
 * and pairs that must not (another step, ending or message).
 */
import * as crypto from "node:crypto"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as Fingerprint from "../src/Fingerprint.js"
import * as Progress from "../src/Progress.js"
import { FP, OTHER_FP } from "./lessons.js"

const nowhere: Fingerprint.Locations = { workspaceRoot: null, homeDir: null }
const alice: Fingerprint.Locations = { workspaceRoot: "/home/alice/src/app", homeDir: "/home/alice" }
const bob: Fingerprint.Locations = { workspaceRoot: "/Users/bob/work/app-wt2", homeDir: "/Users/bob" }

describe("Fingerprint.endingText", () => {
  it.each([
    [{ _tag: "Exit", code: 1 }, "exit:1"],
    [{ _tag: "Exit", code: -2 }, "exit:-2"],
    [{ _tag: "Signal", signal: "SIGKILL" }, "signal:SIGKILL"],
    [{ _tag: "Signal", signal: null }, "signal:unknown"],
    [{ _tag: "TimedOut" }, "timeout"],
    [{ _tag: "Verdict", verdict: "FAIL" }, "verdict:FAIL"],
    [{ _tag: "Verdict", verdict: "INDETERMINATE" }, "verdict:INDETERMINATE"],
    [{ _tag: "Indeterminate" }, "indeterminate"],
    [{ _tag: "WrongAssumption" }, "assumption"]
  ] as const)("%o → %s", (ending, text) => {
    expect(Fingerprint.endingText(ending)).toBe(text)
  })
})

describe("Fingerprint.normaliseText", () => {
  const table: ReadonlyArray<readonly [string, string, Fingerprint.Locations, string]> = [
    ["the workspace root", "Error in /home/alice/src/app/src/a.ts", alice, "Error in <workspace>/src/a.ts"],
    ["the workspace root at the end", "cwd: /home/alice/src/app", alice, "cwd: <workspace>"],
    ["the workspace root with a trailing separator given", "at /home/alice/src/app/x", { ...alice, workspaceRoot: "/home/alice/src/app/" }, "at <workspace>/x"],
    ["a longer name is not the root", "see /home/alice/src/application/x", alice, "see <home>/src/application/x"],
    ["the home directory", "config: /home/alice/.npmrc", alice, "config: <home>/.npmrc"],
    ["a home that is a prefix of another name", "/home/alicex/y", alice, "/home/alicex/y"],
    ["every occurrence", "/home/alice/src/app/a and /home/alice/src/app/b", alice, "<workspace>/a and <workspace>/b"],
    ["a Windows root, either separator", "C:\\Users\\bob\\app\\a.ts and C:/Users/bob/app/b.ts", { workspaceRoot: "C:\\Users\\bob\\app", homeDir: null }, "<workspace>\\a.ts and <workspace>/b.ts"],
    ["a root given with several trailing separators", "at /home/alice/src/app/x", { ...alice, workspaceRoot: "/home/alice/src/app//" }, "at <workspace>/x"],
    ["a root of three characters", "at /ws/a and /wsx", { workspaceRoot: "/ws", homeDir: null }, "at <workspace>/a and /wsx"],
    ["a root too short to mean anything", "/a/b and /x", { workspaceRoot: "/", homeDir: "C:" }, "/a/b and /x"],
    ["macOS temporary directories", "wrote /var/folders/x1/ab_cd/T/out.json and /private/var/folders/q/T/y", nowhere, "wrote <tmp> and <tmp>"],
    ["/var/tmp", "cache at /var/tmp/npm-cache/x, ok", nowhere, "cache at <tmp> ok"],
    ["Windows' temporary directory", "C:\\Users\\bob\\AppData\\Local\\Temp\\jest_x\\a.js failed", nowhere, "<tmp> failed"],
    ["/tmp, by the budget's rule", "see /tmp/vitest-abc/x.log", nowhere, "see <tmp>"],
    ["UUIDs whole", "id 123e4567-e89b-12d3-a456-426614174000 missing", nowhere, "id <uuid> missing"],
    ["UUIDs in capitals", "ID 123E4567-E89B-12D3-A456-426614174000", nowhere, "ID <uuid>"],
    ["numbers, hex ids and colours, by the budget's rules", "\u001b[31mFAIL\u001b[0m at line 12:7 after 340ms (deadbeef1)", nowhere, "FAIL at line <n>:<n> after <n>ms (<hex>)"],
    ["nothing to remove", "expected 2 rows", nowhere, "expected <n> rows"]
  ]
  it.each(table)("removes %s", (_, text, locations, expected) => {
    expect(Fingerprint.normaliseText(text, locations)).toBe(expected)
  })

  it("keeps the last twenty lines and reads only the last 128 KiB", () => {
    const lines = Array.from({ length: 30 }, (_, index) => `line ${String.fromCharCode(97 + (index % 26))}${index >= 26 ? "z" : ""}`)
    expect(Fingerprint.normaliseText(lines.join("\n"), nowhere).split("\n")).toEqual(lines.slice(-20))
    const huge = `${"/home/alice/src/app/".repeat(20_000)}\nlast`
    expect(Fingerprint.normaliseText(huge, alice).endsWith("\nlast")).toBe(true)
    // One long line of long roots: what lies before its last 128 KiB is never read, even though
    // the roots, once replaced, would leave room for it in the budget's 64 KiB.
    const root = `/r/${"x".repeat(500)}`
    const line = `HEAD ${`${root}/a `.repeat(300)}`
    expect(line.length).toBeGreaterThan(131_072)
    const normalised = Fingerprint.normaliseText(line, { workspaceRoot: root, homeDir: null })
    expect(normalised).not.toContain("HEAD")
    expect(normalised.endsWith("<workspace>/a")).toBe(true)
    expect(Fingerprint.normaliseText(line.slice(-131_072), { workspaceRoot: root, homeDir: null })).toBe(normalised)
  })
})

describe("Fingerprint.of", () => {
  const sha = (text: string) => crypto.createHash("sha256").update(text, "utf8").digest("hex").slice(0, 16)

  it("is `fp:<ending>:` and the first 16 hex digits of SHA-256 over subject, ending and normalised text", () => {
    const print = Fingerprint.of({ subject: "test", ending: { _tag: "Exit", code: 1 }, text: "expected 2 rows", locations: nowhere })
    const digest = sha("test\nexit:1\nexpected <n> rows")
    expect(print).toEqual({ subject: "test", ending: "exit:1", digest, key: `fp:exit:1:${digest}` })
    expect(Progress.fingerprintKey("test", "exit:1", "expected <n> rows")).toBe(`fp:exit:1:${digest}`)
  })

  it("is the successor budget's fingerprint when the output names nothing of the run's own", () => {
    const endings = fc.oneof(
      fc.record({ exitCode: fc.integer({ min: -255, max: 255 }), signal: fc.constant(null), timedOut: fc.constant(false) }),
      fc.record({ exitCode: fc.constant(null), signal: fc.constantFrom("SIGKILL", "SIGTERM", null), timedOut: fc.constant(false) }),
      fc.record({ exitCode: fc.option(fc.integer()), signal: fc.constant(null), timedOut: fc.constant(true) })
    )
    const plain = fc.stringMatching(/^[a-z0-9 :.\n]{0,200}$/)
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/), endings, plain, (stepId, end, output) => {
        const ending: Fingerprint.Ending = end.timedOut
          ? { _tag: "TimedOut" }
          : end.exitCode !== null
          ? { _tag: "Exit", code: end.exitCode }
          : { _tag: "Signal", signal: end.signal }
        const budget = Progress.fingerprint({ stepId, exitCode: end.exitCode, signal: end.signal, timedOut: end.timedOut, output })
        expect(Fingerprint.of({ subject: stepId, ending, text: output, locations: alice }).key).toBe(budget)
      })
    )
  })

  it("gives the lesson tests' fingerprints, written out there", () => {
    expect(Fingerprint.of({ subject: "test", ending: { _tag: "Exit", code: 1 }, text: "FAIL src/report.test.ts\nexpected 2 rows, got 3", locations: nowhere })).toEqual(FP)
    expect(Fingerprint.of({ subject: "build", ending: { _tag: "Exit", code: 2 }, text: "tsc: cannot find module", locations: nowhere })).toEqual(OTHER_FP)
  })

  it("two workspaces failing the same way agree", () => {
    const at = (root: Fingerprint.Locations, tmp: string, id: string) =>
      Fingerprint.of({
        subject: "AC-001",
        ending: { _tag: "Verdict", verdict: "FAIL" },
        text: `FAIL ${root.workspaceRoot}/test/report.test.ts:41:9\n  expected 2 rows, got 3 (run ${id}, log ${tmp}/log.txt)\n  config ${root.homeDir}/.config/app`,
        locations: root
      }).key
    expect(at(alice, "/tmp/abc", "123e4567-e89b-12d3-a456-426614174000")).toBe(
      at(bob, "/var/folders/zz/k2_9/T/def", "00000000-aaaa-4bbb-8ccc-ddddeeeeffff")
    )
  })

  it("another subject, ending or message is another failure", () => {
    const base = { subject: "test", ending: { _tag: "Exit", code: 1 } as Fingerprint.Ending, text: "expected 2 rows", locations: nowhere }
    const key = Fingerprint.of(base).key
    for (
      const other of [
        { ...base, subject: "build" },
        { ...base, ending: { _tag: "Exit", code: 2 } as const },
        { ...base, ending: { _tag: "Verdict", verdict: "FAIL" } as const },
        { ...base, ending: { _tag: "WrongAssumption" } as const },
        { ...base, text: "expected 2 columns" }
      ]
    ) {
      expect(Fingerprint.of(other).key).not.toBe(key)
    }
  })

  it("its schema refuses a key that does not read its own fields, and a malformed key", () => {
    const print = Fingerprint.of({ subject: "test", ending: { _tag: "TimedOut" }, text: "", locations: nowhere })
    const decode = Schema.decodeUnknownEither(Fingerprint.Fingerprint)
    expect(decode(print)).toEqual(Either.right(print))
    expect(Either.isLeft(decode({ ...print, ending: "exit:1" }))).toBe(true)
    expect(Either.isLeft(decode({ ...print, key: "fp:timeout:XYZ" }))).toBe(true)
    expect(Either.isLeft(decode({ ...print, subject: "" }))).toBe(true)
    expect(Either.isLeft(decode({ ...print, subject: "a\u202eb" }))).toBe(true)
    expect(Either.isLeft(decode({ ...print, subject: "x".repeat(129) }))).toBe(true)
    expect(Either.isRight(decode({ ...print, subject: "x".repeat(128) }))).toBe(true)
    const long = `fp:${"z".repeat(200)}`
    expect(Either.getLeft(Schema.decodeUnknownEither(Fingerprint.Key)(long)).pipe((e) => (e._tag === "Some" ? e.value.message : ""))).toContain(
      `expected a failure fingerprint ("fp:" then how it ended, ":" and 16 lowercase hex digits, as Ratchet records them), got ${JSON.stringify(long.slice(0, 80))}`
    )
  })
})
