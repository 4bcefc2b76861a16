/**
 * The OS sandbox of the loop's children (ADR 0043). While the runner holds the unattended
 * verifier's unlocked key (`ratchet run --until-verified`, or a plan whose profile asks for the
 * loop), every process it starts that runs workspace code — an agent's host, a command step, a
 * recovery probe, a criterion's check — runs under bubblewrap (`bwrap`), so that the agent and the
 * code it wrote cannot read the secret out of the runner or the `ratchet run` that started it:
 *
 * - its own PID namespace with a fresh `/proc` (`--unshare-pid`, `--proc /proc`): no process
 *   outside is visible, so no `/proc/<pid>/environ`, `cmdline` or `mem` of the runner or the CLI;
 * - its own System V IPC (`--unshare-ipc`);
 * - otherwise the same filesystem (`--bind / /`), so the hooks still reach the store, but a `/dev`
 *   of its own (`--dev /dev`: null, zero, random, a fresh `pts` and `shm`, nothing else), so no
 *   terminal of the person's (`/dev/pts/<n>`, where a read takes what they type) nor any disk is
 *   reachable; with the verifier's key file and passphrase file read as empty (`/dev/null` bound
 *   over each, by the path given and by its real path; bound as a device, since a read-only bind
 *   is `nodev` and would make the file unreadable rather than empty; what is written there is
 *   discarded) and `$XDG_RUNTIME_DIR` (the session bus, systemd's sockets) an empty tmpfs.
 *
 * Not `--new-session`: it would move bwrap's first process out of the process group the pid file
 * names, so killing the group would no longer end the sandbox. Every caller starts bwrap detached
 * (its own session, no controlling terminal) already.
 *
 * `/tmp` stays shared: workspaces, `$RATCHET_HOME`, git worktrees' common directories and database
 * sockets live there as often as anywhere, and a private one would have to re-bind each of them.
 *
 * Not `--die-with-parent`: a sandboxed step behaves as an unsandboxed one when its runner dies
 * with SIGKILL — its effect runs to its end and the next runner waits for it (`RunRecovery`). The
 * pid file names the outer `bwrap`, which leads the process group; killing the group kills the
 * namespace's first process, and the kernel then kills everything in the namespace, a process that
 * left the group (`setsid`) included.
 *
 * The program is `RATCHET_BWRAP_BIN`, else `bwrap` on `PATH`. {@link make} finds it and runs it once
 * (`bwrap … true`); when it is missing or cannot make its namespaces, the loop is refused before
 * anything runs (fail closed), naming the fix. Plain `ratchet run` does not use it.
 *
 * @since 0.5.0
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Either from "effect/Either"
import * as ControllerError from "./ControllerError.js"

/**
 * The variable naming the bubblewrap program when it is not `bwrap` on `PATH`.
 *
 * @since 0.5.0
 * @category models
 */
export const variable = "RATCHET_BWRAP_BIN"

/**
 * A sandbox that passed its preflight: the program, and what it hides.
 *
 * @since 0.5.0
 * @category models
 */
export interface Sandbox {
  readonly _tag: "ChildSandbox"
  readonly program: string
  /** Files read as empty inside (the verifier's key and passphrase files). */
  readonly hidden: ReadonlyArray<string>
  /** Directories that are an empty tmpfs inside (`$XDG_RUNTIME_DIR`). */
  readonly emptied: ReadonlyArray<string>
  /**
   * Files and directories that are read-only inside: git's settings for the workspace
   * ({@link gitSettingsOf}), so that nothing run inside can plant a program git runs later.
   */
  readonly readOnly?: ReadonlyArray<string> | undefined
  /**
   * Entries bound onto themselves, writable (`--bind <p> <p>`): a mount point cannot be renamed or
   * removed (EBUSY), so the workspace's `.git` stays where git looks for it ({@link gitPinsOf},
   * ADR 0045). Bound before what is read-only, so those mounts sit on top.
   */
  readonly pinned?: ReadonlyArray<string> | undefined
}

/**
 * A program and its arguments.
 *
 * @since 0.5.0
 * @category models
 */
export interface Argv {
  readonly file: string
  readonly args: ReadonlyArray<string>
}

/** `file` and, when it differs (a symbolic link on the way), its real path; nothing for a file that is not there. */
const pathsOf = (file: string): ReadonlyArray<string> => {
  const given = path.resolve(file)
  let real: string
  try {
    real = fs.realpathSync(given)
  } catch {
    return []
  }
  return real === given ? [given] : [given, real]
}

/**
 * The bubblewrap arguments that come before the program: the namespaces, the filesystem and what
 * is hidden, in the order bubblewrap applies them (a later mount covers an earlier one).
 *
 * @since 0.5.0
 * @category constructors
 */
