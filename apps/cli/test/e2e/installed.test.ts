/**
 * The published CLI as a user gets it (ADR 0024): `npm pack` in apps/cli (its `prepack` builds the
 * bundles), the tarball installed with `npm i -g --prefix` into a fresh directory outside the
 * repository (better-sqlite3's addon prebuilt from the one this checkout built, `localPrebuild`),
 * and then, with `PATH` holding only that prefix's bin and node's directory, one task driven from
 * `ratchet init` to COMPLETED in a fresh git repository with its own `RATCHET_HOME`, following
 * docs/guides/getting-started.md: the approval key, a task, its brief, the spec, preflight, the
 * plan (each approved at a terminal with the key's passphrase), `ratchet run`, `ratchet verify`,
 * `ratchet done`.
 *
 * Nothing of this repository is reachable from the installed `ratchet`: its bin resolves under the
 * prefix, no `PATH` entry, `NODE_PATH` or `RATCHET_RUNNER_BIN` points back here, and the runner
 * `ratchet run` starts is the one the package carries (node resolves nothing above the prefix's
 * `lib/node_modules`, and this repository is not there).
 *
 * Slow (npm's install dominates), so this file installs once.
 */
import { execFileSync, spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cliRoot, confirmationOf, exec, execTty, passphrase, type Result } from "./harness.js"

/** The repository this test runs in. */
const repositoryRoot = path.resolve(cliRoot, "..", "..")

/** How long `npm pack` and `npm i -g` together may take (npm resolves and unpacks every dependency). */
const installTimeoutMs = 10 * 60_000

const inside = (parent: string, child: string): boolean => {
  const relative = path.relative(parent, child)
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative))
}

/** A word for `sh -c`: single-quoted. */
const shellWord = (word: string): string => `'${word.replace(/'/g, "'\\''")}'`

/** The test process's environment without npm's `npm_*` variables (an enclosing `npm test` sets them). */
const npmEnv = (): NodeJS.ProcessEnv =>
  Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.toLowerCase().startsWith("npm_") && key !== "NODE_OPTIONS"))

const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-installed-")))
const prefix = path.join(root, "prefix")
const installedBin = path.join(prefix, "bin", "ratchet")
const installedPackage = path.join(prefix, "lib", "node_modules", "@ratchet", "cli")
const repo = path.join(root, "dates")
const files = path.join(root, "files")
const cliVersion = (JSON.parse(fs.readFileSync(path.join(cliRoot, "package.json"), "utf8")) as { version: string }).version

/** `ratchet` and its tools: node's directory first after the prefix; git, sh and script where they live. */
const searchPath = (): string => {
  const dirs = [path.join(prefix, "bin"), path.dirname(process.execPath)]
  // git (the project is a repository), sh (step commands) and script (the terminal approvals are
  // typed at) live beside node on most systems; where they do not, their own directories join.
  for (const tool of ["git", "sh", "script"]) {
    if (dirs.some((dir) => fs.existsSync(path.join(dir, tool)))) continue
    const found = (process.env["PATH"] ?? "").split(path.delimiter).find((dir) => dir !== "" && fs.existsSync(path.join(dir, tool)))
    if (found === undefined) throw new Error(`${tool} is not on PATH; the test needs it`)
    dirs.push(found)
  }
  return dirs.join(path.delimiter)
}

/** The environment the installed `ratchet` runs with: nothing of the test process but a few basics. */
const env = (): NodeJS.ProcessEnv => {
  const basics = ["USER", "LOGNAME", "LANG", "TMPDIR", "TZ"]
  const kept = Object.fromEntries(basics.flatMap((key) => (process.env[key] === undefined ? [] : [[key, process.env[key]]])))
  return {
    ...kept,
    PATH: searchPath(),
    HOME: path.join(root, "home"),
    RATCHET_HOME: path.join(root, "ratchet-home"),
    RATCHET_ACTOR: "user:ada",
    NO_COLOR: "1",
    SHELL: "/bin/sh"
  }
}

/** `ratchet args` in the repository, found on `PATH` as a user types it. */
const ratchet = (args: ReadonlyArray<string>): Promise<Result> => exec("ratchet", args, { cwd: repo, env: env() })

/** {@link ratchet}, failing the test unless it exits 0. */
const ok = async (args: ReadonlyArray<string>): Promise<Result> => {
  const result = await ratchet(args)
  if (result.code !== 0) throw new Error(`ratchet ${args.join(" ")} exited ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`)
  return result
}

