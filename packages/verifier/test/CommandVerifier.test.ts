/**
 * The command verifier: `judge` as a table written by hand (and the rule that a command that could
 * not start is never a FAIL, as a property); `run` with real `sh` commands in a temporary directory
 * (exit codes, output, signals, timeouts that kill the whole process group, interruption, spawn
 * failures); and `verifier.verify` through a verifier context, with its evidence.
 *
 * No test asserts how long anything took: timeouts are short and only their effects are checked.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as fc from "fast-check"
import * as CommandVerifier from "../src/CommandVerifier.js"
import type * as Spec from "@ratchet/kernel/Spec"
import {
  alive,
  blobText,
  ctxFor,
  gone,
  HELLO_SHA,
  memoryBlobs,
  OOPS_SHA,
  reap,
  removeWorkspaces,
  SNAPSHOT,
  SPEC_DIGEST,
  TREE,
  utf8,
  verifier1,
  workspace
} from "./fixtures.js"

afterEach(removeWorkspaces)

type Ran = Parameters<typeof CommandVerifier.judge>[0]

const ran = (over: Partial<Ran>): Ran => ({ exitCode: 0, signal: null, timedOut: false, notStarted: null, ...over })

describe("CommandVerifier.judge", () => {
  const table: ReadonlyArray<readonly [string, Ran, number, "PASS" | "FAIL" | "INDETERMINATE" | "NOT_RUN"]> = [
    ["exit 0, expected 0", ran({ exitCode: 0 }), 0, "PASS"],
    ["exit 1, expected 0", ran({ exitCode: 1 }), 0, "FAIL"],
    ["exit 0, expected 1", ran({ exitCode: 0 }), 1, "FAIL"],
    ["exit 3, expected 3", ran({ exitCode: 3 }), 3, "PASS"],
    ["exit 2, expected 3", ran({ exitCode: 2 }), 3, "FAIL"],
    ["exit 255, expected 0", ran({ exitCode: 255 }), 0, "FAIL"],
    ["exit 130, expected 0", ran({ exitCode: 130 }), 0, "FAIL"],
    ["exit 127 (not found), expected 0", ran({ exitCode: 127 }), 0, "NOT_RUN"],
    ["exit 126 (not executable), expected 0", ran({ exitCode: 126 }), 0, "NOT_RUN"],
    ["exit 127 (not found), expected 1", ran({ exitCode: 127 }), 1, "NOT_RUN"],
    ["exit 126, expected 2", ran({ exitCode: 126 }), 2, "NOT_RUN"],
    ["exit 127, expected 127", ran({ exitCode: 127 }), 127, "PASS"],
    ["exit 126, expected 126", ran({ exitCode: 126 }), 126, "PASS"],
    ["exit 125, expected 0", ran({ exitCode: 125 }), 0, "FAIL"],
    ["exit 128, expected 0", ran({ exitCode: 128 }), 0, "FAIL"],
    ["ended by SIGKILL", ran({ exitCode: null, signal: "SIGKILL" }), 0, "INDETERMINATE"],
    ["ended by SIGSEGV", ran({ exitCode: null, signal: "SIGSEGV" }), 0, "INDETERMINATE"],
    ["no exit code and no signal", ran({ exitCode: null, signal: null }), 0, "INDETERMINATE"],
    ["timed out, killed by SIGTERM", ran({ exitCode: null, signal: "SIGTERM", timedOut: true }), 0, "INDETERMINATE"],
    ["timed out, though it exited 0", ran({ exitCode: 0, timedOut: true }), 0, "INDETERMINATE"],
    ["timed out, though it exited 1", ran({ exitCode: 1, timedOut: true }), 0, "INDETERMINATE"],
    ["not started", ran({ exitCode: null, notStarted: "spawn sh ENOENT" }), 0, "NOT_RUN"],
    ["not started, with an exit code that would fail", ran({ exitCode: 1, notStarted: "spawn sh EACCES" }), 0, "NOT_RUN"],
    ["not started and timed out", ran({ exitCode: null, timedOut: true, notStarted: "spawn sh ENOENT" }), 0, "NOT_RUN"]
  ]
  it.each(table)("%s → %s", (_label, input, expected, verdict) => {
    expect(CommandVerifier.judge(input, expected, 600).verdict).toBe(verdict)
  })

  it.each([
    [ran({ exitCode: 0 }), 0, "exit 0, as expected."],
    [ran({ exitCode: 1 }), 0, "exit 1, expected 0."],
    [ran({ exitCode: 0 }), 4, "exit 0, expected 4."],
    [ran({ exitCode: null, signal: "SIGKILL" }), 0, "the command was ended by SIGKILL; verify again."],
    [ran({ exitCode: null, signal: null }), 0, "the command was ended by a signal; verify again."],
    [
      ran({ exitCode: null, signal: "SIGTERM", timedOut: true }),
      0,
      "the command did not finish within 7 s; raise verify.timeout_seconds or make the check faster, then verify again."
    ],
    [
      ran({ exitCode: null, notStarted: "spawn sh ENOENT" }),
      0,
      "the command could not start (spawn sh ENOENT); fix the command or the environment and verify again."
    ],
    [
      ran({ exitCode: 127 }),
      0,
      "the shell could not run the command (exit 127: command not found); fix the command or install what it needs, then verify again."
    ],
    [
      ran({ exitCode: 126 }),
      0,
      "the shell could not run the command (exit 126: not executable); fix the command or install what it needs, then verify again."
    ]
  ] as const)("explains %j (expected %i): %s", (input, expected, reason) => {
    expect(CommandVerifier.judge(input, expected, 7).reason).toBe(reason)
  })

  const runs = fc.record({
    exitCode: fc.option(fc.integer({ min: 0, max: 255 }), { nil: null }),
    signal: fc.option(fc.constantFrom("SIGTERM", "SIGKILL", "SIGINT"), { nil: null }),
    timedOut: fc.boolean(),
    notStarted: fc.option(fc.string({ minLength: 1 }), { nil: null })
  })

  it("never FAILs a command that did not start", () => {
    fc.assert(
      fc.property(runs, fc.integer({ min: 0, max: 255 }), (input, expected) => {
        fc.pre(input.notStarted !== null)
        expect(CommandVerifier.judge(input, expected, 600).verdict).toBe("NOT_RUN")
      })
    )
  })

  it("FAILs only a command that ran to an exit code other than the expected one, and not 126/127 unless one of those was expected", () => {
    fc.assert(
      fc.property(runs, fc.integer({ min: 0, max: 255 }), (input, expected) => {
        const fails = input.notStarted === null && !input.timedOut && input.exitCode !== null && input.exitCode !== expected &&
          (![126, 127].includes(input.exitCode) || [126, 127].includes(expected))
        expect(CommandVerifier.judge(input, expected, 600).verdict === "FAIL").toBe(fails)
      })
    )
  })

  it("PASSes exactly a command that ran to the expected exit code", () => {
    fc.assert(
      fc.property(runs, fc.integer({ min: 0, max: 255 }), (input, expected) => {
        const passes = input.notStarted === null && !input.timedOut && input.exitCode === expected
        expect(CommandVerifier.judge(input, expected, 600).verdict === "PASS").toBe(passes)
      })
    )
  })
})

describe("CommandVerifier.tailOf", () => {
  const bytes = (text: string) => new TextEncoder().encode(text)

  it("keeps the last 20 lines of stdout then stderr, trailing blank lines dropped", () => {
    const out = Array.from({ length: 25 }, (_, i) => `out ${i + 1}`).join("\n") + "\n"
    expect(CommandVerifier.tailOf(bytes(out), bytes("err 1\nerr 2\n\n\n"))).toBe(
      ["out 8", "out 9", "out 10", "out 11", "out 12", "out 13", "out 14", "out 15", "out 16", "out 17", "out 18", "out 19", "out 20", "out 21", "out 22", "out 23", "out 24", "out 25", "err 1", "err 2"].join("\n")
    )
  })

  it("keeps stdout alone when stderr is empty, and honours a line count", () => {
    expect(CommandVerifier.tailOf(bytes("a\nb\nc\n"), bytes(""))).toBe("a\nb\nc")
    expect(CommandVerifier.tailOf(bytes("a\nb\nc\n"), bytes(""), 2)).toBe("b\nc")
    expect(CommandVerifier.tailOf(bytes(""), bytes("only err\n"))).toBe("only err")
    expect(CommandVerifier.tailOf(bytes("no newline"), bytes("err\n"))).toBe("no newline\nerr")
    expect(CommandVerifier.tailOf(bytes(""), bytes(""))).toBe("")
  })

  it("keeps at most 2 000 characters, the last ones", () => {
    const line = "x".repeat(999) + "y"
    const tail = CommandVerifier.tailOf(bytes(`${line}\n${line}\n${line}\nEND`), bytes(""))
    expect(tail.length).toBe(2_000)
    expect(tail.endsWith("y\nEND")).toBe(true)
  })
})

describe("CommandVerifier.run", () => {
  const run = (command: string, cwd: string, timeoutMs = 10_000) => CommandVerifier.run(command, { cwd, timeoutMs })

  it.effect("reports the exit code of a command that ran", () =>
    Effect.gen(function*() {
      const dir = workspace()
      for (const code of [0, 1, 3, 42, 255]) {
        const result = yield* run(`exit ${code}`, dir)
        expect([result.exitCode, result.signal, result.timedOut, result.notStarted]).toEqual([code, null, false, null])
      }
    }))

  it.effect("captures stdout and stderr separately, byte for byte", () =>
    Effect.gen(function*() {
      const dir = workspace()
      const result = yield* run(`printf 'one\\ntwo\\n'; printf 'warn\\n' >&2; printf '\\303\\251'`, dir)
      expect(utf8(result.stdout)).toBe("one\ntwo\né")
      expect(utf8(result.stderr)).toBe("warn\n")
      expect(result.exitCode).toBe(0)
    }))

  it.effect("runs in the given directory, with RATCHET_VERIFYING=1 and stdin closed", () =>
    Effect.gen(function*() {
      const dir = workspace()
      fs.writeFileSync(path.join(dir, "marker.txt"), "here\n")
      const result = yield* run(`cat marker.txt; printf '%s\\n' "$RATCHET_VERIFYING"; cat; echo done`, dir)
      expect(utf8(result.stdout)).toBe("here\n1\ndone\n")
    }))

  it.effect("reports a shell that could not find the command as exit 127", () =>
    Effect.gen(function*() {
      const dir = workspace()
      const result = yield* run("ratchet-no-such-command-xyz --flag", dir)
      expect(result.exitCode).toBe(127)
      expect(result.notStarted).toBe(null)
      expect(utf8(result.stderr)).toContain("not found")
    }))

  it.effect("reports a command ended by a signal: no exit code, the signal, not a timeout", () =>
    Effect.gen(function*() {
      const dir = workspace()
      const result = yield* run("kill -TERM $$", dir)
      expect([result.exitCode, result.signal, result.timedOut, result.notStarted]).toEqual([null, "SIGTERM", false, null])
    }))

  it.effect("times out: timedOut, and the whole process group is gone, background children included", () =>
    Effect.gen(function*() {
      const dir = workspace()
      const result = yield* run("sleep 30 & echo $! > child.pid; wait", dir, 300)
      const child = Number(fs.readFileSync(path.join(dir, "child.pid"), "utf8").trim())
      try {
        expect(result.timedOut).toBe(true)
        expect(result.exitCode).toBe(null)
        expect(result.signal).toBe("SIGTERM")
        expect(result.notStarted).toBe(null)
        expect(Number.isInteger(child) && child > 1).toBe(true)
        expect(yield* gone(child)).toBe(true)
      } finally {
        reap(child)
      }
    }))

  it.effect("a plain timeout: sleep 5 with 300 ms is cut", () =>
    Effect.gen(function*() {
      const dir = workspace()
      const result = yield* run("echo started; sleep 5; echo finished", dir, 300)
      expect(result.timedOut).toBe(true)
      expect(utf8(result.stdout)).toBe("started\n")
    }))

  it.effect("a group that ignores SIGTERM is killed with SIGKILL after the grace", () =>
    Effect.gen(function*() {
      const dir = workspace()
      const result = yield* run("trap '' TERM; sleep 30 & echo $! > child.pid; wait", dir, 200)
      const child = Number(fs.readFileSync(path.join(dir, "child.pid"), "utf8").trim())
      try {
        expect(result.timedOut).toBe(true)
        expect(result.exitCode).toBe(null)
        expect(result.signal).toBe("SIGKILL")
        expect(yield* gone(child)).toBe(true)
      } finally {
        reap(child)
      }
    }))

  it.effect("kills what the shell left running in its group when it exits normally", () =>
    Effect.gen(function*() {
      const dir = workspace()
      const result = yield* run("sleep 30 >/dev/null 2>&1 & echo $! > child.pid; exit 0", dir)
      const child = Number(fs.readFileSync(path.join(dir, "child.pid"), "utf8").trim())
      try {
        expect([result.exitCode, result.timedOut]).toEqual([0, false])
        expect(yield* gone(child)).toBe(true)
      } finally {
        reap(child)
      }
    }))

  it.effect("a background child still holding the output pipes does not keep the check waiting for its timeout", () =>
    Effect.gen(function*() {
      const dir = workspace()
      // The child inherits stdout and stderr; only the shell's exit says the check is over.
      // Without that, the check would wait for the pipes and end as a timeout (20 s < 300 s).
      const result = yield* run("sleep 300 & echo $! > child.pid; echo done", dir, 20_000)
      const child = Number(fs.readFileSync(path.join(dir, "child.pid"), "utf8").trim())
      try {
        expect([result.exitCode, result.timedOut, new TextDecoder().decode(result.stdout)]).toEqual([0, false, "done\n"])
        expect(yield* gone(child)).toBe(true)
      } finally {
        reap(child)
      }
    }))

  it.effect("a grandchild that left the group (setsid) and holds the pipes: the check ends with the shell, not at its timeout", () =>
    Effect.gen(function*() {
      const dir = workspace()
      const result = yield* run("setsid sleep 300 & echo $! > child.pid; echo done", dir, 20_000)
      const child = Number(fs.readFileSync(path.join(dir, "child.pid"), "utf8").trim())
      try {
        expect([result.exitCode, result.timedOut, new TextDecoder().decode(result.stdout)]).toEqual([0, false, "done\n"])
      } finally {
        reap(child)
      }
    }))

  it.effect("kills the group when the effect is interrupted", () =>
    Effect.gen(function*() {
      const dir = workspace()
      const pidFile = path.join(dir, "child.pid")
      const fiber = yield* Effect.fork(run("sleep 30 & echo $! > child.pid.tmp; mv child.pid.tmp child.pid; wait", dir, 60_000))
      const until = Date.now() + 5_000
      while (!fs.existsSync(pidFile) && Date.now() < until) {
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
      }
      const child = Number(fs.readFileSync(pidFile, "utf8").trim())
      try {
        expect(alive(child)).toBe(true)
        yield* Fiber.interrupt(fiber)
        expect(yield* gone(child)).toBe(true)
      } finally {
        reap(child)
      }
    }))

  it.effect("a directory that does not exist: notStarted, never an exit code", () =>
    Effect.gen(function*() {
      const dir = path.join(workspace(), "missing")
      const result = yield* run("echo never", dir)
      expect(result.notStarted).not.toBe(null)
      expect(result.notStarted).toContain("ENOENT")
      expect([result.exitCode, result.signal, result.timedOut]).toEqual([null, null, false])
      expect(result.stdout.length).toBe(0)
      expect(CommandVerifier.judge(result, 0, 600).verdict).toBe("NOT_RUN")
    }))

  it.effect("cuts each stream at 16 MiB and says so", () =>
    Effect.gen(function*() {
      const dir = workspace()
      const result = yield* run("head -c 17000000 /dev/zero; printf 'small' >&2", dir)
      const marker = "\n[ratchet: output cut at 16777216 bytes]\n"
      expect(result.exitCode).toBe(0)
      expect(result.stdout.length).toBe(16 * 1024 * 1024 + marker.length)
      expect(utf8(result.stdout.subarray(16 * 1024 * 1024))).toBe(marker)
      expect(result.stdout[16 * 1024 * 1024 - 1]).toBe(0)
      expect(utf8(result.stderr)).toBe("small")
    }))
})

describe("CommandVerifier.verifier.verify", () => {
  const criterion = (verify: Spec.Verify): Spec.AcceptanceCriterion => ({ id: "AC-001", outcome: "the build succeeds", required: true, verify })

  it.effect("PASS: the evidence names the command, the tree, the exit, and the output as blobs", () =>
    Effect.gen(function*() {
      const root = workspace()
      const blobs = memoryBlobs()
      const judgement = yield* CommandVerifier.verifier.verify(criterion({ command: "echo hello" }), ctxFor({ root, blobs }), [])
      expect(judgement.verifier).toBe("command")
      expect(judgement.verdict).toBe("PASS")
      expect(judgement.reason).toBe("exit 0, as expected.")
      expect(judgement.evidence).toHaveLength(1)
      const evidence = judgement.evidence[0]!
      expect(evidence).toMatchObject({
        _tag: "command",
        acId: "AC-001",
        specDigest: SPEC_DIGEST,
        snapshotLsn: SNAPSHOT,
        verifier: verifier1,
        command: "echo hello",
        expectExitCode: 0,
        tree: TREE,
        exitCode: 0,
        signal: null,
        timedOut: false,
        stdoutRef: `sha256:${HELLO_SHA}`,
        stderrRef: null,
        outputTail: "hello",
        notStarted: null
      })
      expect(blobText(blobs, `sha256:${HELLO_SHA}`)).toBe("hello\n")
      expect(blobs.puts).toEqual([`sha256:${HELLO_SHA}`])
      if (evidence._tag !== "command") throw new Error("not command evidence")
      expect(Number.isInteger(evidence.startedAt) && Number.isInteger(evidence.durationMs) && evidence.durationMs >= 0).toBe(true)
      expect(evidence.at >= evidence.startedAt).toBe(true)
    }))

  it.effect("FAIL: another exit code; stderr stored, stdout empty so no blob", () =>
    Effect.gen(function*() {
      const root = workspace()
      const blobs = memoryBlobs()
      const judgement = yield* CommandVerifier.verifier.verify(criterion({ command: "echo oops >&2; exit 4" }), ctxFor({ root, blobs }), [])
      expect(judgement.verdict).toBe("FAIL")
      expect(judgement.reason).toBe("exit 4, expected 0.")
      expect(judgement.evidence[0]).toMatchObject({ exitCode: 4, stdoutRef: null, stderrRef: `sha256:${OOPS_SHA}`, outputTail: "oops" })
      expect(blobText(blobs, `sha256:${OOPS_SHA}`)).toBe("oops\n")
    }))

  it.effect("PASS when the exit code is the one the criterion expects", () =>
    Effect.gen(function*() {
      const root = workspace()
      const judgement = yield* CommandVerifier.verifier.verify(criterion({ command: "exit 4", expectExitCode: 4 }), ctxFor({ root, blobs: memoryBlobs() }), [])
      expect(judgement.verdict).toBe("PASS")
      expect(judgement.evidence[0]).toMatchObject({ exitCode: 4, expectExitCode: 4, stdoutRef: null, stderrRef: null, outputTail: "" })
    }))

  it.effect("FAIL when 0 was not the expected code", () =>
    Effect.gen(function*() {
      const root = workspace()
      const judgement = yield* CommandVerifier.verifier.verify(criterion({ command: "true", expectExitCode: 1 }), ctxFor({ root, blobs: memoryBlobs() }), [])
      expect(judgement.verdict).toBe("FAIL")
      expect(judgement.reason).toBe("exit 0, expected 1.")
    }))

  it.effect("NOT_RUN: the shell cannot find the command (127)", () =>
    Effect.gen(function*() {
      const root = workspace()
      const blobs = memoryBlobs()
      const judgement = yield* CommandVerifier.verifier.verify(criterion({ command: "ratchet-no-such-command-xyz" }), ctxFor({ root, blobs }), [])
      expect(judgement.verdict).toBe("NOT_RUN")
      expect(judgement.reason).toContain("exit 127: command not found")
      const evidence = judgement.evidence[0]!
      expect(evidence).toMatchObject({ exitCode: 127, notStarted: null, stdoutRef: null })
      if (evidence._tag !== "command") throw new Error("not command evidence")
      expect(blobText(blobs, evidence.stderrRef)).toContain("not found")
    }))

  it.effect("NOT_RUN: the workspace is not there, so nothing started", () =>
    Effect.gen(function*() {
      const root = path.join(workspace(), "gone")
      const blobs = memoryBlobs()
      const judgement = yield* CommandVerifier.verifier.verify(criterion({ command: "echo hello" }), ctxFor({ root, blobs }), [])
      expect(judgement.verdict).toBe("NOT_RUN")
      expect(judgement.reason).toMatch(/^the command could not start \(.*ENOENT.*\); fix the command or the environment and verify again\.$/)
      expect(judgement.evidence[0]).toMatchObject({ exitCode: null, signal: null, timedOut: false, stdoutRef: null, stderrRef: null, outputTail: "" })
      expect(blobs.puts).toEqual([])
    }))

  it.effect("INDETERMINATE: the criterion's own timeout passed", () =>
    Effect.gen(function*() {
      const root = workspace()
      const judgement = yield* CommandVerifier.verifier.verify(
        criterion({ command: "echo started; sleep 5", timeoutSeconds: 1 }),
        ctxFor({ root, blobs: memoryBlobs() }),
        []
      )
      expect(judgement.verdict).toBe("INDETERMINATE")
      expect(judgement.reason).toBe(
        "the command did not finish within 1 s; raise verify.timeout_seconds or make the check faster, then verify again."
      )
      expect(judgement.evidence[0]).toMatchObject({ timedOut: true, exitCode: null, outputTail: "started" })
    }))

  it.effect("INDETERMINATE: the context's deadline is shorter than the timeout (a passed deadline runs nothing to completion)", () =>
    Effect.gen(function*() {
      const root = workspace()
      const judgement = yield* CommandVerifier.verifier.verify(
        criterion({ command: "sleep 5" }),
        ctxFor({ root, blobs: memoryBlobs(), deadline: Date.now() + 300 }),
        []
      )
      expect(judgement.verdict).toBe("INDETERMINATE")
      expect(judgement.evidence[0]).toMatchObject({ timedOut: true })
      const past = yield* CommandVerifier.verifier.verify(criterion({ command: "sleep 5" }), ctxFor({ root, blobs: memoryBlobs(), deadline: 0 }), [])
      expect(past.verdict).toBe("INDETERMINATE")
    }))
})
