/**
 * The loop's sandbox (ADR 0043): the bubblewrap arguments from a hand-written table; which
 * programs `make` accepts and which it refuses (naming `RATCHET_BWRAP_BIN` and the fix); and, with
 * the machine's real bubblewrap, a step's process run inside it: it sees no process of this one,
 * reads a hidden file as empty, keeps its environment's mark for recovery, and a kill of the group
 * the pid file names (the outer bwrap's) ends every process inside, one that left the group with
 * `setsid` included. Tests that need bubblewrap are skipped where it cannot make its namespaces.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { describe, expect, it } from "vitest"
import * as ChildSandbox from "../src/ChildSandbox.js"
import * as StepProcess from "../src/StepProcess.js"
import { tempDirFactory } from "./tempDirs.js"

const tempDir = tempDirFactory("ratchet-child-sandbox-")

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Polls `holds` until it is true, failing with `what` after 30 s (a bound, not a measurement). */
const until = async (what: string, holds: () => boolean): Promise<void> => {
  const limit = Date.now() + 30_000
  while (!holds()) {
    if (Date.now() > limit) throw new Error(`not within 30 s: ${what}`)
    await sleep(50)
  }
}

/** The live processes (not zombies) whose command line contains `text`, read from /proc. */
const naming = (text: string): Array<number> =>
  fs.readdirSync("/proc").filter((name) => /^[0-9]+$/.test(name)).flatMap((name) => {
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8")
      const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0]
      if (state === "Z" || state === "X") return []
      return fs.readFileSync(`/proc/${name}/cmdline`, "utf8").includes(text) ? [Number(name)] : []
    } catch {
      return []
    }
  })

