/**
 * `ratchet/allowed-imports`, configured as the root config configures the kernel: relative
 * modules, `effect`, `effect/*` and `@noble/hashes/*` pass; every other way of naming any other
 * module is rejected with a message that names the import, the project and the reason.
 */
import rule from "../rules/allowed-imports.js"
import { ruleTester } from "./ruleTester.js"

const reason = "the kernel is pure: no I/O; move this to a storage/host package or pass the value in a command"
const options = [{ project: "@ratchet/kernel", allow: ["effect", "effect/*", "@noble/hashes/*"], reason }]
const filename = "/repo/packages/kernel/src/Attempt.ts"

const rejected = (source: string) => ({
  message:
    `@ratchet/kernel may not import "${source}": the kernel is pure: no I/O; move this to a storage/host package ` +
    "or pass the value in a command. Its allowed imports are relative modules and effect, effect/*, @noble/hashes/* " +
    "(rule ratchet/allowed-imports)."
})

const computed = {
  message:
    "@ratchet/kernel may not import a computed module specifier: the import boundary is checked by name, so write " +
    "the specifier as a string literal (rule ratchet/allowed-imports)."
}

ruleTester("/repo").run("ratchet/allowed-imports", rule, {
  valid: [
    'import * as Either from "effect/Either"',
    'import { pipe } from "effect"',
    'import type * as Types from "effect/Types"',
    'import { sha256 } from "@noble/hashes/sha2.js"',
    'import * as Attempt from "./Attempt.js"',
    'import { x } from "../kernel/src/x.js"',
    'export * as Gate from "./Gate.js"',
    'export { digest } from "./Digest.js"',
    'export const load = () => import("./Plan.js")',
    "export const load = () => import(`effect/Schema`)",
    'export type Hash = typeof import("@noble/hashes/sha2.js")',
    "export const local = (fn: (x: string) => void) => fn(\"node:fs\")"
  ].map((code) => ({ code, options, filename })),
  invalid: [
    { code: 'import * as fs from "node:fs"', errors: [rejected("node:fs")] },
    { code: 'import { readFileSync } from "fs"', errors: [rejected("fs")] },
    { code: 'import type { Stats } from "node:fs"', errors: [rejected("node:fs")] },
    { code: 'import "node:process"', errors: [rejected("node:process")] },
    { code: 'export * from "node:os"', errors: [rejected("node:os")] },
    { code: 'export { join } from "node:path"', errors: [rejected("node:path")] },
    { code: 'export type { Stats } from "fs"', errors: [rejected("fs")] },
    { code: 'export const load = () => import("node:crypto")', errors: [rejected("node:crypto")] },
    { code: 'const cp = require("child_process")', errors: [rejected("child_process")] },
    { code: 'import os = require("os")', errors: [rejected("os")] },
    { code: 'export type Path = typeof import("node:path")', errors: [rejected("node:path")] },
    { code: 'import { Store } from "@ratchet/storage"', errors: [rejected("@ratchet/storage")] },
    { code: 'import { z } from "zod"', errors: [rejected("zod")] },
    // `@noble/hashes/*` admits subpaths only, and prefixes must end at a path segment.
    { code: 'import * as hashes from "@noble/hashes"', errors: [rejected("@noble/hashes")] },
    { code: 'import * as fake from "effect-extra/Either"', errors: [rejected("effect-extra/Either")] },
    { code: 'import * as fake from "@noble/hashes-fork/sha2.js"', errors: [rejected("@noble/hashes-fork/sha2.js")] },
    { code: "export const load = (name: string) => import(name)", errors: [computed] },
    { code: "const name = 'fs'; export const mod = require(name)", errors: [computed] },
    {
      code: 'import * as fs from "node:fs"\nimport * as Either from "effect/Either"\nimport { Worker } from "node:worker_threads"',
      errors: [
        { ...rejected("node:fs"), line: 1, column: 21 },
        { ...rejected("node:worker_threads"), line: 3, column: 24 }
      ]
    }
  ].map((test) => ({ ...test, options, filename }))
})

ruleTester("/repo").run("ratchet/allowed-imports (another project's allowlist)", rule, {
  valid: [
    {
      code: 'import * as fs from "node:fs"',
      options: [{ project: "@ratchet/storage", allow: ["node:*"], reason: "storage does I/O" }],
      filename: "/repo/packages/storage/src/BlobStore.ts"
    }
  ],
  invalid: [
    {
      code: 'import * as fs from "node:fs"',
      options: [{ project: "@ratchet/verifier", allow: [], reason: "verifiers read through VerifierCtx" }],
      filename: "/repo/packages/verifier/src/Gate.ts",
      errors: [
        {
          message:
            '@ratchet/verifier may not import "node:fs": verifiers read through VerifierCtx. Its allowed imports are ' +
            "relative modules and nothing else (rule ratchet/allowed-imports)."
        }
      ]
    }
  ]
})