/** `ratchet args` on a pseudo-terminal, typing `input` a line per prompt. */
const tty = (args: ReadonlyArray<string>, input: string): Promise<Result> =>
  execTty(["ratchet", ...args].map(shellWord).join(" "), { cwd: repo, env: env(), input })

/** `ratchet approve <task> <subject>` at the terminal: the digest's first 8 hex characters, then the passphrase. */
const approve = async (taskId: string, subject: "restatement" | "spec" | "plan"): Promise<void> => {
  const view = (await ok(["status", taskId, "--json"])).json.task
  const digest = view.digests[subject] as string
  const approved = await tty(["approve", taskId, subject, "--json"], `${confirmationOf(digest)}\n${passphrase}\n`)
  if (approved.code !== 0) throw new Error(`approve ${subject} exited ${approved.code}\n${approved.stdout}`)
}

/** Writes a file outside the repository (the spec and the plan) and returns its path. */
const file = (name: string, content: string): string => {
  const target = path.join(files, name)
  fs.writeFileSync(target, content)
  return target
}

const git = (args: ReadonlyArray<string>): string => execFileSync("git", args, { cwd: repo, env: env(), encoding: "utf8" })

/** The guide's spec (section 6): a command criterion and a manual one. */
const spec = [
  "---",
  "goal: Make the date test pass in every timezone and on every day by giving it a fixed clock.",
  "nonGoals:",
  "  - Changing what today() returns in production",
  "constraints:",
  "  - No new dependencies",
  "context:",
  "  relevantPaths:",
  "    - src/date.js",
  "    - test/date.test.js",
  "acceptanceCriteria:",
  "  - id: AC-001",
  "    outcome: The test suite passes with TZ=UTC and with TZ=Pacific/Kiritimati",
  "    required: true",
  "    verify:",
  "      command: TZ=UTC npm test && TZ=Pacific/Kiritimati npm test",
  "      expectExitCode: 0",
  "      timeoutSeconds: 120",
  "  - id: AC-002",
  "    outcome: The test never reads the wall clock",
  "    required: true",
  "    manual:",
  "      procedure: Read test/date.test.js and check that every Date it builds is fixed",
  "      observer: a maintainer",
  "execution:",
  "  allowedScope:",
  "    - src/**",
  "    - test/**",
  "---",
  "",
  "# Make the date test deterministic",
  ""
].join("\n")

/** The guide's plan (section 8), its command steps. */
const plan = [
  "steps:",
  "  - id: inject-clock",
  "    title: Let today() take the clock, and give the test a fixed one",
  "    acRefs: [AC-002]",
  "    run:",
  "      command: npm test",
  "    timeoutSeconds: 120",
  "  - id: check-timezones",
  "    title: Run the suite in two timezones",
  "    acRefs: [AC-001]",
  "    needs: [inject-clock]",
  "    run:",
  "      command: TZ=UTC npm test && TZ=Pacific/Kiritimati npm test",
  ""
].join("\n")

/** Runs `file args` to completion, failing with its output unless it exits 0 within {@link installTimeoutMs}. */
const execLong = async (file: string, args: ReadonlyArray<string>, options: { readonly cwd: string; readonly env: NodeJS.ProcessEnv }): Promise<Result> => {
  const result = await exec(file, args, { ...options, timeoutMs: installTimeoutMs })
  if (result.code !== 0) throw new Error(`${file} ${args.join(" ")} exited ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`)
  return result
}

let tarball: { readonly file: string; readonly files: ReadonlyArray<string> }

beforeAll(async () => {
  expect(inside(repositoryRoot, root), `${root} must lie outside the repository`).toBe(false)
  for (const dir of [files, path.join(root, "home"), path.join(repo, "src"), path.join(repo, "test")]) fs.mkdirSync(dir, { recursive: true })
  const npm = { cwd: cliRoot, env: npmEnv() }
  const packed = await execLong("npm", ["pack", "--json", "--pack-destination", root], npm)
  const [manifest] = JSON.parse(packed.stdout) as ReadonlyArray<{ filename: string; files: ReadonlyArray<{ path: string }> }>
  if (manifest === undefined) throw new Error(`npm pack printed no manifest\n${packed.stdout}`)
  tarball = { file: path.join(root, manifest.filename), files: manifest.files.map((f) => f.path).sort() }
  await execLong(
    "npm",
    ["install", "--global", "--prefix", prefix, "--prefer-offline", "--no-audit", "--no-fund", "--allow-scripts=better-sqlite3", tarball.file],
    { cwd: root, env: { ...npmEnv(), ...localPrebuild() } }
  )
}, installTimeoutMs)