export const options = (sandbox: Pick<Sandbox, "hidden" | "emptied" | "readOnly" | "pinned">, cwd: string): ReadonlyArray<string> => [
  "--unshare-pid",
  "--unshare-ipc",
  "--bind", "/", "/",
  "--dev", "/dev",
  "--proc", "/proc",
  ...sandbox.emptied.flatMap((directory) => ["--tmpfs", directory]),
  ...[...new Set((sandbox.pinned ?? []).flatMap(pathsOf))].flatMap((file) => ["--bind", file, file]),
  ...[...new Set((sandbox.readOnly ?? []).flatMap(pathsOf))].flatMap((file) => ["--ro-bind", file, file]),
  ...[...new Set(sandbox.hidden.flatMap(pathsOf))].flatMap((file) => ["--dev-bind", "/dev/null", file]),
  "--chdir", cwd,
  "--"
]

/**
 * `argv`, run in `cwd` inside `sandbox`.
 *
 * @since 0.5.0
 * @category constructors
 */
export const wrap = (sandbox: Sandbox, argv: Argv, cwd: string): Argv => ({
  file: sandbox.program,
  args: [...options(sandbox, cwd), argv.file, ...argv.args]
})

/**
 * `argv` inside `sandbox` for a short-lived child of the runner's own (its git): in a session of its
 * own (no controlling terminal, so nothing inside can push keystrokes into the person's), and killed
 * with the outer bwrap (a timeout kills only that one).
 *
 * @since 0.5.0
 * @category constructors
 */
export const wrapShortLived = (sandbox: Sandbox, argv: Argv, cwd: string): Argv => ({
  file: sandbox.program,
  args: ["--new-session", "--die-with-parent", ...options(sandbox, cwd), argv.file, ...argv.args]
})

/**
 * git's settings for the work tree at `root`, as they exist: the repository's `config`, `hooks/` and
 * `info/` (made when missing, so it can be held), a worktree's `config.worktree`, and the user's
 * `~/.gitconfig` and `$XDG_CONFIG_HOME/git/`. Held read-only in the loop's sandbox (ADR 0043's
 * amendment): a clean filter, a hook or an `fsmonitor` written there would run in every later git
 * of the checkout, Ratchet's own commands and the person's included, outside any sandbox.
 *
 * @since 0.5.0
 * @category constructors
 */
export const gitSettingsOf = (root: string, env: Readonly<Record<string, string | undefined>>): ReadonlyArray<string> => {
  const found: Array<string> = []
  const exists = (file: string) => fs.existsSync(file)
  let gitDir = path.join(root, ".git")
  try {
    if (fs.statSync(gitDir).isFile()) {
      const line = fs.readFileSync(gitDir, "utf8").split("\n")[0] ?? ""
      if (line.startsWith("gitdir: ")) gitDir = path.resolve(root, line.slice("gitdir: ".length).trim())
    }
  } catch {
    return []
  }
  let common = gitDir
  try {
    common = path.resolve(gitDir, fs.readFileSync(path.join(gitDir, "commondir"), "utf8").trim())
  } catch {
    // Not a linked worktree: the git directory is the common one.
  }
  try {
    fs.mkdirSync(path.join(common, "info"), { recursive: true })
  } catch {
    // Left to exist or not: held only if it does.
  }
  for (const file of [path.join(common, "config"), path.join(common, "hooks"), path.join(common, "info"), path.join(gitDir, "config.worktree")]) {
    if (exists(file)) found.push(file)
  }
  const home = env["HOME"] ?? ""
  const xdg = env["XDG_CONFIG_HOME"] ?? (home === "" ? "" : path.join(home, ".config"))
  for (const file of [home === "" ? "" : path.join(home, ".gitconfig"), xdg === "" ? "" : path.join(xdg, "git")]) {
    if (file !== "" && path.isAbsolute(file) && exists(file)) found.push(file)
  }
  return found
}

/**
 * What the loop's sandbox pins in place for the work tree at `root` (ADR 0045): its `.git` entry
 * (a directory, or a linked worktree's `gitdir:` file) and, for such a file, the git directory it
 * names. Renaming `.git` and making a new one, which the read-only mounts inside it do not stop,
 * then fails with EBUSY; the agent's git works as before (commits, branches, the index). What
 * stays possible (a `commondir` written, a parent directory renamed) `GitSettings` detects.
 *
 * @since 0.5.0
 * @category constructors
 */
export const gitPinsOf = (root: string): ReadonlyArray<string> => {
  const dotGit = path.join(root, ".git")
  try {
    const stat = fs.lstatSync(dotGit)
    if (stat.isDirectory()) return [dotGit]
    if (!stat.isFile()) return []
    const named = /^gitdir: (.+)$/m.exec(fs.readFileSync(dotGit, "utf8"))?.[1]
    const gitDir = named === undefined ? null : path.resolve(root, named.trim())
    return gitDir !== null && fs.statSync(gitDir).isDirectory() ? [dotGit, gitDir] : [dotGit]
  } catch {
    return []
  }
}

/**
 * `argv` inside `sandbox` when there is one, else `argv` itself: what a child's launcher calls.
 *
 * @since 0.5.0
 * @category constructors
 */
export const around = (sandbox: Sandbox | null | undefined, argv: Argv, cwd: string): Argv =>
  sandbox === null || sandbox === undefined ? argv : wrap(sandbox, argv, cwd)

