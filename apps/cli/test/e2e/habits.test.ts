/**
 * The CLI's habits, through the built binary: `ratchet init` refuses a directory outside git (exit
 * 2, the reason and the fix, nothing created), a mistyped command, subcommand or option gets "did
 * you mean" on stderr with exit 2 (and `suggestions` in the JSON error), and colour follows
 * --no-color, NO_COLOR, FORCE_COLOR and the terminal, in a pipe and on a pseudo-terminal.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { bin, exec, execTty } from "./harness.js"

const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-e2e-habits-")))
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

/** The test process's environment without anything that would steer the CLI, git or the colour. */
const cleanEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith("RATCHET_") || key.startsWith("GIT_") || ["NO_COLOR", "FORCE_COLOR", "COLUMNS", "CLAUDE_PROJECT_DIR"].includes(key)) continue
    env[key] = value
  }
  // git stops looking for a repository at the temporary root, whatever is above it.
  return { ...env, RATCHET_HOME: path.join(root, "home"), GIT_CEILING_DIRECTORIES: root, TERM: "xterm", ...extra }
}

const ratchet = (args: ReadonlyArray<string>, options: { readonly cwd?: string; readonly env?: Record<string, string> } = {}) =>
  exec(process.execPath, [bin, ...args], { cwd: options.cwd ?? root, env: cleanEnv(options.env) })

const red = "\u001b[31merror\u001b[39m"

