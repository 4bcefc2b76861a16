#!/usr/bin/env node
/**
 * `npm run demo`: one task from brief to COMPLETED on embedded SQLite, through the real `ratchet`
 * CLI (the bundle `npm ci` built), in a fresh git repository with a real bug and a real test.
 *
 * The repository has `src/sum.mjs` (it subtracts) and a `node:test` test for it. The task: make
 * the test pass. Its spec has two acceptance criteria: AC-001 is the test command, with its JUnit
 * report as evidence; AC-002 checks the fixed module by a command and by its SHA-256. The plan's
 * one step is the agent's work (a manual step; this script edits the file as the agent would, and
 * reports the step done as `agent:demo-agent`). The agent's first fix is wrong: `ratchet done` is
 * refused before verification (a HOLD with the reason and the next action), `ratchet verify` (by
 * the person, who did none of the work, signing the verdicts with their approval key) fails
 * AC-001, which sends the step back to RUNNING with a successor attempt; the second fix passes, and
 * `ratchet done` completes atomically.
 *
 * Approvals and verdicts are a person's acts, typed on a terminal and signed with their approval
 * key: the demo first makes that key (`ratchet approver init`, under a passphrase it chose), then
 * types the digests' characters and the passphrase through `script` (a pseudo-terminal), exactly
 * as the end-to-end tests do, and says so. The key lives in the demo's own store directory.
 *
 * The repository and store live in a fresh temporary directory (kept, and printed, at the end).
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const bin = fileURLToPath(new URL("../apps/cli/bin/ratchet.mjs", import.meta.url))
if (!fs.existsSync(fileURLToPath(new URL("../apps/cli/dist/ratchet.mjs", import.meta.url)))) {
  console.error("The CLI bundle is missing: run npm ci (or node apps/cli/build.mjs) first.")
  process.exit(2)
}

const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-demo-")))
const repo = path.join(root, "repo")
const files = path.join(root, "files")
fs.mkdirSync(path.join(repo, "src"), { recursive: true })
fs.mkdirSync(path.join(repo, "test"), { recursive: true })
fs.mkdirSync(files)

/** The environment of every call: this demo's store, no colours, nothing inherited that points elsewhere. */
const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("RATCHET_") && !key.startsWith("GIT_")))
Object.assign(env, { RATCHET_HOME: path.join(root, "home"), NO_COLOR: "1", SHELL: "/bin/sh" })

/** The passphrase of the demo person's approval key: the demo chose it, and types it where a person would. */
const passphrase = "the demo's passphrase, typed by the demo"