/** Whether `file` is a file this process may execute. */
const executable = (file: string): boolean => {
  try {
    fs.accessSync(file, fs.constants.X_OK)
    return fs.statSync(file).isFile()
  } catch {
    return false
  }
}

/**
 * The bubblewrap program `env` names (`RATCHET_BWRAP_BIN`), else `bwrap` on its `PATH`, or null.
 *
 * @since 0.5.0
 * @category constructors
 */
export const locate = (env: Readonly<Record<string, string | undefined>>): string | null => {
  const given = env[variable] ?? ""
  if (given !== "") return executable(given) ? path.resolve(given) : null
  for (const directory of (env["PATH"] ?? "").split(path.delimiter)) {
    // A relative entry (`.`, `node_modules/.bin`) names a place in the workspace, where the agent writes.
    if (directory === "" || !path.isAbsolute(directory)) continue
    const candidate = path.join(directory, "bwrap")
    if (executable(candidate)) return candidate
  }
  return null
}

/**
 * The user's runtime directories the sandbox empties: `$XDG_RUNTIME_DIR`, and `/run/user/<uid>`
 * even when the variable is unset (under `sudo -u`, cron or a service the directory, with the
 * session bus and systemd's socket in it, is still there, and a child could set the variable
 * itself), as they exist.
 *
 * @since 0.5.0
 * @category constructors
 */
export const runtimeDirectories = (
  env: Readonly<Record<string, string | undefined>>,
  uid: number | null,
  exists: (directory: string) => boolean
): ReadonlyArray<string> => {
  const given = env["XDG_RUNTIME_DIR"] ?? ""
  const candidates = [given !== "" && path.isAbsolute(given) ? path.resolve(given) : "", uid === null ? "" : `/run/user/${uid}`]
  return [...new Set(candidates.filter((directory) => directory !== "" && exists(directory)))]
}

/** How to get a working bubblewrap. */
const fix =
  `Install bubblewrap (sudo apt-get install bubblewrap) or name it with ${variable}=<path>; if it is installed and still fails, enable unprivileged user namespaces (sudo sysctl -w kernel.unprivileged_userns_clone=1, or on Ubuntu kernel.apparmor_restrict_unprivileged_userns=0), or run without --until-verified and verify yourself (docs/guides/agent-steps.md, "Loop until verified").`

const refuse = (reason: string) =>
  Either.left(new ControllerError.InvalidRequest({ field: variable, reason: `the loop runs every agent, step and check in a sandbox, and ${reason}`, fix }))

/**
 * The sandbox for a loop whose verifier key and passphrase are in the files `hidden`, or why the
 * loop is refused: no bubblewrap, or one that cannot make its namespaces here (it is run once,
 * `bwrap … true`, before anything else runs).
 *
 * @since 0.5.0
 * @category constructors
 */
export const make = (
  env: Readonly<Record<string, string | undefined>>,
  hidden: ReadonlyArray<string>
): Either.Either<Sandbox, ControllerError.InvalidRequest> => {
  const program = locate(env)
  if (program === null) {
    const given = env[variable] ?? ""
    return refuse(given !== "" ? `${variable}=${given} is not an executable file.` : "bubblewrap (bwrap) is not on PATH.")
  }
  const emptied = runtimeDirectories(env, process.getuid?.() ?? null, fs.existsSync)
  const sandbox: Sandbox = { _tag: "ChildSandbox", program, hidden: hidden.filter((file) => file !== ""), emptied }
  const cwd = process.cwd()
  // The preflight proves the isolation, not only that a program of that name exits 0 (a "bwrap"
  // that runs its command as it is would pass that): inside, this process is not visible and a
  // file it hides reads as empty.
  const probeDir = fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-sandbox-"))
  const probe = path.join(probeDir, "hidden")
  fs.writeFileSync(probe, "visible\n", { mode: 0o600 })
  let ran: ReturnType<typeof spawnSync>
  try {
    const check = `test ! -e /proc/${process.pid} && test ! -s ${JSON.stringify(probe)}`
    ran = spawnSync(program, ["--new-session", "--die-with-parent", ...options({ ...sandbox, hidden: [...sandbox.hidden, probe] }, cwd), "/bin/sh", "-c", check], {
      stdio: ["ignore", "ignore", "pipe"],
      timeout: 30_000,
      encoding: "utf8"
    })
  } finally {
    fs.rmSync(probeDir, { recursive: true, force: true })
  }
  if (ran.error !== undefined) return refuse(`${program} could not be run (${ran.error.message}).`)
  if (ran.status === 1 && String(ran.stderr ?? "").trim() === "") {
    return refuse(`${program} ran its command without isolating it (this process, or a file it hides, was visible inside).`)
  }
  if (ran.status !== 0) {
    const said = String(ran.stderr ?? "").trim().split("\n").at(-1)?.slice(0, 300) ?? ""
    return refuse(`${program} cannot make its sandbox here (${said === "" ? `exit ${ran.status ?? ran.signal}` : said}).`)
  }
  return Either.right(sandbox)
}
