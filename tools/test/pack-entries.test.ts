/**
 * What the packaging check reads from a manifest (the files its entry points name, the subpaths a
 * wildcard opens) and how it reports the linters, on hand-written manifests; then the two linters
 * on real tarballs packed from scratch packages, one clean and one wrong in the ways they exist to
 * catch.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { attwProblems, entryProblems, importable, importableSubpaths, namedFiles } from "../pack-entries.mjs"
import { attwFindings, publintProblems } from "../pack-lint.mjs"

const scratch: Array<string> = []
afterAll(() => {
  for (const directory of scratch) fs.rmSync(directory, { recursive: true, force: true })
})

/** The shape of every library in packages/: a root export, per-module subpaths, internals closed. */
const library = {
  name: "@ratchet/example",
  version: "0.0.0",
  exports: {
    "./package.json": "./package.json",
    ".": { "@ratchet/source": "./src/index.ts", types: "./dist/index.d.ts", default: "./dist/index.js" },
    "./*": { "@ratchet/source": "./src/*.ts", types: "./dist/*.d.ts", default: "./dist/*.js" },
    "./internal/*": null
  }
}
const libraryFiles = [
  "LICENSE",
  "README.md",
  "package.json",
  "dist/index.js",
  "dist/index.d.ts",
  "dist/Event.js",
  "dist/Event.d.ts",
  "dist/internal/fold.js",
  "dist/internal/fold.d.ts",
  "src/index.ts",
  "src/Event.ts",
  "src/internal/fold.ts"
]

describe("entryProblems", () => {
  it("finds nothing wrong with a tarball holding every file the exports name", () => {
    expect(entryProblems(library, libraryFiles)).toEqual([])
  })

  it("names each missing file with the export that names it, and the files every tarball needs", () => {
    const files = libraryFiles.filter((file) => !["dist/index.d.ts", "LICENSE", "README.md"].includes(file))
    expect(entryProblems(library, files)).toEqual([
      "lacks README.md",
      "lacks LICENSE",
      `lacks dist/index.d.ts, which exports["."]["types"] names`
    ])
  })

  it("says when a wildcard target matches no file", () => {
    const files = libraryFiles.filter((file) => !file.endsWith(".d.ts"))
    expect(entryProblems(library, files)).toContain(`exports["./*"]["types"] = ./dist/*.d.ts matches no file`)
  })

  it("takes a bin-only package's entry points from bin, and requires no dist/index.js of it", () => {
    const cli = { name: "@ratchet/cli", version: "0.0.0", bin: { ratchet: "./bin/ratchet.mjs" } }
    expect(entryProblems(cli, ["LICENSE", "README.md", "package.json", "bin/ratchet.mjs", "dist/ratchet.mjs"])).toEqual([])
    expect(entryProblems(cli, ["LICENSE", "README.md", "package.json", "dist/ratchet.mjs"])).toEqual([`lacks bin/ratchet.mjs, which "bin" names`])
    expect(namedFiles(cli)).toEqual(["bin/ratchet.mjs"])
    expect(importable(cli)).toBe(false)
  })

  it("reads the legacy fields and an exports string, and refuses a package with no entry point", () => {
    expect(entryProblems({ name: "a", version: "1.0.0", main: "./index.js", types: "index.d.ts" }, ["LICENSE", "README.md", "package.json", "index.js"]))
      .toEqual([`lacks index.d.ts, which "types" names`])
    expect(entryProblems({ name: "a", version: "1.0.0", exports: "./main.js" }, ["LICENSE", "README.md", "package.json"]))
      .toEqual([`lacks main.js, which exports["."] names`])
    expect(entryProblems({ name: "a", version: "1.0.0" }, ["LICENSE", "README.md", "package.json"])).toEqual([`has no entry point: give it "exports" (or "bin")`])
  })

  it("lists the exactly named files a build must produce, without the wildcards", () => {
    expect(namedFiles(library)).toEqual(["src/index.ts", "dist/index.d.ts", "dist/index.js"])
  })
})

describe("importableSubpaths", () => {
  it("expands the wildcard over the tarball's type files, and leaves what a null key closes", () => {
    expect(importableSubpaths(library, libraryFiles)).toEqual([".", "./Event", "./index"])
  })

  it("keeps an exact key that a wildcard would also match, once", () => {
    const manifest = { ...library, exports: { ...library.exports, "./Event": { types: "./dist/Event.d.ts", default: "./dist/Event.js" } } }
    expect(importableSubpaths(manifest, libraryFiles)).toEqual([".", "./Event", "./index"])
  })

  it("has nothing to import in a bin-only package, and the root of a package with only main", () => {
    expect(importableSubpaths({ name: "cli", version: "0.0.0", bin: "./bin/cli.mjs" }, ["bin/cli.mjs"])).toEqual([])
    expect(importableSubpaths({ name: "old", version: "0.0.0", main: "index.js" }, ["index.js"])).toEqual(["."])
  })
})

