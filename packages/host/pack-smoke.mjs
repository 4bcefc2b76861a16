/**
 * Packaging smoke test for `@ratchet/host`. `tools/pack-check.mjs` runs it inside an empty project
 * that installed the packed tarball (with the `@ratchet/*` packages it depends on and the `effect`
 * peer), so it sees what a host vendor sees: the entry point resolves to the built `dist/`, the
 * shell classification finds an approval inside `sh -c`, the guard denies it and a command it
 * cannot read while allowing a read, and the project root is taken from the host's variable. Prints one line; exits non-zero on the first thing that is wrong.
 */
import { Guard, ProjectRoot, Shell } from "@ratchet/host"

/** @param {string} problem */
const fail = (problem) => {
  console.error(`@ratchet/host smoke: ${problem}`)
  process.exit(1)
}

const entry = import.meta.resolve("@ratchet/host")
if (!entry.endsWith("/dist/index.js")) fail(`the entry point resolves to ${entry}, not dist/index.js`)

const classified = Shell.classify(`sh -c "ratchet approve t-1234abcd spec"`)
if (classified.personOnly[0]?.act !== "approve") fail(`an approval inside sh -c should be found, got ${JSON.stringify(classified.personOnly)}`)

/** @type {Guard.Context} */
const context = {
  root: "/w",
  cwd: "/w",
  storeDirectory: "/h/.ratchet",
  home: "/h",
  temporary: ["/tmp"],
  task: { taskId: "t-1234abcd", state: "RUNNING", allowedScope: ["src/**"], forbiddenScope: [], leaseHolder: null },
  ambiguous: []
}
const approve = Guard.decide({ id: "1", tool: "Bash", action: { _tag: "Shell", command: "ratchet approve t-1234abcd plan" } }, context)
if (approve._tag !== "Deny") fail(`an approval should be denied, got ${approve._tag}`)
const encoded = Guard.decide({ id: "3", tool: "Bash", action: { _tag: "Shell", command: "echo cmF0Y2hldA== | base64 -d | sh" } }, context)
if (encoded._tag !== "Deny") fail(`a command piped into sh should be denied under a task, got ${encoded._tag}`)
const start = ProjectRoot.start({ variable: "CLAUDE_PROJECT_DIR", environment: { CLAUDE_PROJECT_DIR: "/w" }, directory: "/" })
if (start._tag !== "Start" || start.directory !== "/w") fail(`the project root should come from the host's variable, got ${JSON.stringify(start)}`)
const read = Guard.decide({ id: "2", tool: "Read", action: { _tag: "Read", paths: ["/w/src/a.ts"] } }, context)
if (read._tag !== "Allow") fail(`a read should be allowed, got ${read._tag}`)

console.log("@ratchet/host smoke: ok — an approval inside sh -c is found and denied, so is sh reading a pipe, a read is allowed")
