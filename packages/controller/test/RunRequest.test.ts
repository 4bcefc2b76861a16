/**
 * Run requests, the doorbell files a live runner polls (`$RATCHET_HOME/run/<task>.json`): a write
 * reads back; a missing file is no request; and every damaged file (malformed, truncated, the
 * wrong shape, oversized, binary, a directory, a symbolic link to `/dev/zero`, a FIFO) reads as
 * no request without throwing or blocking, and is removed where it can be. The directory and the
 * file are private to the user.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { tempDirFactory } from "./tempDirs.js"
import * as RunRequest from "../src/RunRequest.js"

const tempDir = tempDirFactory("ratchet-run-request-")

const request: RunRequest.Request = { kind: "cancel", reason: "stop now", actor: { kind: "user", id: "alice" }, at: 1_700_000_000_000 }

/** A fresh home with `run/<task>.json` holding `content` (written as given, bypassing `write`). */
const homeWith = (content: string | Buffer, taskId = "t-1") => {
  const home = tempDir()
  fs.mkdirSync(RunRequest.directoryOf(home), { recursive: true })
  fs.writeFileSync(path.join(RunRequest.directoryOf(home), `${taskId}.json`), content)
  return home
}

const fileIn = (home: string, taskId = "t-1") => path.join(RunRequest.directoryOf(home), `${taskId}.json`)

describe("RunRequest: write, read, clear", () => {
  it("a written request reads back, for its own task only", () => {
    const home = tempDir()
    RunRequest.write(home, "t-1", request)
    expect(RunRequest.read(home, "t-1")).toEqual(request)
    expect(RunRequest.read(home, "t-2")).toBeNull()
    // Reading does not consume it: the runner clears it once acted on.
    expect(RunRequest.read(home, "t-1")).toEqual(request)
  })

  it("a later write replaces the earlier one", () => {
    const home = tempDir()
    RunRequest.write(home, "t-1", { ...request, kind: "pause", reason: "lunch" })
    RunRequest.write(home, "t-1", request)
    expect(RunRequest.read(home, "t-1")).toEqual(request)
    expect(fs.readdirSync(RunRequest.directoryOf(home))).toEqual(["t-1.json"])
  })

  it("reads a request with every actor kind and the longest reason", () => {
    const home = tempDir()
    for (const kind of ["user", "agent", "runner", "verifier", "system"] as const) {
      const each = { kind: "pause", reason: "r".repeat(4096), actor: { kind, id: `${kind}-1` }, at: 0 } as const
      RunRequest.write(home, "t-1", each)
      expect(RunRequest.read(home, "t-1")).toEqual(each)
    }
  })

  it("a missing file, a missing directory and a missing home are no request", () => {
    const home = tempDir()
    expect(RunRequest.read(home, "t-1")).toBeNull()
    expect(RunRequest.read(path.join(home, "nowhere"), "t-1")).toBeNull()
    fs.mkdirSync(RunRequest.directoryOf(home))
    expect(RunRequest.read(home, "t-1")).toBeNull()
  })

  it("clear removes the request and is idempotent", () => {
    const home = tempDir()
    RunRequest.write(home, "t-1", request)
    RunRequest.clear(home, "t-1")
    expect(RunRequest.read(home, "t-1")).toBeNull()
    expect(fs.existsSync(fileIn(home))).toBe(false)
    expect(() => RunRequest.clear(home, "t-1")).not.toThrow()
    expect(() => RunRequest.clear(path.join(home, "nowhere"), "t-1")).not.toThrow()
  })

  it("creates the directory 0700 and the file 0600, with no temporary file left", () => {
    const home = path.join(tempDir(), "home")
    RunRequest.write(home, "t-1", request)
    expect(fs.statSync(RunRequest.directoryOf(home)).mode & 0o777).toBe(0o700)
    expect(fs.statSync(fileIn(home)).mode & 0o777).toBe(0o600)
    expect(fs.readdirSync(RunRequest.directoryOf(home))).toEqual(["t-1.json"])
  })
})