describe("attwProblems", () => {
  const report = {
    analysis: {
      types: { kind: "included" },
      problems: [
        { kind: "NoResolution", entrypoint: ".", resolutionKind: "node10" },
        { kind: "CJSResolvesToESM", entrypoint: ".", resolutionKind: "node16-cjs" },
        { kind: "FalseESM", entrypoint: "./Event", resolutionKind: "node16-esm" },
        { kind: "InternalResolutionError", entrypoint: ".", resolutionKind: "bundler", fileName: "/node_modules/x/dist/index.d.ts" }
      ]
    }
  }

  it("counts what the profile keeps, one line per problem naming the subpath and the resolution", () => {
    const lines = attwProblems(report, "esm-only")
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatch(/^attw: FalseESM at "\.\/Event" node16-esm \(see https:\/\/github\.com\/arethetypeswrong\/.*FalseESM\.md\)$/)
    expect(lines[1]).toContain(`InternalResolutionError at "." bundler /node_modules/x/dist/index.d.ts`)
    expect(attwProblems(report, "node16")).toHaveLength(3)
    expect(attwProblems(report, "strict")).toHaveLength(4)
  })

  it("fails on a package without types and on an unknown profile", () => {
    expect(attwProblems({ analysis: { types: false } }, "esm-only")).toEqual([expect.stringContaining("no types")])
    expect(() => attwProblems(report, "esm")).toThrow(/unknown attw profile esm/)
  })
})

/** Pack a scratch package made of `files`; returns the tarball. */
const packed = (files: Readonly<Record<string, string>>): string => {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-pack-lint-"))
  scratch.push(directory)
  for (const [file, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(directory, "package", file)), { recursive: true })
    fs.writeFileSync(path.join(directory, "package", file), content)
  }
  const result = spawnSync("npm", ["pack", "--json", "--pack-destination", directory], { cwd: path.join(directory, "package"), encoding: "utf8" })
  expect(result.status, result.stderr).toBe(0)
  return path.join(directory, JSON.parse(result.stdout)[0].filename)
}

const manifest = (fields: Record<string, unknown>) =>
  JSON.stringify({ name: "pack-lint-example", version: "1.0.0", description: "d", license: "MIT", type: "module", sideEffects: false, engines: { node: ">=20" }, files: ["dist"], ...fields })

describe("the linters on packed tarballs", () => {
  it("find nothing in a well-formed ESM package", async () => {
    const tarball = packed({
      "package.json": manifest({ exports: { ".": { types: "./dist/index.d.ts", default: "./dist/index.js" } } }),
      LICENSE: "MIT",
      "README.md": "# example",
      "dist/index.js": "export const one = 1\n",
      "dist/index.d.ts": "export declare const one: 1\n"
    })
    expect(await publintProblems(tarball)).toEqual([])
    expect(attwFindings(tarball, ["."])).toEqual([])
  }, 60_000)

  it("report an export of a file the tarball lacks, types after default, and CommonJS types for ESM", async () => {
    const tarball = packed({
      "package.json": manifest({
        exports: {
          ".": { default: "./dist/index.js", types: "./dist/index.d.cts" },
          "./missing": "./dist/missing.js"
        }
      }),
      LICENSE: "MIT",
      "README.md": "# example",
      "dist/index.js": "export const one = 1\n",
      "dist/index.d.cts": "export declare const one: 1\n"
    })
    const linted = await publintProblems(tarball)
    expect(linted).toEqual(expect.arrayContaining([
      expect.stringMatching(/^publint error FILE_DOES_NOT_EXIST: .*missing/),
      expect.stringMatching(/^publint \w+ EXPORTS_(TYPES_SHOULD_BE_FIRST|DEFAULT_SHOULD_BE_LAST)/)
    ]))
    expect(attwFindings(tarball, [".", "./missing"])).toEqual(expect.arrayContaining([
      expect.stringMatching(/^attw: FalseCJS at types \/node_modules\/pack-lint-example\/dist\/index\.d\.cts for \/node_modules\/pack-lint-example\/dist\/index\.js /),
      expect.stringMatching(/^attw: NoResolution at "\.\/missing" node16-esm /)
    ]))
  }, 60_000)
})