const base = ["--unshare-pid", "--unshare-ipc", "--bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]

describe("ChildSandbox.wrap", () => {
  const dir = tempDir()
  const key = path.join(dir, "key.json")
  const secret = path.join(dir, "secret")
  fs.writeFileSync(key, "{}")
  fs.writeFileSync(secret, "s3cret\n")
  const link = path.join(dir, "secret-link")
  fs.symlinkSync(secret, link)
  const sandbox = (hidden: ReadonlyArray<string>, emptied: ReadonlyArray<string> = []): ChildSandbox.Sandbox => ({
    _tag: "ChildSandbox",
    program: "/usr/bin/bwrap",
    hidden,
    emptied
  })
  // what is hidden and emptied, the program → the arguments bubblewrap gets
  it.each<[string, ChildSandbox.Sandbox, ChildSandbox.Argv, ReadonlyArray<string>]>([
    ["a shell command, nothing hidden", sandbox([]), { file: "/bin/sh", args: ["-c", "npm test"] }, [...base, "--chdir", "/work/tree", "--", "/bin/sh", "-c", "npm test"]],
    [
      "the key and the passphrase file hidden, the runtime directory emptied",
      sandbox([key, secret], ["/run/user/1000"]),
      { file: "/usr/bin/claude", args: ["-p", "a prompt -- with dashes"] },
      [...base, "--tmpfs", "/run/user/1000", "--dev-bind", "/dev/null", key, "--dev-bind", "/dev/null", secret, "--chdir", "/work/tree", "--", "/usr/bin/claude", "-p", "a prompt -- with dashes"]
    ],
    [
      "a file named through a link: the link and the file itself",
      sandbox([link]),
      { file: "true", args: [] },
      [...base, "--dev-bind", "/dev/null", link, "--dev-bind", "/dev/null", secret, "--chdir", "/work/tree", "--", "true"]
    ],
    ["a file named twice, once", sandbox([secret, secret]), { file: "true", args: [] }, [...base, "--dev-bind", "/dev/null", secret, "--chdir", "/work/tree", "--", "true"]],
    ["a file that is not there: nothing to hide", sandbox([path.join(dir, "gone")]), { file: "true", args: [] }, [...base, "--chdir", "/work/tree", "--", "true"]],
    [
      "git's settings held read-only (a missing one left out), before what is hidden",
      { ...sandbox([secret]), readOnly: [key, path.join(dir, "gone")] },
      { file: "git", args: ["status"] },
      [...base, "--ro-bind", key, key, "--dev-bind", "/dev/null", secret, "--chdir", "/work/tree", "--", "git", "status"]
    ],
    [
      "the workspace's .git pinned (bound onto itself), before what is read-only",
      { ...sandbox([secret]), readOnly: [key], pinned: [dir] },
      { file: "git", args: ["status"] },
      [...base, "--bind", dir, dir, "--ro-bind", key, key, "--dev-bind", "/dev/null", secret, "--chdir", "/work/tree", "--", "git", "status"]
    ]
  ])("%s", (_, given, argv, expected) => {
    expect(ChildSandbox.wrap(given, argv, "/work/tree")).toEqual({ file: "/usr/bin/bwrap", args: expected })
  })

  it("wrapShortLived: the runner's own git runs in a session of its own and dies with its bwrap", () => {
    expect(ChildSandbox.wrapShortLived(sandbox([secret]), { file: "git", args: ["status"] }, "/work/tree")).toEqual({
      file: "/usr/bin/bwrap",
      args: ["--new-session", "--die-with-parent", ...base, "--dev-bind", "/dev/null", secret, "--chdir", "/work/tree", "--", "git", "status"]
    })
  })

  it("gitSettingsOf: the repository's config, hooks and info (made when missing), a worktree's own config, the user's settings, as they exist", () => {
    const repo = path.join(dir, "repo")
    const gitDir = path.join(repo, ".git")
    fs.mkdirSync(path.join(gitDir, "hooks"), { recursive: true })
    fs.writeFileSync(path.join(gitDir, "config"), "[core]\n")
    const home = path.join(dir, "home")
    fs.mkdirSync(home, { recursive: true })
    expect(ChildSandbox.gitSettingsOf(repo, { HOME: home })).toEqual([path.join(gitDir, "config"), path.join(gitDir, "hooks"), path.join(gitDir, "info")])
    expect(fs.statSync(path.join(gitDir, "info")).isDirectory()).toBe(true)
    fs.writeFileSync(path.join(home, ".gitconfig"), "")
    fs.mkdirSync(path.join(home, "xdg", "git"), { recursive: true })
    expect(ChildSandbox.gitSettingsOf(repo, { HOME: home, XDG_CONFIG_HOME: path.join(home, "xdg") }).slice(3)).toEqual([
      path.join(home, ".gitconfig"),
      path.join(home, "xdg", "git")
    ])
    // A linked worktree: its own git directory names the common one.
    const linked = path.join(dir, "linked")
    const own = path.join(gitDir, "worktrees", "linked")
    fs.mkdirSync(own, { recursive: true })
    fs.mkdirSync(linked, { recursive: true })
    fs.writeFileSync(path.join(linked, ".git"), `gitdir: ${own}\n`)
    fs.writeFileSync(path.join(own, "commondir"), "../..\n")
    fs.writeFileSync(path.join(own, "config.worktree"), "")
    expect(ChildSandbox.gitSettingsOf(linked, {})).toEqual([
      path.join(gitDir, "config"),
      path.join(gitDir, "hooks"),
      path.join(gitDir, "info"),
      path.join(own, "config.worktree")
    ])
    // No git directory: nothing to hold.
    expect(ChildSandbox.gitSettingsOf(path.join(dir, "nowhere"), {})).toEqual([])
  })

  it("gitPinsOf: a repository's .git directory; a linked worktree's .git file and the git directory it names; nothing without one", () => {
    const repo = path.join(dir, "pins")
    fs.mkdirSync(path.join(repo, ".git"), { recursive: true })
    expect(ChildSandbox.gitPinsOf(repo)).toEqual([path.join(repo, ".git")])
    const linked = path.join(dir, "pins-linked")
    const own = path.join(repo, ".git", "worktrees", "linked")
    fs.mkdirSync(own, { recursive: true })
    fs.mkdirSync(linked, { recursive: true })
    fs.writeFileSync(path.join(linked, ".git"), `gitdir: ${own}\n`)
    expect(ChildSandbox.gitPinsOf(linked)).toEqual([path.join(linked, ".git"), own])
    expect(ChildSandbox.gitPinsOf(path.join(dir, "nowhere"))).toEqual([])
  })

  it("around: no sandbox leaves the program as it is", () => {
    const argv = { file: "/bin/sh", args: ["-c", "true"] }
    expect(ChildSandbox.around(null, argv, "/")).toBe(argv)
    expect(ChildSandbox.around(undefined, argv, "/")).toBe(argv)
    expect(ChildSandbox.around(sandbox([]), argv, "/").file).toBe("/usr/bin/bwrap")
  })
})

// the environment, the uid, what exists → the runtime directories emptied
describe("ChildSandbox.runtimeDirectories", () => {
  it.each<[string, Record<string, string>, number | null, ReadonlyArray<string>, ReadonlyArray<string>]>([
    ["the variable and the uid's directory, the same", { XDG_RUNTIME_DIR: "/run/user/1000" }, 1000, ["/run/user/1000"], ["/run/user/1000"]],
    ["the variable unset: the uid's directory still", {}, 1000, ["/run/user/1000"], ["/run/user/1000"]],
    ["the variable elsewhere: both", { XDG_RUNTIME_DIR: "/tmp/rt" }, 1000, ["/tmp/rt", "/run/user/1000"], ["/tmp/rt", "/run/user/1000"]],
    ["a relative variable is ignored", { XDG_RUNTIME_DIR: "rt" }, 1000, ["rt", "/run/user/1000"], ["/run/user/1000"]],
    ["nothing that exists: nothing", { XDG_RUNTIME_DIR: "/run/user/1000" }, 1000, [], []],
    ["no uid (not POSIX): the variable only", { XDG_RUNTIME_DIR: "/tmp/rt" }, null, ["/tmp/rt"], ["/tmp/rt"]]
  ])("%s", (_, env, uid, existing, expected) => {
    expect(ChildSandbox.runtimeDirectories(env, uid, (directory) => existing.includes(directory))).toEqual(expected)
  })
})

const real = ChildSandbox.make(process.env, [])

describe("ChildSandbox.make", () => {
  const dir = tempDir()
  const notExecutable = path.join(dir, "bwrap-text")
  fs.writeFileSync(notExecutable, "not a program", { mode: 0o644 })
  const failing = path.join(dir, "bwrap-fails")
  fs.writeFileSync(failing, "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n", { mode: 0o755 })
  // A "bwrap" that runs its command as it is, as a planted one would.
  const passThrough = path.join(dir, "bwrap-pass-through")
  fs.writeFileSync(passThrough, "#!/bin/sh\nwhile [ \"$1\" != \"--\" ]; do shift; done\nshift\nexec \"$@\"\n", { mode: 0o755 })
  // One on a relative PATH entry (the workspace's node_modules/.bin under npx).
  const bin = path.join(dir, "bin")
  fs.mkdirSync(bin)
  fs.copyFileSync(passThrough, path.join(bin, "bwrap"))
  fs.chmodSync(path.join(bin, "bwrap"), 0o755)
  const relative = path.relative(process.cwd(), bin)
  // the environment → refused with this in the reason
  it.each<[string, Record<string, string>, string]>([
    ["RATCHET_BWRAP_BIN naming nothing", { RATCHET_BWRAP_BIN: path.join(dir, "nothing") }, "is not an executable file"],
    ["RATCHET_BWRAP_BIN naming a file that is not a program", { RATCHET_BWRAP_BIN: notExecutable }, "is not an executable file"],
    ["no bwrap on PATH", { PATH: dir }, "bubblewrap (bwrap) is not on PATH"],
    ["a bwrap that cannot make its namespaces", { RATCHET_BWRAP_BIN: failing }, "No permissions to create new namespace"],
    ["a bwrap that runs its command without isolating it", { RATCHET_BWRAP_BIN: passThrough }, "without isolating it"],
    ["a bwrap only on a relative PATH entry", { PATH: relative }, "bubblewrap (bwrap) is not on PATH"]
  ])("refuses %s, naming the field and the fix", (_, env, reason) => {
    const made = ChildSandbox.make(env, [])
    expect(Either.isLeft(made)).toBe(true)
    if (Either.isRight(made)) return
    expect(made.left.field).toBe("RATCHET_BWRAP_BIN")
    expect(made.left.reason).toContain(reason)
    expect(made.left.fix).toContain("sudo apt-get install bubblewrap")
    expect(made.left.fix).toContain("unprivileged user namespaces")
  })

  it.skipIf(Either.isLeft(real))("accepts a bwrap that runs, on PATH or named", () => {
    expect(Either.isRight(real)).toBe(true)
    if (Either.isLeft(real)) return
    const named = ChildSandbox.make({ RATCHET_BWRAP_BIN: real.right.program }, [])
    expect(Either.isRight(named) ? named.right.program : named.left.message).toBe(real.right.program)
  })

  it.skipIf(Either.isLeft(real))("empties $XDG_RUNTIME_DIR where it exists, and only there", () => {
    const runtime = tempDir()
    const made = ChildSandbox.make({ ...process.env, XDG_RUNTIME_DIR: runtime }, [])
    expect(Either.isRight(made) ? made.right.emptied : made.left.message).toEqual([runtime])
    const missing = ChildSandbox.make({ ...process.env, XDG_RUNTIME_DIR: path.join(runtime, "gone") }, [])
    expect(Either.isRight(missing) ? missing.right.emptied : missing.left.message).toEqual([])
  })
})

describe.skipIf(Either.isLeft(real))("a step's process in the sandbox", () => {
  const made = () => {
    if (Either.isLeft(real)) throw new Error("no sandbox")
    return real.right
  }

  it("sees no process outside, reads a hidden file as empty, and keeps its mark", async () => {
    const dir = tempDir()
    const secret = path.join(dir, "passphrase")
    fs.writeFileSync(secret, "s3cret\n", { mode: 0o600 })
    const sandbox: ChildSandbox.Sandbox = { ...made(), hidden: [secret] }
    const running = StepProcess.start({
      command: `ls /proc | grep -c '^[0-9]*$'; test -d /proc/${process.pid} && echo parent-visible; printf '[%s]\\n' "$(cat ${secret})"; tr '\\0' '\\n' < /proc/$$/environ | grep RATCHET_PROCESS`,
      cwd: dir,
      timeoutMs: 30_000,
      env: { PATH: "/usr/bin:/bin" },
      directory: path.join(dir, "output"),
      name: "i-1",
      sandbox
    })
    const ended = await Effect.runPromise(running.exit)
    const out = Buffer.from(ended.stdout).toString("utf8")
    expect(ended.exitCode, `${out}${Buffer.from(ended.stderr).toString("utf8")}`).toBe(0)
    const [count, ...rest] = out.trim().split("\n")
    // bwrap's first process, the shell, and what it runs: a handful, never this process.
    expect(Number(count)).toBeLessThan(8)
    expect(rest).toEqual(["[]", "RATCHET_PROCESS=i-1"])
    expect(fs.readFileSync(secret, "utf8")).toBe("s3cret\n")
  })

  it("has a /dev of its own: no terminal of the person's, no disk, only what a program needs", async () => {
    const dir = tempDir()
    const running = StepProcess.start({
      command: "ls -A /dev; echo --; ls -A /dev/pts; echo --; head -c 4 /dev/urandom | wc -c; echo x > /dev/null && echo null-ok",
      cwd: dir,
      timeoutMs: 30_000,
      env: { PATH: "/usr/bin:/bin" },
      directory: path.join(dir, "output"),
      name: "i-1",
      sandbox: made()
    })
    const ended = await Effect.runPromise(running.exit)
    const out = Buffer.from(ended.stdout).toString("utf8")
    expect(ended.exitCode, `${out}${Buffer.from(ended.stderr).toString("utf8")}`).toBe(0)
    const [devices, terminals, rest] = out.split("--\n")
    // bubblewrap's minimal /dev, written out by hand: the host's terminals (/dev/pts/<n>, tty<n>),
    // disks and the kernel's log are not among them.
    expect(devices!.trim().split("\n").sort()).toEqual(
      ["core", "fd", "full", "null", "ptmx", "pts", "random", "shm", "stderr", "stdin", "stdout", "tty", "urandom", "zero"]
    )
    expect(terminals!.trim().split("\n")).toEqual(["ptmx"])
    expect(rest!.trim().split("\n")).toEqual(["4", "null-ok"])
  })

  it("a pinned .git cannot be renamed or removed inside, and the agent's git still commits, branches and reads its status", () => {
    const dir = tempDir()
    const git = (cwd: string, command: string) => execFileSync("/bin/sh", ["-c", command], { cwd, encoding: "utf8", env: { PATH: process.env["PATH"] ?? "", HOME: dir, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@e", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@e" } })
    const repo = path.join(dir, "repo")
    fs.mkdirSync(repo)
    git(repo, "git init -q -b main && echo a > a && git add a && git commit -qm a")
    const sandbox: ChildSandbox.Sandbox = { ...made(), readOnly: ChildSandbox.gitSettingsOf(repo, { HOME: dir }), pinned: ChildSandbox.gitPinsOf(repo) }
    const inside = ChildSandbox.wrap(sandbox, {
      file: "/bin/sh",
      args: ["-c", "mv .git .git-old 2>&1; echo mv=$?; rmdir .git 2>/dev/null; echo rmdir=$?; echo b > b && git add b && git commit -qm b && git branch work && git status --porcelain && echo git=ok"]
    }, repo)
    const out = git(repo, [inside.file, ...inside.args].map((arg) => `'${arg.replace(/'/g, "'\\''")}'`).join(" "))
    expect(out).toContain("Device or resource busy")
    expect(out).toContain("mv=1")
    expect(out).toContain("rmdir=1")
    expect(out).toContain("git=ok")
    expect(git(repo, "git log --format=%s main && git branch --list work").trim().split("\n")).toEqual(["b", "a", "  work"])
    expect(fs.existsSync(path.join(repo, ".git-old"))).toBe(false)
  })

  it("killing the group its pid file names ends everything inside, a process that left the group included", { timeout: 120_000 }, async () => {
    const dir = tempDir()
    const directory = path.join(dir, "output")
    const started = path.join(dir, "started")
    const marker = path.join(dir, "late")
    // The child that leaves the group says it started, then would write its late marker much later.
    const running = StepProcess.start({
      command: `setsid sh -c 'touch ${started}; sleep 20; touch ${marker}' & sleep 120`,
      cwd: dir,
      timeoutMs: null,
      env: { PATH: "/usr/bin:/bin" },
      directory,
      name: "i-2",
      sandbox: made()
    })
    await until("the child that left the group started", () => fs.existsSync(started))
    // Recovery's view: the pid file names the outer bwrap, leading a live group.
    const pgid = StepProcess.orphan(directory, "i-2")
    expect(pgid).toBe(running.pid)
    expect(naming(marker).length).toBeGreaterThan(0)
    StepProcess.killGroup(pgid!)
    await Effect.runPromise(running.exit)
    // Every process whose command line names the marker (bwrap, its shell, the child that left the
    // group) is gone, seen from outside the sandbox: nothing is left that could write it, whenever
    // its delay would have ended.
    await until("no process names the late marker", () => naming(marker).length === 0)
    expect(fs.existsSync(marker)).toBe(false)
  })
})
