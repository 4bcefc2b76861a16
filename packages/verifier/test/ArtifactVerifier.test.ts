/**
 * The artifact-hash verifier after a real run of the command verifier: files present (with and
 * without a declared hash), a wrong hash, missing files, a symlink out of the workspace, a
 * directory, and commands that did not complete, whose artifacts are never hashed.
 * SHA-256 of "hello\n" (6 bytes) and "built\n" were taken with sha256sum.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import type * as Spec from "@ratchet/kernel/Spec"
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ArtifactVerifier from "../src/ArtifactVerifier.js"
import * as CommandVerifier from "../src/CommandVerifier.js"
import type * as Verifier from "../src/Verifier.js"
import { BUILT_SHA, ctxFor, HELLO_SHA, memoryBlobs, removeWorkspaces, SNAPSHOT, SPEC_DIGEST, verifier1, workspace } from "./fixtures.js"

afterEach(removeWorkspaces)

const WRONG = "0".repeat(64)

const criterion = (command: string, artifacts: ReadonlyArray<Spec.Artifact>, timeoutSeconds?: number): Spec.AcceptanceCriterion => ({
  id: "AC-001",
  outcome: "the build writes its outputs",
  required: true,
  verify: { command, artifacts, ...(timeoutSeconds === undefined ? {} : { timeoutSeconds }) }
})

const verifyBoth = (root: string, ac: Spec.AcceptanceCriterion) =>
  Effect.gen(function*() {
    const ctx = ctxFor({ root, blobs: memoryBlobs() })
    const ran = yield* CommandVerifier.verifier.verify(ac, ctx, [])
    const judged = yield* ArtifactVerifier.verifier.verify(ac, ctx, [ran])
    return { ran, judged }
  })

const writeHello = "mkdir -p out && printf 'hello\\n' > out/hello.txt"

const base = { _tag: "artifact", acId: "AC-001", specDigest: SPEC_DIGEST, snapshotLsn: SNAPSHOT, verifier: verifier1 }

const artifactsOf = (judgement: Verifier.Judgement) => {
  expect(judgement.verifier).toBe("artifact")
  expect(judgement.evidence).toHaveLength(1)
  const evidence = judgement.evidence[0]!
  if (evidence._tag !== "artifact") throw new Error(`expected artifact evidence, got ${evidence._tag}`)
  expect(evidence).toMatchObject(base)
  return evidence.artifacts
}

describe("ArtifactVerifier", () => {
  it.effect("PASS for a file present, with its SHA-256 and size, when no hash is declared", () =>
    Effect.gen(function*() {
      const { judged } = yield* verifyBoth(workspace(), criterion(writeHello, [{ path: "out/hello.txt" }]))
      expect(judged.verdict).toBe("PASS")
      expect(judged.reason).toBe("1 artifact present.")
      expect(artifactsOf(judged)).toEqual([{ path: "out/hello.txt", sha256: HELLO_SHA, expected: null, size: 6, problem: null }])
    }))

  it.effect("INDETERMINATE for a file without a declared hash that this run did not write (left by an earlier run)", () =>
    Effect.gen(function*() {
      const root = workspace()
      fs.mkdirSync(path.join(root, "out"))
      fs.writeFileSync(path.join(root, "out", "hello.txt"), "hello\n")
      const past = new Date(Date.now() - 60_000)
      fs.utimesSync(path.join(root, "out", "hello.txt"), past, past)
      const { judged } = yield* verifyBoth(root, criterion("true", [{ path: "out/hello.txt" }]))
      expect(judged.verdict).toBe("INDETERMINATE")
      expect(artifactsOf(judged)).toEqual([
        { path: "out/hello.txt", sha256: HELLO_SHA, expected: null, size: 6, problem: "it was not written by this run of the command (it is older)" }
      ])
    }))

  it.effect("INDETERMINATE for a file without a declared hash whose time was set after the run (planted)", () =>
    Effect.gen(function*() {
      const root = workspace()
      fs.mkdirSync(path.join(root, "out"))
      fs.writeFileSync(path.join(root, "out", "hello.txt"), "hello\n")
      const future = new Date(Date.now() + 365 * 24 * 3600_000)
      fs.utimesSync(path.join(root, "out", "hello.txt"), future, future)
      const { judged } = yield* verifyBoth(root, criterion("true", [{ path: "out/hello.txt" }]))
      expect(judged.verdict).toBe("INDETERMINATE")
      expect(artifactsOf(judged)[0]?.problem).toBe("it was not written by this run of the command (its modification time is after the run, set by hand)")
    }))

  it.effect("PASS for an older file whose declared hash matches: the hash, not the age, is the evidence", () =>
    Effect.gen(function*() {
      const root = workspace()
      fs.mkdirSync(path.join(root, "out"))
      fs.writeFileSync(path.join(root, "out", "hello.txt"), "hello\n")
      const past = new Date(Date.now() - 60_000)
      fs.utimesSync(path.join(root, "out", "hello.txt"), past, past)
      const { judged } = yield* verifyBoth(root, criterion("true", [{ path: "out/hello.txt", sha256: HELLO_SHA }]))
      expect(judged.verdict).toBe("PASS")
    }))

  it.effect("PASS for files with the declared hashes", () =>
    Effect.gen(function*() {
      const { judged } = yield* verifyBoth(
        workspace(),
        criterion(`${writeHello} && printf 'built\\n' > out/built.txt`, [
          { path: "out/hello.txt", sha256: HELLO_SHA },
          { path: "out/built.txt", sha256: BUILT_SHA }
        ])
      )
      expect(judged.verdict).toBe("PASS")
      expect(judged.reason).toBe("2 artifacts present with the declared hashes.")
      expect(artifactsOf(judged)).toEqual([
        { path: "out/hello.txt", sha256: HELLO_SHA, expected: HELLO_SHA, size: 6, problem: null },
        { path: "out/built.txt", sha256: BUILT_SHA, expected: BUILT_SHA, size: 6, problem: null }
      ])
    }))

  it.effect("PASS for an empty file", () =>
    Effect.gen(function*() {
      const { judged } = yield* verifyBoth(workspace(), criterion("touch empty", [{ path: "empty" }]))
      expect(judged.verdict).toBe("PASS")
      expect(artifactsOf(judged)).toEqual([
        { path: "empty", sha256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", expected: null, size: 0, problem: null }
      ])
    }))

  it.effect("FAIL for a hash other than the declared one", () =>
    Effect.gen(function*() {
      const { judged } = yield* verifyBoth(workspace(), criterion(writeHello, [{ path: "out/hello.txt", sha256: WRONG }]))
      expect(judged.verdict).toBe("FAIL")
      const problem = `its SHA-256 is ${HELLO_SHA}, not ${WRONG}`
      expect(judged.reason).toBe(`artifact check failed (out/hello.txt: ${problem}).`)
      expect(artifactsOf(judged)).toEqual([{ path: "out/hello.txt", sha256: HELLO_SHA, expected: WRONG, size: 6, problem }])
    }))

  it.effect("FAIL for a missing file, listing only what failed", () =>
    Effect.gen(function*() {
      const { judged } = yield* verifyBoth(workspace(), criterion(writeHello, [{ path: "out/hello.txt" }, { path: "out/missing.txt", sha256: WRONG }]))
      expect(judged.verdict).toBe("FAIL")
      expect(judged.reason).toBe("artifact check failed (out/missing.txt: it does not exist).")
      expect(artifactsOf(judged)).toEqual([
        { path: "out/hello.txt", sha256: HELLO_SHA, expected: null, size: 6, problem: null },
        { path: "out/missing.txt", sha256: null, expected: WRONG, size: null, problem: "it does not exist" }
      ])
    }))

  it.effect("FAIL for a dangling symlink: nothing is there", () =>
    Effect.gen(function*() {
      const { judged } = yield* verifyBoth(workspace(), criterion("ln -s nowhere.txt link.txt", [{ path: "link.txt" }]))
      expect(judged.verdict).toBe("FAIL")
      expect(artifactsOf(judged)[0]?.problem).toBe("it does not exist")
    }))

  it.effect("INDETERMINATE for a symlink that escapes the workspace, and the file outside is not hashed", () =>
    Effect.gen(function*() {
      const outside = workspace()
      fs.writeFileSync(path.join(outside, "secret.txt"), "hello\n")
      const root = workspace()
      const { judged } = yield* verifyBoth(root, criterion(`ln -s ${path.join(outside, "secret.txt")} escape.txt`, [{ path: "escape.txt", sha256: HELLO_SHA }]))
      expect(judged.verdict).toBe("INDETERMINATE")
      expect(judged.reason).toBe(
        "artifacts could not be checked (escape.txt: it resolves outside the workspace); fix the path or permissions and verify again."
      )
      expect(artifactsOf(judged)).toEqual([
        { path: "escape.txt", sha256: null, expected: HELLO_SHA, size: null, problem: "it resolves outside the workspace" }
      ])
    }))

  it.effect("INDETERMINATE for a directory escaping through a symlinked parent", () =>
    Effect.gen(function*() {
      const outside = workspace()
      fs.writeFileSync(path.join(outside, "hello.txt"), "hello\n")
      const { judged } = yield* verifyBoth(workspace(), criterion(`ln -s ${outside} out`, [{ path: "out/hello.txt" }]))
      expect(judged.verdict).toBe("INDETERMINATE")
      expect(artifactsOf(judged)[0]?.problem).toBe("it resolves outside the workspace")
    }))

  it.effect("INDETERMINATE for a directory where a file should be", () =>
    Effect.gen(function*() {
      const { judged } = yield* verifyBoth(workspace(), criterion("mkdir -p out/hello.txt", [{ path: "out/hello.txt" }]))
      expect(judged.verdict).toBe("INDETERMINATE")
      expect(artifactsOf(judged)).toEqual([
        { path: "out/hello.txt", sha256: null, expected: null, size: null, problem: "it is not a regular file" }
      ])
    }))

  it.effect("a missing file outweighs an unreadable one: FAIL", () =>
    Effect.gen(function*() {
      const { judged } = yield* verifyBoth(workspace(), criterion("mkdir -p out/dir", [{ path: "out/dir" }, { path: "out/none" }]))
      expect(judged.verdict).toBe("FAIL")
      expect(judged.reason).toBe("artifact check failed (out/none: it does not exist).")
    }))

  it.effect("checks the artifacts of a command that FAILED (the criterion fails either way)", () =>
    Effect.gen(function*() {
      const { ran, judged } = yield* verifyBoth(workspace(), criterion(`${writeHello}; exit 1`, [{ path: "out/hello.txt" }]))
      expect(ran.verdict).toBe("FAIL")
      expect(judged.verdict).toBe("PASS")
    }))

  const notRun = "the artifacts were not hashed because the command that produces them did not complete."

  it.effect("NOT_RUN when the command could not run: a file left by an earlier run never counts", () =>
    Effect.gen(function*() {
      const root = workspace()
      fs.mkdirSync(path.join(root, "out"))
      fs.writeFileSync(path.join(root, "out/hello.txt"), "hello\n")
      const { ran, judged } = yield* verifyBoth(root, criterion("ratchet-no-such-command-xyz", [{ path: "out/hello.txt", sha256: HELLO_SHA }]))
      expect(ran.verdict).toBe("NOT_RUN")
      expect(judged).toEqual({ verifier: "artifact", verdict: "NOT_RUN", reason: notRun, evidence: [] })
    }))

  it.effect("NOT_RUN when the command never started", () =>
    Effect.gen(function*() {
      const { judged } = yield* verifyBoth(path.join(workspace(), "missing"), criterion(writeHello, [{ path: "out/hello.txt" }]))
      expect(judged).toEqual({ verifier: "artifact", verdict: "NOT_RUN", reason: notRun, evidence: [] })
    }))

  it.effect("NOT_RUN when the command timed out, even if the file is there", () =>
    Effect.gen(function*() {
      const { ran, judged } = yield* verifyBoth(workspace(), criterion(`${writeHello}; sleep 5`, [{ path: "out/hello.txt" }], 1))
      expect(ran.verdict).toBe("INDETERMINATE")
      expect(judged).toEqual({ verifier: "artifact", verdict: "NOT_RUN", reason: notRun, evidence: [] })
    }))

  it.effect("NOT_RUN when no command ran before it", () =>
    Effect.gen(function*() {
      const root = workspace()
      fs.writeFileSync(path.join(root, "hello.txt"), "hello\n")
      const judged = yield* ArtifactVerifier.verifier.verify(criterion("true", [{ path: "hello.txt" }]), ctxFor({ root, blobs: memoryBlobs() }), [])
      expect(judged.verdict).toBe("NOT_RUN")
    }))
})
