/**
 * The command a host runs for one of Ratchet's entries: written by hand for each launcher place and
 * event kind; recognised however the launcher is named, and nothing that merely mentions it; and
 * run for real through every shell a host may use (sh, bash, zsh, fish when installed here): the
 * launcher gets exactly its arguments, on a blocking event a missing launcher blocks (exit 2)
 * with the fix instead of exiting 127, which the hosts let through, and on any other event it is
 * a warning (exit 1), never dash's exit 2 for a missing script, which would block a prompt or a stop.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as HookCommand from "../src/HookCommand.js"

const fix = "Run ratchet hooks install codex again in a terminal."
const program = "'/usr/bin/node' '/opt/ratchet/dist/ratchet.mjs' hook codex"
const guard = `'[ -r "$0" ] && exec /bin/sh "$0" "$@"; printf "%s\\n" "Ratchet blocked this call because its hook launcher $0 is missing. ${fix}" >&2; exit 2'`
const warning = `'[ -r "$0" ] && exec /bin/sh "$0" "$@"; printf "%s\\n" "Ratchet (warning): its hook launcher $0 is missing, so Ratchet did not see this $2. ${fix}" >&2; exit 1'`

describe("HookCommand.command", () => {
  const cases: ReadonlyArray<readonly [string, HookCommand.Spec, string]> = [
    [
      "a blocking event, launcher by path: checked for first",
      { host: "codex", event: "PreToolUse", launcher: { _tag: "Path", path: "/opt/ratchet/bin/ratchet-hook" }, program, fix },
      `/bin/sh -c ${guard} '/opt/ratchet/bin/ratchet-hook' codex PreToolUse ${program}`
    ],
    [
      "PermissionRequest blocks too",
      { host: "codex", event: "PermissionRequest", launcher: { _tag: "Path", path: "/opt/ratchet/bin/ratchet-hook" }, program, fix },
      `/bin/sh -c ${guard} '/opt/ratchet/bin/ratchet-hook' codex PermissionRequest ${program}`
    ],
    [
      "another event: checked for too, and a missing one is a warning that blocks nothing (exit 1)",
      { host: "codex", event: "PostToolUse", launcher: { _tag: "Path", path: "/opt/ratchet/bin/ratchet-hook" }, program, fix },
      `/bin/sh -c ${warning} '/opt/ratchet/bin/ratchet-hook' codex PostToolUse ${program}`
    ],
    [
      "the plugin's launcher, under a variable the host fills in, cannot be missing: no check, double quotes as the host asks",
      { host: "claude-code", event: "PreToolUse", launcher: { _tag: "HostVariable", path: "${CLAUDE_PLUGIN_ROOT}/bin/ratchet-hook" }, program: "", fix },
      `/bin/sh "\${CLAUDE_PLUGIN_ROOT}/bin/ratchet-hook" claude-code PreToolUse`
    ],
    [
      "on the PATH: looked for first on a blocking event",
      { host: "codex", event: "PreToolUse", launcher: { _tag: "OnPath" }, program: "", fix },
      `/bin/sh -c '{ L=$(command -v "$0") || { R=$(command -v ratchet) && L=$(dirname "$(readlink -f "$R")")/$0 && [ -r "$L" ]; }; } && case $L in /*) exec /bin/sh "$L" "$@" ;; esac; printf "%s\\n" "Ratchet blocked this call because its hook launcher $0 is neither on the PATH this host gives its hooks nor beside the ratchet on it. ${fix}" >&2; exit 2' ratchet-hook codex PreToolUse`
    ],
    [
      "on the PATH, another event: looked for too, and a warning when it is not there",
      { host: "codex", event: "Stop", launcher: { _tag: "OnPath" }, program: "", fix },
      `/bin/sh -c '{ L=$(command -v "$0") || { R=$(command -v ratchet) && L=$(dirname "$(readlink -f "$R")")/$0 && [ -r "$L" ]; }; } && case $L in /*) exec /bin/sh "$L" "$@" ;; esac; printf "%s\\n" "Ratchet (warning): its hook launcher $0 is neither on the PATH this host gives its hooks nor beside the ratchet on it, so Ratchet did not see this $2. ${fix}" >&2; exit 1' ratchet-hook codex Stop`
    ]
  ]
  it.each(cases)("%s", (_name, spec, expected) => {
    expect(HookCommand.command(spec)).toBe(expected)
  })
})

describe("HookCommand.runsLauncher", () => {
  const accepted: ReadonlyArray<readonly [string, string]> = [
    ["codex", `/bin/sh -c ${guard} '/opt/ratchet/bin/ratchet-hook' codex PreToolUse ${program}`],
    ["codex", "/bin/sh '/opt/my tools/ratchet-hook' codex Stop"],
    ["claude-code", "/bin/sh \"${CLAUDE_PLUGIN_ROOT}/bin/ratchet-hook\" claude-code PreToolUse"],
    ["claude-code", "sh /usr/lib/node_modules/@ratchet/cli/bin/ratchet-hook claude-code SessionEnd"],
    ["codex", "ratchet-hook codex PostToolUse"],
    ["codex", "/usr/local/bin/ratchet-hook codex"]
  ]
  const rejected: ReadonlyArray<readonly [string, string, string]> = [
    ["another host's entry", "claude-code", "/bin/sh '/opt/ratchet/bin/ratchet-hook' codex Stop"],
    ["a longer host name", "codex", "/bin/sh '/opt/ratchet/bin/ratchet-hook' codexx Stop"],
    ["another launcher's name", "codex", "/bin/sh '/opt/bin/my-ratchet-hook' codex Stop"],
    ["a mention in another program's arguments", "codex", "echo ratchet-hook codex"],
    ["a mention in a script of its own", "codex", "/bin/sh -c 'ratchet-hook codex' x"],
    ["the bare hook (recognised by HookSettings, not here)", "codex", "ratchet hook codex"]
  ]
  it.each(accepted)("accepts %s: %s", (host, text) => {
    expect(HookCommand.runsLauncher(host, text)).toBe(true)
  })
  it.each(rejected)("rejects %s", (_name, host, text) => {
    expect(HookCommand.runsLauncher(host, text)).toBe(false)
  })
})

describe("HookCommand.unquotable", () => {
  it("refuses what the hosts' shells would not all read the same, and nothing else", () => {
    const cases: ReadonlyArray<readonly [string, string | null]> = [
      ["/usr/local/bin/node", null],
      ["/home/ana/my tools/ratchet-hook", null],
      ["/Users/ana/Library/Application Support/x", null],
      ["/home/o'brien/node", "has a single quote (')"],
      ["C:\\node.exe", "has a backslash"],
      ["/tmp/a\nb", "has a control character"],
      ["", "is empty"]
    ]
    for (const [text, reason] of cases) expect(HookCommand.unquotable(text), JSON.stringify(text)).toBe(reason)
  })
})

const shells = ["/bin/sh", "/bin/bash", "/usr/bin/bash", "/bin/zsh", "/usr/bin/zsh", "/usr/bin/fish", "/usr/local/bin/fish", "/opt/homebrew/bin/fish"].filter((shell) =>
  fs.existsSync(shell)
)

describe.each(shells)("run by %s -lc, as a host runs a hook", (shell) => {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-hookcommand-"))
  afterAll(() => fs.rmSync(directory, { recursive: true, force: true }))
  const launcher = path.join(directory, "launcher dir", "ratchet-hook")
  fs.mkdirSync(path.dirname(launcher))
  // A stand-in launcher: says what it was given.
  fs.writeFileSync(launcher, "printf '%s|' \"$@\"; cat\n")
  const run = (spec: HookCommand.Spec) =>
    spawnSync(shell, ["-lc", HookCommand.command(spec)], { input: "payload", encoding: "utf8", env: { PATH: "/usr/bin:/bin", HOME: directory } })
  const spec = (event: string, where: string): HookCommand.Spec => ({
    host: "codex",
    event,
    launcher: { _tag: "Path", path: where },
    program: "'/usr/bin/node' '/opt/a b/ratchet.mjs' hook codex",
    fix
  })

  it("hands the launcher exactly its arguments and the payload, on every event", () => {
    for (const event of ["PreToolUse", "PermissionRequest", "PostToolUse", "Stop"]) {
      const result = run(spec(event, launcher))
      expect([result.status, result.stdout, result.stderr]).toEqual([0, `codex|${event}|/usr/bin/node|/opt/a b/ratchet.mjs|hook|codex|payload`, ""])
    }
  })

  it("blocks a blocking event with the fix when the launcher is gone, never exit 127", () => {
    const gone = path.join(directory, "gone", "ratchet-hook")
    for (const event of ["PreToolUse", "PermissionRequest"]) {
      const result = run(spec(event, gone))
      expect(result.status).toBe(2)
      expect(result.stderr).toBe(`Ratchet blocked this call because its hook launcher ${gone} is missing. ${fix}\n`)
    }
  })

  // A missing script is exit 2 from dash (Debian's and Ubuntu's /bin/sh), which both hosts read as
  // "block" on UserPromptSubmit (the prompt is dropped) and Stop (the agent must go on): the
  // command itself must turn it into a warning that blocks nothing.
  it("warns on every other event when the launcher is gone, exit 1: never the blocking exit 2", () => {
    const gone = path.join(directory, "gone", "ratchet-hook")
    for (const event of ["SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "SessionEnd"]) {
      const result = run(spec(event, gone))
      expect([result.status, result.stdout, result.stderr]).toEqual([
        1,
        "",
        `Ratchet (warning): its hook launcher ${gone} is missing, so Ratchet did not see this ${event}. ${fix}\n`
      ])
    }
  })

  // dash runs `sh name` from the current directory only; bash also searches the PATH. The command
  // looks the launcher up itself, so every /bin/sh finds it.
  it("finds a launcher on the PATH on every event, whatever /bin/sh is", () => {
    // On the PATH as npm leaves it: executable, in a directory of its own.
    const bin = path.join(directory, "bin dir")
    fs.mkdirSync(bin, { recursive: true })
    fs.copyFileSync(launcher, path.join(bin, "ratchet-hook"))
    fs.chmodSync(path.join(bin, "ratchet-hook"), 0o755)
    for (const event of ["PreToolUse", "UserPromptSubmit", "Stop"]) {
      // -c, not -lc: a login shell's profile may set PATH itself (Debian's /etc/profile does for root).
      const result = spawnSync(shell, ["-c", HookCommand.command({ host: "codex", event, launcher: { _tag: "OnPath" }, program: "", fix })], {
        input: "payload",
        encoding: "utf8",
        cwd: directory,
        env: { PATH: `${bin}:/usr/bin:/bin`, HOME: directory }
      })
      expect([result.status, result.stdout, result.stderr]).toEqual([0, `codex|${event}|payload`, ""])
    }
  })

  // `npm i -g @ratchet/cli` links only `ratchet` into the prefix's bin: the launcher is found
  // beside the file that link resolves to, and a ratchet on the PATH without one is no launcher.
  it("finds the launcher beside the ratchet on the PATH, as npm i -g installs it, and blocks without one", () => {
    const prefix = path.join(directory, "prefix dir")
    const packageBin = path.join(prefix, "lib", "node_modules", "@ratchet", "cli", "bin")
    fs.mkdirSync(packageBin, { recursive: true })
    fs.mkdirSync(path.join(prefix, "bin"), { recursive: true })
    fs.writeFileSync(path.join(packageBin, "ratchet.mjs"), "")
    fs.chmodSync(path.join(packageBin, "ratchet.mjs"), 0o755)
    fs.symlinkSync(path.join("..", "lib", "node_modules", "@ratchet", "cli", "bin", "ratchet.mjs"), path.join(prefix, "bin", "ratchet"))
    const runOnPath = (event: string) =>
      spawnSync(shell, ["-c", HookCommand.command({ host: "codex", event, launcher: { _tag: "OnPath" }, program: "", fix })], {
        input: "payload",
        encoding: "utf8",
        cwd: directory,
        env: { PATH: `${path.join(prefix, "bin")}:/usr/bin:/bin`, HOME: directory }
      })
    expect(runOnPath("PreToolUse").status).toBe(2)
    expect(runOnPath("Stop").status).toBe(1)
    fs.copyFileSync(launcher, path.join(packageBin, "ratchet-hook"))
    for (const event of ["PreToolUse", "UserPromptSubmit", "Stop"]) {
      const result = runOnPath(event)
      expect([result.status, result.stdout, result.stderr]).toEqual([0, `codex|${event}|payload`, ""])
    }
  })

  // Where `readlink -f` fails (macOS before 12.3), the launcher's path would be `./ratchet-hook`:
  // one in the directory the host runs hooks in (the repository's) must never answer.
  it("never runs a launcher by a relative path, whatever readlink answers", () => {
    const prefix = path.join(directory, "no readlink")
    const bin = path.join(prefix, "bin")
    fs.mkdirSync(bin, { recursive: true })
    fs.writeFileSync(path.join(bin, "ratchet"), "")
    fs.chmodSync(path.join(bin, "ratchet"), 0o755)
    fs.writeFileSync(path.join(bin, "readlink"), "#!/bin/sh\nexit 1\n")
    fs.chmodSync(path.join(bin, "readlink"), 0o755)
    const repo = path.join(prefix, "repo")
    fs.mkdirSync(repo)
    // What a repository could hold: a launcher that lets everything through.
    fs.writeFileSync(path.join(repo, "ratchet-hook"), "cat >/dev/null; exit 0\n")
    const result = spawnSync(shell, ["-c", HookCommand.command({ host: "codex", event: "PreToolUse", launcher: { _tag: "OnPath" }, program: "", fix })], {
      input: "payload",
      encoding: "utf8",
      cwd: repo,
      env: { PATH: `${bin}:/usr/bin:/bin`, HOME: directory }
    })
    expect(result.status).toBe(2)
    expect(result.stderr).toContain("Ratchet blocked this call because its hook launcher ratchet-hook is neither on the PATH")
  })
})