const say = (/** @type {string} */ text) => console.log(text)
const shellWord = (/** @type {string} */ word) => `'${word.replace(/'/g, `'\\''`)}'`

/**
 * @typedef {object} CallOptions
 * @property {ReadonlyArray<number>} [expect] the exit codes that let the demo go on (default 0)
 * @property {string | null} [tty] input typed on a pseudo-terminal, or null for a plain call
 * @property {string | null} [actor] RATCHET_ACTOR for this call, or null for the login name
 * @property {boolean} [quiet] do not print the output
 * @property {boolean} [silent] do not print the command line either
 */

/**
 * Runs `ratchet args…` and returns its exit code and output; stops the demo on an unexpected code.
 *
 * @param {ReadonlyArray<string>} args
 * @param {CallOptions} [options]
 */
const ratchet = (args, { expect = [0], tty = null, actor = null, quiet = false, silent = false } = {}) => {
  const callEnv = actor === null ? env : { ...env, RATCHET_ACTOR: actor }
  if (!silent) say(`\n$ ${actor === null ? "" : `RATCHET_ACTOR=${actor} `}ratchet ${args.join(" ")}${tty === null ? "" : "   # typed on a terminal"}`)
  const result = tty === null
    ? spawnSync(process.execPath, [bin, ...args], { cwd: repo, env: callEnv, encoding: "utf8" })
    : spawnSync("script", ["-qec", [process.execPath, bin, ...args].map(shellWord).join(" "), "/dev/null"], { cwd: repo, env: callEnv, input: tty, encoding: "utf8" })
  // The demo types ahead, before Ratchet has turned the terminal's echo off, so the pseudo-terminal
  // echoes the passphrase back; a person typing at the prompt sees nothing. It is not printed here.
  const out = `${result.stdout ?? ""}${result.stderr ?? ""}`.trimEnd().replaceAll(passphrase, "(the passphrase, typed ahead)")
  if (!quiet && out !== "") say(out.split("\n").map((line) => `  ${line}`).join("\n"))
  if (!expect.includes(result.status ?? -1)) {
    console.error(`\nratchet ${args.join(" ")} exited ${result.status}, expected ${expect.join(" or ")}; the demo stops. Files: ${root}`)
    process.exit(1)
  }
  return { code: result.status, stdout: result.stdout ?? "" }
}

/**
 * The JSON document `ratchet args… --json` prints.
 *
 * @param {ReadonlyArray<string>} args
 * @param {CallOptions} [options]
 * @returns {any}
 */
const json = (args, options) => {
  const result = ratchet([...args, "--json"], { ...options, quiet: true, silent: true })
  const document = JSON.parse(result.stdout.split("\n").filter((line) => line.startsWith("{")).at(-1) ?? "null")
  return document
}

const git = (/** @type {Array<string>} */ ...args) => {
  const result = spawnSync("git", args, { cwd: repo, env, encoding: "utf8" })
  if (result.status !== 0) throw new Error(`git ${args.join(" ")}: ${result.stderr}`)
}

/**
 * Approves `subject` as the person at the terminal: types the digest's first 8 hex characters,
 * then the approval key's passphrase (the receipt is signed with the key).
 *
 * @param {string} taskId
 * @param {"restatement" | "spec" | "plan"} subject
 */
const approve = (taskId, subject, digestField = subject) => {
  const digest = json(["status", taskId]).task.digests[digestField]
  const typed = digest.slice("sha256:".length, "sha256:".length + 8)
  const result = ratchet(["approve", taskId, subject], { tty: `${typed}\n${passphrase}\n`, quiet: true })
  say(`  (the ${subject} is shown in full; the person types ${typed}, then the key's passphrase)`)
  say(result.stdout.trimEnd().split("\n").slice(-3).map((line) => `  ${line}`).join("\n"))
}

// ---- a repository with a bug and a test ---------------------------------------------------------
fs.writeFileSync(path.join(repo, "src", "sum.mjs"), "export const sum = (a, b) => a - b\n")
fs.writeFileSync(
  path.join(repo, "test", "sum.test.mjs"),
  [
    `import assert from "node:assert/strict"`,
    `import test from "node:test"`,
    `import { sum } from "../src/sum.mjs"`,
    ``,
    `test("adds two numbers", () => assert.equal(sum(2, 3), 5))`,
    `test("adds a negative number", () => assert.equal(sum(2, -3), -1))`,
    ``
  ].join("\n")
)
fs.writeFileSync(path.join(repo, ".gitignore"), "reports/\n")
git("init", "-q")
git("config", "user.name", "Ratchet demo")
git("config", "user.email", "demo@ratchet.invalid")
git("config", "commit.gpgsign", "false")
git("add", ".")
git("commit", "-q", "-m", "sum, with a bug")
say(`A repository with a bug (src/sum.mjs subtracts) and its test, in ${repo}`)

// ---- brief, spec, plan ----------------------------------------------------------------------------
ratchet(["init"])
say("\nThe person makes their approval key, which signs every approval and verdict; the demo types the passphrase it chose, twice:")
ratchet(["approver", "init", "--id", "demo-person"], { tty: `${passphrase}\n${passphrase}\n` })
const taskId = json(["task", "create", "--goal", "Make sum add, so its test passes"]).taskId
say(`  task ${taskId}`)
ratchet(["brief", taskId, "restate", "sum(a, b) must return a + b; the test in test/sum.test.mjs must pass."])
approve(taskId, "restatement")
ratchet(["brief", taskId, "close"])

