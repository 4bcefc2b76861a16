/**
 * Packaging smoke test for `@ratchet/cli`. `tools/pack-check.mjs` runs it inside an empty project
 * that installed the packed tarball (better-sqlite3 built from the registry beside it), so it sees
 * what `npm i` gives a user: the `ratchet` bin runs from `node_modules/.bin`, names its version and
 * commit, and makes a project in a new git repository over a store of its own. The whole lifecycle
 * with the installed binary is `apps/cli/test/e2e/installed.test.ts`.
 * Prints one line; exits non-zero on the first thing that is wrong.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** @param {string} problem */
const fail = (problem) => {
  console.error(`@ratchet/cli smoke: ${problem}`)
  process.exit(1)
}

const bin = join(process.cwd(), "node_modules", ".bin", "ratchet")
const { version } = JSON.parse(readFileSync(join(process.cwd(), "node_modules", "@ratchet", "cli", "package.json"), "utf8"))
const scratch = realpathSync(mkdtempSync(join(tmpdir(), "ratchet-cli-smoke-")))
try {
  const env = { PATH: process.env.PATH ?? "", HOME: scratch, RATCHET_HOME: join(scratch, "home"), NO_COLOR: "1" }
  /** @param {ReadonlyArray<string>} args */
  const ratchet = (args) => spawnSync(bin, args, { cwd: scratch, env, encoding: "utf8" })

  const shown = ratchet(["--version"])
  if (shown.status !== 0) fail(`ratchet --version exited ${shown.status}: ${shown.stderr}`)
  if (!new RegExp(`^ratchet ${version.replace(/\./g, "\\.")} \\([^)]+\\)\\n$`).test(shown.stdout)) fail(`ratchet --version printed ${JSON.stringify(shown.stdout)}`)

  const git = spawnSync("git", ["init", "-q"], { cwd: scratch, encoding: "utf8" })
  if (git.status !== 0) fail(`git init failed: ${git.stderr}`)
  const init = ratchet(["init", "--json"])
  if (init.status !== 0) fail(`ratchet init exited ${init.status}: ${init.stderr}${init.stdout}`)
  const created = ratchet(["task", "create", "--goal", "Smoke", "--json"])
  if (created.status !== 0) fail(`ratchet task create exited ${created.status}: ${created.stderr}${created.stdout}`)
  const { taskId } = JSON.parse(created.stdout)
  const status = ratchet(["status", taskId, "--json"])
  if (status.status !== 0 || JSON.parse(status.stdout).task?.state !== "INTERVIEWING") fail(`ratchet status printed ${status.stdout}${status.stderr}`)
  console.log(`@ratchet/cli smoke: ok — ${shown.stdout.trim()}, a project and a task over better-sqlite3`)
} finally {
  rmSync(scratch, { recursive: true, force: true })
}