describe("CLI habits", { timeout: 120_000 }, () => {
  it("init outside a git repository is refused, exit 2, saying why and how to fix it, and creates nothing", async () => {
    const plain = path.join(root, "plain")
    fs.mkdirSync(plain)
    const refused = await ratchet(["init"], { cwd: plain })
    expect(refused.code).toBe(2)
    expect(refused.stdout).toBe("")
    expect(refused.stderr).toContain(`${plain} is not inside a git repository`)
    expect(refused.stderr).toContain("Run git init there first")
    expect(refused.stderr).toContain("or cd into your repository")
    const json = await ratchet(["init", "--json"], { cwd: plain })
    expect(json.code).toBe(2)
    expect(json.json).toMatchObject({ ok: false, command: "init", exitCode: 2, error: { _tag: "@ratchet/controller/InvalidRequest", field: "directory" } })
    // Nothing in the directory, and no store opened (or created) for it.
    expect(fs.readdirSync(plain)).toEqual([])
    expect(fs.existsSync(path.join(root, "home", "ratchet.db"))).toBe(false)
    // -C names the directory the same way.
    expect((await ratchet(["init", "-C", plain])).code).toBe(2)

    // The fix the message gives works.
    const git = await exec("git", ["init", "-q"], { cwd: plain, env: cleanEnv() })
    expect(git.code).toBe(0)
    const made = await ratchet(["init", "--json"], { cwd: plain })
    expect(made.code).toBe(0)
    expect(made.json).toMatchObject({ ok: true, created: true, root: plain })
    // Global options typed before the command, as git and gh take them.
    const listed = await ratchet(["--json", "-C", plain, "task", "list"])
    expect({ code: listed.code, stderr: listed.stderr }).toEqual({ code: 0, stderr: "" })
    expect(listed.json).toMatchObject({ ok: true, command: "task list" })
    expect(fs.existsSync(path.join(plain, ".ratchet", "project.json"))).toBe(true)
  })

  it("init without git on PATH is refused, naming git", async () => {
    const plain = path.join(root, "no-git-on-path")
    fs.mkdirSync(plain)
    const refused = await ratchet(["init", "--json"], { cwd: plain, env: { PATH: path.join(root, "empty-path") } })
    expect(refused.code).toBe(2)
    expect(refused.json.error).toMatchObject({ _tag: "@ratchet/controller/InvalidRequest", field: "git" })
    expect(refused.json.error.message).toContain("git is not installed, or not on PATH")
    expect(fs.readdirSync(plain)).toEqual([])
  })

  it("a mistyped command, subcommand or option: did you mean, on stderr, exit 2, suggestions in --json", async () => {
    const table: ReadonlyArray<readonly [ReadonlyArray<string>, string, ReadonlyArray<string>]> = [
      [["tsk", "list"], "Did you mean ratchet task list?", ["task list"]],
      [["task", "lsit"], "Did you mean ratchet task list?", ["task list"]],
      [["stauts"], "Did you mean ratchet status or ratchet stats?", ["status", "stats"]],
      [["lease", "aquire", "t-3f9a1c2b"], "Did you mean ratchet lease acquire?", ["lease acquire"]],
      [["brief", "t-3f9a1c2b", "aks", "Which timezone?"], "Did you mean ratchet brief t-3f9a1c2b ask?", ["brief ask"]],
      [["task", "list", "--jsn"], "Did you mean --json?", ["--json"]],
      [["status", "--no-colour"], "Did you mean --no-color?", ["--no-color"]],
      [["approve", "t-3f9a1c2b", "spce"], "Did you mean spec?", ["spec"]],
      [["help", "stauts"], "Did you mean ratchet status or ratchet stats?", ["status", "stats"]]
    ]
    for (const [args, sentence, suggestions] of table) {
      const text = await ratchet(args)
      expect({ args, code: text.code, stdout: text.stdout }).toEqual({ args, code: 2, stdout: "" })
      expect(text.stderr, args.join(" ")).toContain(sentence)
      // --jsn is not --json: the JSON form is asked for with the right flag.
      const json = await ratchet([...args, "--json"])
      expect(json.code).toBe(2)
      expect(json.json.error.suggestions, args.join(" ")).toEqual(suggestions)
      expect(json.json.error.message).toContain(sentence)
    }
    // Nothing close: no guess, and no suggestions field.
    const far = await ratchet(["xyzzy", "--json"])
    expect(far.code).toBe(2)
    expect(far.json.error.fix).toBe("See ratchet --help.")
    expect(far.json.error).not.toHaveProperty("suggestions")
  })

  it("colour in a pipe: only when FORCE_COLOR asks, and never past --no-color or a non-empty NO_COLOR", async () => {
    const table: ReadonlyArray<readonly [string, ReadonlyArray<string>, Record<string, string>, boolean]> = [
      ["nothing set", [], {}, false],
      ["FORCE_COLOR=1", [], { FORCE_COLOR: "1" }, true],
      ["FORCE_COLOR=0", [], { FORCE_COLOR: "0" }, false],
      ["FORCE_COLOR empty", [], { FORCE_COLOR: "" }, false],
      ["FORCE_COLOR=1 and --no-color", ["--no-color"], { FORCE_COLOR: "1" }, false],
      ["FORCE_COLOR=1 and NO_COLOR=1", [], { FORCE_COLOR: "1", NO_COLOR: "1" }, false],
      ["FORCE_COLOR=1 and an empty NO_COLOR", [], { FORCE_COLOR: "1", NO_COLOR: "" }, true]
    ]
    for (const [name, flags, env, coloured] of table) {
      // A usage error's "error" is red when coloured; the command never gets to open anything.
      const result = await ratchet(["status", "--bogus", ...flags], { env })
      expect(result.code, name).toBe(2)
      expect(result.stderr.includes(red), name).toBe(coloured)
      expect(result.stderr.includes("\u001b["), name).toBe(coloured)
    }
  })

  it("colour on a terminal: on, unless --no-color, a non-empty NO_COLOR or FORCE_COLOR=0", async () => {
    const table: ReadonlyArray<readonly [string, ReadonlyArray<string>, Record<string, string>, boolean]> = [
      ["nothing set", [], {}, true],
      ["an empty NO_COLOR", [], { NO_COLOR: "" }, true],
      ["NO_COLOR=1", [], { NO_COLOR: "1" }, false],
      ["--no-color", ["--no-color"], {}, false],
      ["FORCE_COLOR=0", [], { FORCE_COLOR: "0" }, false],
      ["TERM=dumb", [], { TERM: "dumb" }, false],
      ["TERM=dumb and FORCE_COLOR=1", [], { TERM: "dumb", FORCE_COLOR: "1" }, true]
    ]
    for (const [name, flags, env, coloured] of table) {
      const command = [process.execPath, bin, "status", "--bogus", ...flags].map((word) => `'${word}'`).join(" ")
      const result = await execTty(command, { cwd: root, env: cleanEnv(env), input: "" })
      expect(result.code, name).toBe(2)
      expect(result.stdout, name).toContain("Unknown option '--bogus'")
      expect(result.stdout.includes(red), name).toBe(coloured)
    }
  })
})