describe("RunRequest.read: damaged files are no request, and are removed", () => {
  const valid = JSON.stringify(request)
  /** (case, file contents), by hand: each one must read as null. */
  const damaged: ReadonlyArray<readonly [string, string | Buffer]> = [
    ["empty", ""],
    ["whitespace", "   \n"],
    ["malformed JSON", "{kind: cancel}"],
    ["truncated JSON", valid.slice(0, valid.length - 5)],
    ["truncated to one byte", "{"],
    ["JSON null", "null"],
    ["a JSON array", `[${valid}]`],
    ["a JSON string", JSON.stringify(valid)],
    ["a number", "42"],
    ["unknown kind", JSON.stringify({ ...request, kind: "explode" })],
    ["kind in capitals", JSON.stringify({ ...request, kind: "CANCEL" })],
    ["missing kind", JSON.stringify({ reason: "x", actor: request.actor, at: 1 })],
    ["empty reason", JSON.stringify({ ...request, reason: "" })],
    ["reason of 4097 characters", JSON.stringify({ ...request, reason: "r".repeat(4097) })],
    ["reason not a string", JSON.stringify({ ...request, reason: 7 })],
    ["actor kind invalid", JSON.stringify({ ...request, actor: { kind: "root", id: "x" } })],
    ["actor id empty", JSON.stringify({ ...request, actor: { kind: "user", id: "" } })],
    ["actor missing", JSON.stringify({ kind: "cancel", reason: "x", at: 1 })],
    ["at not an integer", JSON.stringify({ ...request, at: 1.5 })],
    ["at a string", JSON.stringify({ ...request, at: "now" })],
    ["at NaN written as a bare word", valid.replace(/"at":\d+/, "\"at\":NaN")],
    ["prototype pollution attempt", `{"__proto__":{"kind":"cancel"},"reason":"x","actor":{"kind":"user","id":"a"},"at":1}`],
    ["binary garbage", Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256))],
    ["NUL bytes", Buffer.alloc(1024)],
    ["a valid request followed by garbage", `${valid}\u0000garbage`],
    ["two requests", `${valid}${valid}`],
    ["10 MB of JSON", JSON.stringify({ ...request, reason: "r".repeat(10 * 1024 * 1024) })],
    ["a valid request padded past 64 KiB", `${valid}${" ".repeat(70 * 1024)}`],
    ["10 MB of brackets", "[".repeat(10 * 1024 * 1024)]
  ]

  it.each(damaged)("%s", (_, content) => {
    const home = homeWith(content)
    expect(RunRequest.read(home, "t-1")).toBeNull()
    expect(fs.existsSync(fileIn(home)), "the damaged file is removed").toBe(false)
    // The doorbell works again afterwards.
    RunRequest.write(home, "t-1", request)
    expect(RunRequest.read(home, "t-1")).toEqual(request)
  })

  it("extra fields are ignored: the request reads", () => {
    const home = homeWith(JSON.stringify({ ...request, extra: { deep: [1, 2, 3] } }))
    expect(RunRequest.read(home, "t-1")).toEqual(request)
  })

  it("invalid UTF-8 inside the reason decodes with replacement characters, without throwing", () => {
    const at = valid.indexOf("stop") + 2
    const home = homeWith(Buffer.concat([Buffer.from(valid.slice(0, at)), Buffer.from([0xff, 0xfe]), Buffer.from(valid.slice(at))]))
    expect(RunRequest.read(home, "t-1")).toEqual({ ...request, reason: "st\uFFFD\uFFFDop now" })
  })

  it("a directory in place of the file is no request and stays as it was", () => {
    const home = tempDir()
    fs.mkdirSync(fileIn(home), { recursive: true })
    fs.writeFileSync(path.join(fileIn(home), "inside"), "keep")
    expect(RunRequest.read(home, "t-1")).toBeNull()
    expect(fs.readFileSync(path.join(fileIn(home), "inside"), "utf8")).toBe("keep")
    expect(() => RunRequest.clear(home, "t-1")).not.toThrow()
  })

  it("a symbolic link to /dev/zero is no request, and the link (not its target) is removed", () => {
    const home = tempDir()
    fs.mkdirSync(RunRequest.directoryOf(home))
    fs.symlinkSync("/dev/zero", fileIn(home))
    expect(RunRequest.read(home, "t-1")).toBeNull()
    expect(fs.existsSync("/dev/zero")).toBe(true)
    expect(() => fs.lstatSync(fileIn(home))).toThrow()
  })

  it("a symbolic link to a valid request elsewhere is not followed", () => {
    const home = tempDir()
    const elsewhere = path.join(tempDir(), "request.json")
    fs.writeFileSync(elsewhere, JSON.stringify(request))
    fs.mkdirSync(RunRequest.directoryOf(home))
    fs.symlinkSync(elsewhere, fileIn(home))
    expect(RunRequest.read(home, "t-1")).toBeNull()
    expect(fs.readFileSync(elsewhere, "utf8")).toBe(JSON.stringify(request))
  })

  it("a dangling symbolic link is no request", () => {
    const home = tempDir()
    fs.mkdirSync(RunRequest.directoryOf(home))
    fs.symlinkSync(path.join(home, "missing"), fileIn(home))
    expect(RunRequest.read(home, "t-1")).toBeNull()
  })

  it("a FIFO with no writer is no request, read without blocking, and removed", () => {
    const home = tempDir()
    fs.mkdirSync(RunRequest.directoryOf(home))
    execFileSync("mkfifo", [fileIn(home)])
    expect(fs.statSync(fileIn(home)).isFIFO()).toBe(true)
    // A blocking read would hang here until the test's timeout.
    expect(RunRequest.read(home, "t-1")).toBeNull()
    expect(fs.existsSync(fileIn(home))).toBe(false)
  })

  // Root reads anything, so this one runs only as an ordinary user.
  it.skipIf(process.getuid?.() === 0)("an unreadable file is no request", () => {
    const home = homeWith(JSON.stringify(request))
    fs.chmodSync(fileIn(home), 0o000)
    expect(RunRequest.read(home, "t-1")).toBeNull()
  })
})
