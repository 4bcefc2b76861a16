/**
 * The packaging linters the packaging check (tools/pack-check.mjs) runs on a packed tarball:
 * publint, through its Node API, and `@arethetypeswrong/cli`, through its JSON report. Each gives
 * one line per problem and an empty list for a clean tarball.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { publint } from "publint"
import { formatMessage } from "publint/utils"
import { attwProblems } from "./pack-entries.mjs"

/**
 * attw's profile: the packages are ESM only (`"type": "module"`, `exports` without a `require`
 * condition), so CommonJS resolution and pre-`exports` (`node10`) resolution are out of scope
 * (ADR 0025).
 */
export const attwProfile = "esm-only"

/**
 * publint's findings on a tarball, one line each; every message counts, suggestions included.
 *
 * @param {string} tarball
 * @returns {Promise<string[]>}
 */
export const publintProblems = async (tarball) => {
  const bytes = fs.readFileSync(tarball)
  const { messages, pkg } = await publint({
    pack: { tarball: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) },
    level: "suggestion"
  })
  return messages.map((message) => `publint ${message.type} ${message.code}: ${formatMessage(message, pkg, { color: false }) ?? message.path.join(".")}`)
}

/**
 * `@arethetypeswrong/cli`'s findings on a tarball under {@link attwProfile}, over exactly
 * `subpaths` (`.`, `./Event`, …).
 *
 * @param {string} tarball
 * @param {string[]} subpaths
 * @returns {string[]}
 */
export const attwFindings = (tarball, subpaths) => {
  const cli = path.dirname(createRequire(import.meta.url).resolve("@arethetypeswrong/cli/package.json"))
  /** @type {{ bin: Record<string, string> }} */
  const { bin } = JSON.parse(fs.readFileSync(path.join(cli, "package.json"), "utf8"))
  const args = [path.join(cli, bin["attw"] ?? ""), tarball, "--format", "json", "--profile", attwProfile, "--no-color"]
  if (subpaths.length > 0) args.push("--entrypoints", ...subpaths)
  // attw exits 1 when it finds a problem and prints its report either way: only the report counts.
  const result = spawnSync(process.execPath, args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 })
  try {
    return attwProblems(JSON.parse(result.stdout), attwProfile)
  } catch (error) {
    const output = `${result.stderr}\n${result.stdout}`.trim().split("\n").slice(-5).join(" | ")
    return [`attw gave no report (${error instanceof Error ? error.message : String(error)}): ${output}`]
  }
}