/**
 * better-sqlite3's install script (`prebuild-install || node-gyp rebuild`) takes a prebuilt addon
 * from `npm_config_better_sqlite3_local_prebuilds` when one for this node is there, as an offline
 * user's or a company mirror's would. Compiling SQLite again costs a core for minutes on a loaded
 * machine and tests nothing of Ratchet's (this checkout's `npm ci` compiled the same source), so
 * the addon that build made is offered, packed the way prebuild-install names and unpacks it. It is
 * offered where prebuild-install's name for it is known (glibc Linux: no libc part) and `tar` packs
 * it; elsewhere npm compiles it as it would for a user.
 */
const addonPackage = path.join(repositoryRoot, "node_modules", "better-sqlite3")
const builtAddon = path.join(addonPackage, "build", "Release", "better_sqlite3.node")
const offersPrebuild = process.platform === "linux" &&
  (process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header?.glibcVersionRuntime !== undefined &&
  fs.existsSync(builtAddon) &&
  spawnSync("tar", ["--version"], { stdio: "ignore" }).status === 0

const sha256Of = (file: string): string => createHash("sha256").update(fs.readFileSync(file)).digest("hex")

const localPrebuild = (): Record<string, string> => {
  if (!offersPrebuild) return {}
  const { version } = JSON.parse(fs.readFileSync(path.join(addonPackage, "package.json"), "utf8")) as { version: string }
  const stage = path.join(root, "prebuild")
  const dir = path.join(root, "prebuilds")
  fs.mkdirSync(path.join(stage, "build", "Release"), { recursive: true })
  fs.mkdirSync(dir)
  fs.copyFileSync(builtAddon, path.join(stage, "build", "Release", "better_sqlite3.node"))
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`
  execFileSync("tar", ["-C", stage, "-czf", path.join(dir, name), "build"])
  return { npm_config_better_sqlite3_local_prebuilds: dir }
}

afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

describe("the CLI installed from its tarball", { timeout: 300_000 }, () => {
  it("holds the bundles, its runner, README and LICENSE, and depends on better-sqlite3 alone", () => {
    const dist = tarball.files.filter((f) => f.startsWith("dist/"))
    expect(tarball.files.filter((f) => !f.startsWith("dist/"))).toEqual(["LICENSE", "README.md", "bin/ratchet-hook", "bin/ratchet-runner.mjs", "bin/ratchet.mjs", "package.json"])
    expect(dist).toContain("dist/ratchet.mjs")
    expect(dist).toContain("dist/ratchet-runner.mjs")
    expect(dist.every((f) => f.endsWith(".mjs"))).toBe(true)
    // Every chunk a bundle file imports is in the tarball, and nothing else of dist/ is.
    const imported = new Set(["dist/ratchet.mjs", "dist/ratchet-runner.mjs"])
    for (const f of dist) {
      const text = fs.readFileSync(path.join(installedPackage, f), "utf8")
      for (const match of text.matchAll(/(?:from\s*|import\s*\(?\s*)"\.\/([^"]+\.mjs)"/g)) imported.add(`dist/${match[1]}`)
    }
    expect([...imported].sort()).toEqual(dist)

    const installed = JSON.parse(fs.readFileSync(path.join(installedPackage, "package.json"), "utf8")) as Record<string, unknown>
    expect(installed["private"]).toBeUndefined()
    expect(installed["dependencies"]).toEqual({ "better-sqlite3": expect.stringMatching(/^\d+\.\d+\.\d+$/) })
    expect(installed["bin"]).toEqual({ ratchet: "./bin/ratchet.mjs" })
    expect(fs.existsSync(path.join(installedPackage, "node_modules", "@ratchet"))).toBe(false)
    expect(fs.existsSync(path.join(installedPackage, "node_modules", "better-sqlite3", "build", "Release", "better_sqlite3.node"))).toBe(true)
  })

  // A prebuild that did not match (its name, this node's ABI) would be compiled instead, slowly and
  // unseen: the addon installed is the one offered.
  it.runIf(offersPrebuild)("installs better-sqlite3's addon from the prebuild it was offered, compiling nothing", () => {
    const installedAddon = path.join(installedPackage, "node_modules", "better-sqlite3", "build", "Release", "better_sqlite3.node")
    expect(sha256Of(installedAddon)).toBe(sha256Of(builtAddon))
    expect(fs.existsSync(path.join(installedPackage, "node_modules", "better-sqlite3", "build", "Release", "obj.target"))).toBe(false)
  })

  it("is the ratchet on PATH, resolved under the prefix, and names its version and commit", async () => {
    for (const dir of env()["PATH"]!.split(path.delimiter)) expect(inside(repositoryRoot, dir), `${dir} is in the repository`).toBe(false)
    const found = await exec("sh", ["-c", "command -v ratchet"], { cwd: root, env: env() })
    expect(found.stdout.trim()).toBe(installedBin)
    const real = fs.realpathSync(found.stdout.trim())
    expect(inside(prefix, real), real).toBe(true)
    expect(real).toBe(path.join(installedPackage, "bin", "ratchet.mjs"))

    const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: repositoryRoot, encoding: "utf8" }).trim()
    const version = await exec("ratchet", ["--version"], { cwd: root, env: env() })
    expect(version.code).toBe(0)
    expect(version.stdout).toMatch(new RegExp(`^ratchet ${cliVersion.replace(/\./g, "\\.")} \\(${head}(-dirty)?\\)\\n$`))
    for (const same of [["-v"], ["version"]]) expect((await exec("ratchet", same, { cwd: root, env: env() })).stdout).toBe(version.stdout)
    const json = await exec("ratchet", ["version", "--json"], { cwd: root, env: env() })
    const commit = /\((.+)\)/.exec(version.stdout)?.[1]
    expect(json.json).toMatchObject({ ok: true, command: "version", version: cliVersion, commit })
  })

  it("takes a task from ratchet init to COMPLETED, as the getting-started guide does", async () => {
    // Section 2: a small repository.
    fs.writeFileSync(
      path.join(repo, "package.json"),
      `${JSON.stringify({ name: "dates", private: true, type: "module", scripts: { test: "node --test" } })}\n`
    )
    fs.writeFileSync(path.join(repo, "src", "date.js"), "export const today = (now = new Date()) => now.toISOString().slice(0, 10)\n")
    const clockTest = (call: string) =>
      [
        "import { test } from \"node:test\"",
        "import assert from \"node:assert/strict\"",
        "import { today } from \"../src/date.js\"",
        `test("today", () => ${call})`,
        ""
      ].join("\n")
    fs.writeFileSync(path.join(repo, "test", "date.test.js"), clockTest("assert.equal(today(), new Date().toISOString().slice(0, 10))"))
    git(["init", "-q"])
    git(["config", "user.name", "Ada"])
    git(["config", "user.email", "ada@example.invalid"])
    git(["config", "commit.gpgsign", "false"])
    git(["add", "-A"])
    git(["commit", "-qm", "A date helper and its test"])

    // Section 3: the project and the approval key.
    const init = await ok(["init", "--json"])
    expect(init.json).toMatchObject({ ok: true, created: true, store: "sqlite" })
    expect(fs.existsSync(path.join(root, "ratchet-home", "ratchet.db"))).toBe(true)
    const key = await tty(["approver", "init", "--json"], `${passphrase}\n${passphrase}\n`)
    expect(key.code, key.stdout).toBe(0)
    expect(key.json).toMatchObject({ registered: true })

    // Sections 4 and 5: the task and its brief.
    const taskId = (await ok(["task", "create", "--goal", "Make the date test deterministic", "--json"])).json.taskId as string
    await ok(["brief", taskId, "restate", "Make the date test pass in every timezone and on every day by giving it a fixed clock."])
    await approve(taskId, "restatement")
    await ok(["brief", taskId, "close"])

    // Sections 6 to 8: the spec, preflight, the plan.
    const specFile = file("spec.md", spec)
    expect((await ok(["digest", specFile])).stdout.trim()).toMatch(/^sha256:[0-9a-f]{64}$/)
    expect((await ok(["spec", taskId, "--file", specFile, "--json"])).json.state).toBe("SPEC_READY")
    await approve(taskId, "spec")
    expect((await ok(["preflight", taskId, "--json"])).json.state).toBe("PREFLIGHT")
    expect((await ok(["plan", taskId, "--file", file("plan.yaml", plan), "--json"])).json.state).toBe("PLAN_READY")
    await approve(taskId, "plan")
    expect((await ok(["status", taskId, "--json"])).json.task.state).toBe("PLAN_APPROVED")

    // Section 12: the change itself, then the run, by the runner the package carries.
    fs.writeFileSync(path.join(repo, "test", "date.test.js"), clockTest("assert.equal(today(new Date(\"2026-12-03T23:59:59Z\")), \"2026-12-03\")"))
    const ran = await ratchet(["run", taskId])
    expect(ran.code, `${ran.stdout}\n${ran.stderr}`).toBe(0)
    expect(ran.stderr).toContain("inject-clock attempt 1: Succeeded")
    expect(ran.stderr).toContain("check-timezones attempt 1: Succeeded")
    expect((await ok(["status", taskId, "--json"])).json.task.state).toBe("VERIFYING")

    // Section 13: verification at the terminal, signed with the key, then completion.
    const early = await ratchet(["done", taskId, "--json"])
    expect(early.code).toBe(3)
    const verified = await tty(["verify", taskId, "--json"], `${passphrase}\npass\nevery Date in the test is built from a fixed string\n`)
    expect(verified.code, verified.stdout).toBe(0)
    const done = await ok(["done", taskId, "--json"])
    expect(done.json).toMatchObject({ ok: true, taskId, state: "COMPLETED", reconciled: false })
    const view = (await ok(["status", taskId, "--json"])).json.task
    expect(view.state).toBe("COMPLETED")
    const log = (await ok(["log", taskId, "--json"])).stdout.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as { type: string; actor: { kind: string } })
    expect(log.some((record) => record.type === "RunStarted" && record.actor.kind === "runner")).toBe(true)
    expect(log.at(-1)?.type).toBe("LeaseReleased")
    expect(log.some((record) => record.type === "TaskCompleted")).toBe(true)
  })

  it("writes hooks that, once the package is uninstalled, deny a tool call with the fix instead of letting it through", async () => {
    const installed = await ok(["hooks", "install", "claude-code", "--json"])
    expect(installed.json.runs.launcher).toBe(path.join(installedPackage, "bin", "ratchet-hook"))
    const settings = JSON.parse(fs.readFileSync(path.join(repo, ".claude", "settings.json"), "utf8")) as {
      hooks: Record<string, ReadonlyArray<{ matcher?: string; hooks: ReadonlyArray<{ command: string }> }>>
    }
    const [group] = settings.hooks["PreToolUse"] ?? []
    expect(group?.matcher).toBeDefined()
    const command = group?.hooks[0]?.command ?? ""
    const payload = fs.readFileSync(path.join(repositoryRoot, "packages", "host-claude-code", "test", "fixtures", "PreToolUse.Bash.npm-test.json"), "utf8")
      .replaceAll("/home/dev/project", repo)
    // As Claude Code runs it: `sh -c` in the project, with a PATH that has no node and no ratchet.
    const asHost = () =>
      spawnSync("/bin/sh", ["-c", command], {
        cwd: repo,
        input: payload,
        encoding: "utf8",
        env: { PATH: "/usr/bin:/bin", HOME: root, RATCHET_HOME: env()["RATCHET_HOME"], CLAUDE_PROJECT_DIR: repo },
        timeout: 60_000
      })
    const before = asHost()
    expect({ status: before.status, stderr: before.stderr }).toEqual({ status: 0, stderr: "" })

    // The Codex hooks file of plugins/codex, copied as its README says: its launcher is found
    // beside the ratchet the package put on the PATH.
    const codexHooks = JSON.parse(fs.readFileSync(path.join(repositoryRoot, "plugins", "codex", "hooks.json"), "utf8")) as typeof settings
    const codexCommand = codexHooks.hooks["PreToolUse"]?.[0]?.hooks[0]?.command ?? ""
    const codexPayload = fs.readFileSync(path.join(repositoryRoot, "packages", "host-codex", "test", "fixtures", "PreToolUse.bash-npm-test.json"), "utf8")
      .replaceAll("/home/dev/project", repo)
    const viaCodexFile = spawnSync("/bin/sh", ["-c", codexCommand], {
      cwd: repo,
      input: codexPayload,
      encoding: "utf8",
      env: { PATH: env()["PATH"], HOME: root, RATCHET_HOME: env()["RATCHET_HOME"] },
      timeout: 60_000
    })
    expect({ status: viaCodexFile.status, stderr: viaCodexFile.stderr }).toEqual({ status: 0, stderr: "" })

    await execLong("npm", ["uninstall", "--global", "--prefix", prefix, "--no-audit", "--no-fund", "@ratchet/cli"], { cwd: root, env: npmEnv() })
    expect(fs.existsSync(installedPackage)).toBe(false)
    const after = asHost()
    expect(after.status).toBe(2)
    expect(after.stderr).toContain("Ratchet blocked this call")
    expect(after.stderr).toContain("Install the Ratchet CLI again if it was removed (npm i -g @ratchet/cli), then run ratchet hooks install claude-code again")
  })
})
