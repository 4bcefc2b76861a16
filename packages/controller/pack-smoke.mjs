/**
 * Packaging smoke test for `@ratchet/controller`. `tools/pack-check.mjs` runs it inside an empty
 * project that installed the packed tarball (with its workspace dependencies beside it and the
 * `effect` peer), so it sees exactly what a user sees: the entry point resolves to the built
 * `dist/`, a spec file decodes strictly and digests, a hostile file is refused with a typed error,
 * and a folder outside git becomes a project that can be located again. No store is opened.
 * Prints one line; exits non-zero on the first thing that is wrong.
 */
import * as fs from "node:fs"
import { TextEncoder } from "node:util"
import * as os from "node:os"
import * as path from "node:path"
import { ContractFile, Controller, Workspace } from "@ratchet/controller"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

/** @param {string} problem */
const fail = (problem) => {
  console.error(`@ratchet/controller smoke: ${problem}`)
  process.exit(1)
}

const entry = import.meta.resolve("@ratchet/controller")
if (!entry.endsWith("/dist/index.js")) fail(`the entry point resolves to ${entry}, not dist/index.js`)

const spec = new TextEncoder().encode([
  "---",
  "goal: Ship it",
  "acceptanceCriteria:",
  "  - id: AC-001",
  "    outcome: It ships",
  "    required: true",
  "    verify: { command: \"true\" }",
  "---",
  "Editorial body.",
  ""
].join("\n"))
const decoded = ContractFile.decodeSpec("spec.md", spec)
if (Either.isLeft(decoded)) fail(`a valid spec should decode, got ${decoded.left.message}`)
const digested = ContractFile.digestOf("spec.md", spec)
if (Either.isLeft(digested) || !digested.right.digest.startsWith("sha256:")) fail("a valid spec should have a sha256 digest")

const hostile = new TextEncoder().encode("---\ngoal: x\napproval: true\n---\n")
const refused = ContractFile.decodeSpec("spec.md", hostile)
if (Either.isRight(refused) || refused.left._tag !== "@ratchet/controller/ContractFileError") {
  fail("a spec carrying an approval: key should be refused with ContractFileError")
}

if (Controller.slugOf("Make the date test deterministic") !== "make-the-date-test-deterministic") fail("slugOf changed")

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-controller-smoke-"))
try {
  const initialised = await Effect.runPromise(Workspace.make.init(dir, { displayName: "smoke" }))
  const located = await Effect.runPromise(Workspace.make.locate(dir))
  if (located.project.projectId !== initialised.project.projectId) fail("locate should find the project init made")
} finally {
  fs.rmSync(dir, { recursive: true, force: true })
}

console.log(`@ratchet/controller smoke: ok (${entry})`)