const testCommand = "mkdir -p reports && node --test --test-reporter=spec --test-reporter-destination=stdout --test-reporter=junit --test-reporter-destination=reports/junit.xml test/"
const spec = path.join(files, "spec.md")
fs.writeFileSync(
  spec,
  [
    "---",
    `goal: "Make sum add, so its test passes"`,
    "constraints:",
    `  - "No new dependencies"`,
    "context:",
    "  relevantPaths:",
    `    - "src/sum.mjs"`,
    `    - "test/sum.test.mjs"`,
    "acceptanceCriteria:",
    "  - id: AC-001",
    "    outcome: The sum test passes",
    "    required: true",
    "    verify:",
    `      command: ${JSON.stringify(testCommand)}`,
    "      timeoutSeconds: 120",
    "      junit: reports/junit.xml",
    "  - id: AC-002",
    "    outcome: The fixed module is in place",
    "    required: true",
    "    verify:",
    `      command: "node -e \\"import('./src/sum.mjs').then((m) => process.exit(m.sum(1, 1) === 2 ? 0 : 1))\\""`,
    "      artifacts:",
    `        - path: src/sum.mjs`,
    // The SHA-256 of the fixed module, "export const sum = (a, b) => a + b\n" (sha256sum).
    `          sha256: a8753d5fdc3940aea56e42782abf34e57689fce9d7bda6d18616b64215ca41d8`,
    "execution:",
    "  allowedScope:",
    `    - "src/**"`,
    "---",
    "# Make sum add",
    "",
    "The module subtracts; its test expects addition.",
    ""
  ].join("\n")
)
ratchet(["spec", taskId, "--file", spec])
approve(taskId, "spec")
ratchet(["preflight", taskId])
const plan = path.join(files, "plan.yaml")
fs.writeFileSync(
  plan,
  [
    "steps:",
    "  - id: fix-sum",
    `    title: "Make sum add"`,
    "    acRefs: [AC-001, AC-002]",
    "    manual:",
    `      instructions: "Edit src/sum.mjs so that sum(a, b) returns a + b"`,
    ""
  ].join("\n")
)
ratchet(["plan", taskId, "--file", plan])
approve(taskId, "plan")

// ---- run, verify, revise, verify, done ----------------------------------------------------------
// The step is the agent's work: the runner stops there until the agent reports it done.
const agent = "agent:demo-agent"
const edit = (/** @type {string} */ text) => {
  fs.writeFileSync(path.join(repo, "src", "sum.mjs"), text)
  say(`\n# the agent edits src/sum.mjs: ${text.trim()}`)
}
ratchet(["run", taskId])
edit("export const sum = (a, b) => a * b\n")
ratchet(["step", "done", taskId, "fix-sum", "--note", "sum now combines its arguments"], { actor: agent })
ratchet(["run", taskId])
say("\nCompletion before verification is refused, with the reason and what to do:")
ratchet(["done", taskId], { expect: [3] })
say("\nVerification by the person, who did none of the work, signing the verdicts (the demo types the passphrase). The agent's fix is wrong, so AC-001 fails:")
ratchet(["verify", taskId], { tty: `${passphrase}\n`, expect: [3] })
say("\nThe step behind the failed criteria got a successor attempt and the task is RUNNING again; completion is refused meanwhile:")
ratchet(["done", taskId], { expect: [2] })
ratchet(["run", taskId])
edit("export const sum = (a, b) => a + b\n")
ratchet(["step", "done", taskId, "fix-sum", "--note", "sum adds"], { actor: agent })
ratchet(["run", taskId])
ratchet(["verify", taskId], { tty: `${passphrase}\n` })
ratchet(["done", taskId])
ratchet(["done", taskId])
ratchet(["evidence", taskId, "--ac", "AC-001"])
const final = json(["status", taskId]).task
ratchet(["lease", "show", taskId])
say(`\nThe task is ${final.state}. Its projections: ${path.join(repo, ".ratchet", "tasks")}`)
say(`Everything is in ${root} (the store in home/, the repository in repo/); remove it when done.`)
if (final.state !== "COMPLETED") process.exit(1)
