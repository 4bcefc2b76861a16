/**
 * The boundary rules as `npm test` runs them: the real ESLint API with the repository's root
 * config, linting text that poses as files of real projects. Nothing is written into the
 * packages; each fixture exists only as the `filePath` it is linted under.
 */
import { ESLint } from "eslint"
import { fileURLToPath } from "node:url"
import { beforeAll, describe, expect, it } from "vitest"

const repoRoot = fileURLToPath(new URL("../../..", import.meta.url))
const kernelSource = `${repoRoot}packages/kernel/src/__boundary_fixture__.ts`

let eslint: ESLint

beforeAll(() => {
  eslint = new ESLint({ cwd: repoRoot })
})

/** The rule id and message of every problem ESLint reports for `code` linted as `filePath`. */
const lint = async (code: string, filePath: string) => {
  const [result] = await eslint.lintText(code, { filePath })
  return (result?.messages ?? []).map(({ ruleId, message }) => ({ ruleId, message }))
}

describe("root lint config", () => {
  it("rejects a kernel source that imports node:fs", async () => {
    const problems = await lint('import * as fs from "node:fs"\n\nexport const exists = fs.existsSync\n', kernelSource)
    expect(problems).toEqual([
      {
        ruleId: "ratchet/allowed-imports",
        message:
          '@ratchet/kernel may not import "node:fs": the kernel is pure: no I/O; move this to a storage/host package ' +
          "or pass the value in a command. Its allowed imports are relative modules and effect, effect/*, " +
          "@noble/hashes/* (rule ratchet/allowed-imports)."
      }
    ])
  })

  it("rejects every other way the kernel could reach I/O or another package", async () => {
    const code = [
      'import { readFileSync } from "fs"',
      'import type { Stats } from "node:fs"',
      'import { EventStore } from "@ratchet/storage"',
      'export * from "node:os"',
      'export const later = () => import("node:child_process")',
      "export type S = Stats",
      "export const use = [readFileSync, EventStore]",
      ""
    ].join("\n")
    const problems = await lint(code, kernelSource)
    expect(problems.map(({ ruleId, message }) => `${ruleId} ${message.split(":")[0]}`)).toEqual([
      'ratchet/allowed-imports @ratchet/kernel may not import "fs"',
      'ratchet/allowed-imports @ratchet/kernel may not import "node',
      "ratchet/layering @ratchet/kernel (rank 0) may not import @ratchet/storage (rank 1)",
      'ratchet/allowed-imports @ratchet/kernel may not import "@ratchet/storage"',
      'ratchet/allowed-imports @ratchet/kernel may not import "node',
      'ratchet/allowed-imports @ratchet/kernel may not import "node'
    ])
  })

  it("passes a kernel source that imports only effect, @noble/hashes and relative modules", async () => {
    const code = [
      "/** A clean kernel module. */",
      'import * as Either from "effect/Either"',
      'import { sha256 } from "@noble/hashes/sha2.js"',
      'import { bytesToHex } from "@noble/hashes/utils.js"',
      'import type * as Kernel from "./index.js"',
      "",
      "export type Namespace = typeof Kernel",
      "export const digest = (bytes: Uint8Array): Either.Either<string, never> => Either.right(bytesToHex(sha256(bytes)))",
      "export const _unused = (_ignored: string) => undefined",
      ""
    ].join("\n")
    expect(await lint(code, kernelSource)).toEqual([])
  })

  it("lets kernel tests import test tooling and node builtins", async () => {
    const code = [
      'import * as fs from "node:fs"',
      'import { describe, expect, it } from "@effect/vitest"',
      'import * as fc from "fast-check"',
      'import { Attempt } from "@ratchet/kernel"',
      "",
      'describe("x", () => it("y", () => expect([fs, fc, Attempt]).toHaveLength(3)))',
      ""
    ].join("\n")
    expect(await lint(code, `${repoRoot}packages/kernel/test/__boundary_fixture__.test.ts`)).toEqual([])
  })

  it("keeps apps out of reach of packages and their tests", async () => {
    const fromSource = await lint('import { main } from "@ratchet/cli"\nexport const m = main\n', `${repoRoot}packages/controller/src/__boundary_fixture__.ts`)
    const fromTest = await lint('import { main } from "@ratchet/cli"\nexport const m = main\n', `${repoRoot}packages/kernel/test/__boundary_fixture__.test.ts`)
    for (const problems of [fromSource, fromTest]) {
      expect(problems.map(({ ruleId }) => ruleId)).toEqual(["ratchet/layering"])
      expect(problems[0]?.message).toMatch(/may not import the app @ratchet\/cli .*nothing imports an app/)
    }
  })

  it("does not put the kernel allowlist on other packages", async () => {
    const code = 'import { Attempt } from "@ratchet/kernel"\nimport * as fs from "node:fs"\nexport const x = [Attempt, fs]\n'
    expect(await lint(code, `${repoRoot}packages/storage/src/__boundary_fixture__.ts`)).toEqual([])
  })
})
