/**
 * The guard every adapter shares: given the task's state, its scope and who holds its lease, may
 * this tool call go ahead? Pure: the caller reads the task, the lease and where the session was
 * started; the guard only judges.
 *
 * The policy, in order (the first rule that speaks decides):
 * 0. The call must be judged where it runs: a working directory the host reports with control
 *    characters, not absolute, or outside the project root (which the caller takes from the hook's
 *    own process and the host's project variable, never from the payload), and any path with
 *    control characters, are denied.
 * 1. A person-only act (`ratchet approve`, `approver …`, `reopen`, `unblock`, `rewind`, `verify`,
 *    `lessons pin|reject|supersede`, `hooks …`), however launched and wherever the command names
 *    it (an argument, a string given to an interpreter, a here-document), is denied whatever the
 *    state: a person does those in their own terminal.
 * 2. A call that would write Ratchet's runtime store (`$RATCHET_HOME`) or a `.ratchet/` directory,
 *    or a command that hands either to a program that may act on it, is denied: Ratchet writes
 *    those, through its commands. So is one that would write a directory the context protects
 *    (`protectedDirectories`: for the runner's agent, the hosts' configuration `.claude/` and
 *    `.codex/`, whose settings could switch the run's hooks off for the next attempt), or a file
 *    it protects (`protectedFiles`: for the runner's agent, `.mcp.json` at any depth).
 * 3. A command Ratchet cannot read completely (it runs programs from text the guard cannot see:
 *    `python3 -c`, `base64 -d | sh`, a computed program name, more than 64 KiB, …, or writes a file
 *    its text does not resolve: `"$f"`, `$(pwd)/x`, a glob like `.mcp.js[o]n`) fails closed: it
 *    may write anything and do a person-only act, so it is denied while a task is in progress in
 *    the workspace (whatever its state), and asked about where there is none.
 * 4. A call that writes (a file-writing tool, or a shell command that writes) is denied unless the
 *    task is RUNNING, no other owner holds its writer lease, and every path it names is inside the
 *    workspace, inside `allowedScope` (when the spec gives one) and outside `forbiddenScope`. Paths
 *    in the system's temporary directories are not the project's and are left alone. A command
 *    that writes anything below a directory (an archive extracted, a download saved by its URL's
 *    name, a patch applied, a tree copied: `unzip -d`, `tar -C`, `curl -O`, `wget -P`, `patch -d`,
 *    `git apply`, each the directory it runs in by default, `cp -r`, `rsync -a`) is judged by that directory: wholly inside the scope,
 *    not the workspace root or the home directory (they hold `.ratchet/` and the store), and
 *    placed by the text, or denied; a link (`ln`) by what it points at, too. A script run from a
 *    file (`python3 x.py`, `node x.js`, `sh x.sh`) writes what the text does not say: it counts as
 *    a write anywhere, allowed only while the task is RUNNING with no other lease holder, where the
 *    step's scope check judges what it changed. With no task in progress in the workspace there
 *    is no contract to hold the call to, and it is allowed;
 *    with several and none named, which contract applies is unknown, and it is denied.
 * 5. A destructive command (`rm -rf`, `git reset --hard`, `git push --force`, …) is asked about,
 *    where the host can ask; an adapter whose host cannot ask turns the ask into a denial.
 * 6. Everything else is allowed.
 *
 * Every denial says why and what the user can do.
 *
 * @since 0.1.0
 */
import type * as Event from "@ratchet/kernel/Event"
import * as Scope from "@ratchet/controller/Scope"
import * as path from "node:path"
import type * as HostEvent from "./HostEvent.js"
import * as WriteTargets from "./internal/writeTargets.js"
import * as ProjectRoot from "./ProjectRoot.js"
import * as Shell from "./Shell.js"

/**
 * The task a workspace's tool calls are held to.
 *
 * @since 0.1.0
 * @category models
 */
export interface Task {
  readonly taskId: string
  readonly state: Event.TaskState
  readonly allowedScope: ReadonlyArray<string>
  readonly forbiddenScope: ReadonlyArray<string>
  /** Who holds the task's writer lease when it is not this session (described for people), else null. */
  readonly leaseHolder: string | null
}

/**
 * Everything the guard judges by.
 *
 * @since 0.1.0
 * @category models
 */
export interface Context {
  /**
   * The project root, absolute: the Ratchet project the session was started in (or, outside one,
   * the directory it was started in). The caller takes it from the hook's own process and the
   * host's project variable, never from the payload.
   */
  readonly root: string
  /**
   * The working directory the host reports for the call (the payload's `cwd`), as reported. Relative
   * paths are resolved from it only when it is absolute, free of control characters and inside
   * `root`; otherwise the call is denied.
   */
  readonly cwd: string
  /** Ratchet's runtime store directory (`$RATCHET_HOME`), absolute. */
  readonly storeDirectory: string
  /** The user's home directory, for `~` in shell words. */
  readonly home: string
  /** Temporary directories, absolute: writes there are not the project's. */
  readonly temporary: ReadonlyArray<string>
  /** The task in progress in this workspace, or null when there is none (or it is ambiguous). */
  readonly task: Task | null
  /**
   * When several tasks could be the one in progress (shown as `t-… STATE`) and none is chosen:
   * writes are refused until one is named, rather than held to a guessed contract.
   */
  readonly ambiguous: ReadonlyArray<string>
  /**
   * Names of directories, anywhere in the workspace, that this session may not write, as it may
   * not write `.ratchet/` (none when absent). The runner's agent is given the hosts' configuration
   * (`.claude`, `.codex`): a setting written there in one attempt could run the next unfenced.
   */
  readonly protectedDirectories?: ReadonlyArray<string> | undefined
  /**
   * Names of files, anywhere in the workspace, that this session may not write, compared as
   * `protectedDirectories` are (none when absent). The runner's agent is given Claude Code's
   * project MCP servers (`.mcp.json`): a server named there would run in the next attempt.
   */
  readonly protectedFiles?: ReadonlyArray<string> | undefined
}

/**
 * The guard's answer.
 *
 * @since 0.1.0
 * @category models
 */
export type Decision =
  | { readonly _tag: "Allow" }
  | { readonly _tag: "Deny"; readonly reason: string; readonly fix: string }
  | { readonly _tag: "Ask"; readonly reason: string }

const allow: Decision = { _tag: "Allow" }
const deny = (reason: string, fix: string): Decision => ({ _tag: "Deny", reason, fix })

/**
 * The text a host shows for a decision: the reason, then what to do.
 *
 * @since 0.1.0
 * @category rendering
 */
export const explain = (decision: Decision): string =>
  decision._tag === "Deny" ? `Ratchet: ${decision.reason} ${decision.fix}` : decision._tag === "Ask" ? `Ratchet: ${decision.reason}` : ""

// ---------------------------------------------------------------------------------------------
// Paths
// ---------------------------------------------------------------------------------------------

const inside = (parent: string, child: string): boolean => {
  const relative = path.relative(parent, child)
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative))
}

const { hasControlCharacters } = ProjectRoot

const printable = (text: string): string => JSON.stringify(text.slice(0, 120))

/** Rule 0: the call's working directory, judged against the project root. */
const misplaced = (context: Context): Decision | null => {
  const cwd = context.cwd
  if (hasControlCharacters(cwd)) {
    return deny(
      `the host reports a working directory with control characters (${printable(cwd)}), so Ratchet cannot tell where this call runs.`,
      `Run the agent from the project (${context.root}); a host that sends such a directory is misconfigured or broken.`
    )
  }
  if (!path.isAbsolute(cwd)) {
    return deny(`the host reports a working directory that is not absolute (${printable(cwd)}), so Ratchet cannot tell where this call runs.`, `Run the agent from the project (${context.root}).`)
  }
  if (!inside(context.root, path.resolve(cwd))) {
    return deny(
      `the host reports the working directory ${cwd}, outside the project ${context.root} this session was started in; Ratchet judges a call only where it can hold it to the project's rules.`,
      `Work from inside ${context.root} (cd back into it), or start the agent in the project you mean to work on.`
    )
  }
  return null
}

/** A call naming a path with control characters: denied, whatever it does. */
const unprintable = (tool: string, paths: ReadonlyArray<string>): Decision | null => {
  const bad = paths.find(hasControlCharacters)
  return bad === undefined ? null : deny(
    `${tool} names a path with control characters (${printable(bad)}), which Ratchet does not judge.`,
    "Name the file by a path without control characters."
  )
}

/** The variables a path may name that the guard can resolve. */
const variables = (context: Context): Readonly<Record<string, string>> => ({ HOME: context.home, RATCHET_HOME: context.storeDirectory, PWD: context.cwd })

/**
 * `word` as an absolute path, from the call's cwd; `~`, `$HOME`, `$RATCHET_HOME` and `$PWD` are
 * resolved; null when another expansion is left (the path is not known from the text).
 */
const absolute = (word: string, context: Context): string | null => {
  const known = variables(context)
  const expanded = word.replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (whole, name: string) => known[name] ?? whole)
  if (/[$`]/.test(expanded)) return null
  const home = expanded === "~" ? context.home : expanded.startsWith("~/") ? path.join(context.home, expanded.slice(2)) : expanded
  return path.resolve(context.cwd, home)
}

type Where =
  | { readonly _tag: "Store"; readonly shown: string }
  | { readonly _tag: "Protected"; readonly shown: string; readonly part: Part }
  | { readonly _tag: "Temporary" }
  | { readonly _tag: "Outside"; readonly shown: string }
  | { readonly _tag: "Workspace"; readonly relative: string }
  | { readonly _tag: "Unknown"; readonly shown: string }

/** A protected name a path holds (`Context.protectedDirectories`, `Context.protectedFiles`), folded. */
interface Part {
  readonly name: string
  readonly kind: "directory" | "file"
}

/**
 * The protected directory or file (`Context.protectedDirectories`, `Context.protectedFiles`) a
 * part of `relative` names, as the filesystem would take it: case folded and trailing dots and
 * spaces dropped (macOS and Windows filesystems fold case, Windows drops those), so `.CLAUDE/`,
 * `.Claude./`, `.codex/` and `.MCP.json` all count. `relative` is already normalised
 * (`path.resolve`), or a token whose `..` parts are read as they come: any part naming one counts
 * (a file's name as a directory's too, which errs on the side of refusing).
 */
const protectedPart = (relative: string, context: Context): Part | undefined => {
  const directories = (context.protectedDirectories ?? []).map(folded)
  const files = (context.protectedFiles ?? []).map(folded)
  if (directories.length === 0 && files.length === 0) return undefined
  for (const part of relative.split(/[/\\]/).map(folded)) {
    if (directories.includes(part)) return { name: part, kind: "directory" }
    if (files.includes(part)) return { name: part, kind: "file" }
  }
  return undefined
}

const folded = (part: string): string => part.toLowerCase().replace(/[. ]+$/, (tail) => (part === tail ? tail : ""))

const where = (word: string, context: Context): Where => {
  const file = absolute(word, context)
  // An unresolved variable: a mention of Ratchet's store is taken at its word; otherwise unknown.
  if (file === null) return /ratchet/i.test(word) ? { _tag: "Store", shown: word } : { _tag: "Unknown", shown: word }
  if (inside(context.storeDirectory, file) || inside(file, context.storeDirectory)) return { _tag: "Store", shown: word }
  // The workspace first: a repository that itself lives in a temporary directory is still the project.
  if (!inside(context.root, file)) {
    return context.temporary.some((directory) => inside(directory, file)) ? { _tag: "Temporary" } : { _tag: "Outside", shown: word }
  }
  const relative = path.relative(context.root, file).split(path.sep).join("/")
  // Any `.ratchet` directory is Ratchet's: a nested one would be another project's marker.
  if (Scope.isRatchetPath(relative) || relative.split("/").some((part) => folded(part) === ".ratchet")) return { _tag: "Store", shown: word }
  const guarded = protectedPart(relative, context)
  if (guarded !== undefined) return { _tag: "Protected", shown: word, part: guarded }
  return { _tag: "Workspace", relative: relative === "" ? "." : relative }
}

// ---------------------------------------------------------------------------------------------
// The rules
// ---------------------------------------------------------------------------------------------

/** Why edits wait in `state`, and what moves the task to where they are allowed. */
const notRunning = (task: Task): Decision => {
  const [why, fix] = waiting(task)
  return deny(`Task ${task.taskId} is ${task.state}: ${why}`, fix)
}

/** Why edits wait in the task's state, and what moves it to where they are allowed. */
const waiting = (task: Task): readonly [string, string] => {
  const id = task.taskId
  return ((): readonly [string, string] => {
    switch (task.state) {
      case "INITIALIZING":
      case "INTERVIEWING":
      case "SPEC_READY":
      case "SPEC_APPROVED":
      case "PREFLIGHT":
      case "PLAN_READY":
      case "REOPENED":
        return ["the contract is not approved yet, so there is nothing to change files for.", `Finish the brief, spec and plan and have the user approve them at a terminal (ratchet status ${id} says what is next); edits are allowed once ratchet run ${id} has started the run.`]
      case "PLAN_APPROVED":
        return ["the plan is approved but the run has not started.", `Start it: ratchet run ${id}.`]
      case "VERIFYING":
        return ["the run is finished and being verified; a change now would make the evidence stale.", `Let verification decide (a person runs ratchet verify ${id} in their terminal); a failing criterion sends the work back to RUNNING.`]
      case "PAUSED":
        return ["the task is paused.", `Ask the user to resume it: ratchet resume ${id}.`]
      case "BLOCKED":
        return ["the task is blocked.", `ratchet status ${id} shows the blocker and how to clear it.`]
      case "COMPLETED":
      case "CANCELLED":
      case "FAILED":
        return [`the task has ended (${task.state}).`, `Start a new task for new work: ratchet task create --goal "…".`]
      case "RUNNING":
        return ["", ""]
    }
  })()
}

/** The scope rule for one workspace path of a writing call. */
const outOfScope = (task: Task, relative: string, shown: string): Decision | null => {
  const hit = task.forbiddenScope.find((pattern) => Scope.matches(pattern, relative))
  if (hit !== undefined) {
    return deny(`${shown} is in the forbidden scope of task ${task.taskId} (${hit}).`, `Leave it alone; changing what the spec forbids needs a new spec revision approved by the user.`)
  }
  if (task.allowedScope.length > 0 && !task.allowedScope.some((pattern) => Scope.matches(pattern, relative))) {
    return deny(
      `${shown} is outside the allowed scope of task ${task.taskId} (${task.allowedScope.join(", ")}).`,
      `Change only files inside the allowed scope; if the work needs this file, the spec's execution.allowedScope must be revised and approved.`
    )
  }
  return null
}

/** Rule 2 for a protected directory or file (`Context.protectedDirectories`, `Context.protectedFiles`). */
const protectedWrite = (tool: string, shown: string, part: Part): Decision =>
  part.kind === "directory"
    ? deny(
      `${tool} would write ${shown.slice(0, 200)}, in ${part.name}/, the host's configuration, which this session may not change: a setting there could switch the run's hooks off.`,
      `Leave ${part.name}/ alone; a person changes the host's configuration in their own terminal.`
    )
    : deny(
      `${tool} would write ${shown.slice(0, 200)}, a ${part.name} file, the host's configuration, which this session may not change: what it names would run in the next session, outside the run's fence.`,
      `Leave ${part.name} alone; a person changes the host's configuration in their own terminal.`
    )

/** Rule 2 for the paths a call writes: none is Ratchet's own. */
const storeWrite = (tool: string, paths: ReadonlyArray<string>, context: Context): Decision | null => {
  for (const word of paths) {
    const place = where(word, context)
    if (place._tag === "Protected") return protectedWrite(tool, place.shown, place.part)
    if (place._tag !== "Store") continue
    return deny(
      `${tool} would write ${place.shown}, which is Ratchet's own (the runtime store or .ratchet/); only Ratchet writes there.`,
      `Use the ratchet commands instead (ratchet status, ratchet log, …); the projections in .ratchet/ are rewritten from the store.`
    )
  }
  return null
}

/** Rule 2 for the directories a call writes anything below: none is, or holds, Ratchet's own. */
const storeTree = (tool: string, trees: ReadonlyArray<string>, context: Context): Decision | null => {
  for (const word of trees) {
    const place = where(word, context)
    if (place._tag === "Protected") return protectedWrite(tool, word, place.part)
    // The workspace's root holds `.ratchet/`: what is unpacked there may replace it.
    if (place._tag !== "Store" && !(place._tag === "Workspace" && place.relative === ".")) continue
    return deny(
      `${tool} would write anything below ${word.slice(0, 200)} (what an archive, a download, a patch or a copied tree holds, or what a link to it reaches), and that holds Ratchet's own files (the runtime store under the home directory, or .ratchet/); only Ratchet writes there.`,
      "Name a directory inside the task's scope (unzip -d src/x, tar -C src/x, curl -o src/x/file, patch -d src/x), or edit the files with the edit tools."
    )
  }
  return null
}

/** A name no scope pattern spells: a directory's tree is in scope when the scope covers any file below it. */
const probe = "ratchet~any~file"

/** Whether a scope pattern names something below `dir` (its text before any wildcard starts there). */
const names = (dir: string, pattern: string): boolean => {
  const fixed = pattern.replace(/^\.\//, "").split(/[*?[{]/)[0]!
  return dir === "." || fixed.startsWith(`${dir}/`)
}

/**
 * Rule 4 for a directory a call writes anything below: it must be placed, inside the workspace,
 * wholly inside `allowedScope` and clear of `forbiddenScope`.
 */
const treeOutOfScope = (tool: string, task: Task, place: Where, context: Context): Decision | null => {
  const instead = "Name a directory inside the scope (unzip -d src/x, tar -C src/x, curl -o src/x/file, patch -d src/x), or run it as a plan step, where the step's scope check sees what it changed."
  switch (place._tag) {
    case "Temporary":
    case "Store":
    case "Protected":
      return null
    case "Unknown":
      return deny(
        `${tool} writes anything below ${place.shown.slice(0, 200)}, a place Ratchet cannot resolve from its text, so it may write anywhere, outside task ${task.taskId}'s scope or into Ratchet's store.`,
        instead
      )
    case "Outside":
      return deny(`${tool} writes anything below ${place.shown.slice(0, 200)}, outside the workspace ${context.root}.`, instead)
    case "Workspace": {
      const dir = place.relative
      const file = dir === "." ? `${probe}/${probe}` : `${dir}/${probe}/${probe}`
      const forbidden = task.forbiddenScope.find((pattern) => Scope.matches(pattern, file) || names(dir, pattern))
      if (forbidden !== undefined) return deny(`${tool} writes anything below ${dir}, which holds the forbidden scope of task ${task.taskId} (${forbidden}).`, instead)
      if (task.allowedScope.length > 0 && !task.allowedScope.some((pattern) => Scope.matches(pattern, file))) {
        return deny(
          `${tool} writes anything below ${dir} (what an archive, a download or a patch holds, or what a link to it reaches, is not in the command), and that is not wholly inside the allowed scope of task ${task.taskId} (${task.allowedScope.join(", ")}).`,
          instead
        )
      }
      return null
    }
  }
}

/**
 * The write rules (2 and 4) for the paths a call writes and the directories it writes anything
 * below (`trees`); `unknown` when it writes elsewhere too.
 */
const writes = (tool: string, paths: ReadonlyArray<string>, unknown: boolean, context: Context, trees: ReadonlyArray<string> = []): Decision => {
  const own = storeWrite(tool, paths, context) ?? storeTree(tool, trees, context)
  if (own !== null) return own
  const places = paths.map((word) => where(word, context))
  const task = context.task
  const project = places.filter((place) => place._tag !== "Temporary")
  const below = trees.map((word) => where(word, context)).filter((place) => place._tag !== "Temporary")
  if (project.length === 0 && below.length === 0 && !unknown) return allow
  if (task === null) {
    return context.ambiguous.length === 0 ? allow : deny(
      `several tasks are in progress in this workspace (${context.ambiguous.join(", ")}), so it is not clear which contract this write is held to.`,
      "Set RATCHET_TASK=<task id> in the agent's environment to name the task it works on."
    )
  }
  if (task.state !== "RUNNING") return notRunning(task)
  if (task.leaseHolder !== null) {
    return deny(
      `Task ${task.taskId}'s writer lease is held by ${task.leaseHolder}; this session is an observer and may not write.`,
      `Wait until that holder finishes or releases the lease (ratchet lease ${task.taskId} shows it).`
    )
  }
  for (const place of below) {
    const refused = treeOutOfScope(tool, task, place, context)
    if (refused !== null) return refused
  }
  for (const place of project) {
    // A shell write the text does not resolve (`$OUT/x`) was refused as unreadable (rule 3).
    if (place._tag === "Unknown") continue
    if (place._tag === "Outside") {
      return deny(`${place.shown} is outside the workspace ${context.root}.`, "Keep the task's changes inside the repository; use a temporary directory for scratch files.")
    }
    if (place._tag === "Workspace") {
      const refused = outOfScope(task, place.relative, place.relative)
      if (refused !== null) return refused
    }
  }
  return allow
}

/** What each person-only act is, for the denial. */
const acts: Readonly<Record<Shell.Act, string>> = {
  approve: "approves a brief, spec or plan on the user's behalf",
  approver: "manages the keys approvals are signed with",
  reopen: "reopens a task's approved contract",
  unblock: "decides how a blocked task goes on",
  rewind: "chooses which history a task continues from",
  verify: "records the verdicts that decide whether the work is done",
  lessons: "decides which lessons are kept",
  hooks: "changes the hooks that guard the agent",
  unknown: "runs ratchet with a subcommand the text does not say, which may be any act only a person may do"
}

/** Rule 1: a person-only act. */
const personOnly = (found: Shell.PersonOnly): Decision =>
  deny(
    `\`${found.text}\` is for a person: ${found.act === "unknown" ? "it" : `ratchet ${found.act}`} ${acts[found.act]}. An agent may not run it, however it is launched or wherever the command names it.`,
    "Ask the user to run it themselves, in their own terminal."
  )

/**
 * Whether a token a command hands to a program names Ratchet's store or a `.ratchet` directory. A
 * path into the store names the store's own directory (or a variable): only such tokens are
 * resolved.
 */
const ratchetPlace = (token: string, context: Context, storeName: string): boolean => {
  if (/\$\{?RATCHET_HOME\b/.test(token) || /(^|\/)\.ratchet(\/|$)/.test(token) || /(^|\/)ratchet\.db/.test(token)) return true
  if (!token.includes(storeName) && !token.includes("$")) return false
  const file = absolute(token, context)
  return file !== null && inside(context.storeDirectory, file)
}

/** The longest command Ratchet judges; a longer one is denied unread (it would take too long to read). */
const maxCommand = 1024 * 1024

/** Rule 3: a command Ratchet cannot read completely. */
const unreadable = (why: string, context: Context): Decision => {
  const reason = `${why}, so the guard cannot tell what the command runs or writes`
  const task = context.task
  if (task === null && context.ambiguous.length === 0) return { _tag: "Ask", reason: `${reason}. Allow it?` }
  return deny(
    task !== null
      ? `${reason}; task ${task.taskId} is ${task.state}, and a command Ratchet cannot read is never run under a task's contract.`
      : `${reason}; tasks are in progress in this workspace (${context.ambiguous.join(", ")}), and a command Ratchet cannot read is never run under their contracts.`,
    "Run what it runs as plain commands Ratchet can read (write a script into a file inside the scope and run it with its interpreter, or use the edit tools), or ask the user to run it in their own terminal."
  )
}

/**
 * Rule 4 for a script run from a file (`python3 x.py`, `node x.js`, `sh x.sh`): what it writes is
 * not in the text, so it counts as a write anywhere — allowed only where such a write is (the task
 * RUNNING, no other lease holder), and then judged by the scope check after the step. A command
 * that names the store was denied before (rule 2).
 */
const scriptRun = (script: string, context: Context): Decision | null => {
  const task = context.task
  const why = `\`${script.slice(0, 200)}\` runs a script from a file; Ratchet cannot see what it writes, so it counts as writing anywhere`
  const instead = "Run the script as a plan step (the runner runs it, and the step's scope check sees what it changed), or ask the user to run it in their own terminal."
  if (task === null) {
    return context.ambiguous.length === 0 ? null : deny(
      `${why}, and several tasks are in progress in this workspace (${context.ambiguous.join(", ")}), so it is not clear which contract it is held to.`,
      "Set RATCHET_TASK=<task id> in the agent's environment to name the task it works on."
    )
  }
  if (task.state !== "RUNNING") {
    const [state, fix] = waiting(task)
    return deny(`${why}; task ${task.taskId} is ${task.state}: ${state}`, `${fix} ${instead}`)
  }
  if (task.leaseHolder !== null) {
    return deny(`${why}; task ${task.taskId}'s writer lease is held by ${task.leaseHolder}, so this session is an observer and may not write.`, instead)
  }
  return null
}

/**
 * Judges one tool call.
 *
 * @since 0.1.0
 * @category constructors
 */
export const decide = (call: HostEvent.ToolCall, context: Context): Decision => {
  const placed = misplaced(context)
  if (placed !== null) return placed
  const action = call.action
  switch (action._tag) {
    case "Read":
      return unprintable(call.tool, action.paths) ?? allow
    case "Other":
      return allow
    case "Write":
      return unprintable(call.tool, action.paths) ?? writes(call.tool, action.paths, false, context)
    case "Shell": {
      if (action.command.length > maxCommand) {
        return deny(
          `the command is ${Math.ceil(action.command.length / 1024)} KiB long, more than Ratchet judges (${maxCommand / 1024} KiB), so it cannot tell what it runs or writes.`,
          "Run it as shorter commands, or put the data in a file and hand the file to the program; if the user means it, they run it in their own terminal."
        )
      }
      const shell = Shell.classify(action.command)
      const found = shell.personOnly[0]
      if (found !== undefined) return personOnly(found)
      const storeName = path.basename(context.storeDirectory)
      for (const token of shell.touches) {
        const part = protectedPart(token, context)
        if (part !== undefined) return protectedWrite("The command", `${token.slice(0, 200)} (handed to a program that may change it)`, part)
      }
      const place = shell.touches.find((token) => ratchetPlace(token, context, storeName))
      if (place !== undefined) {
        return shell.programs.some((program) => /^sqlite3?$/.test(program))
          ? deny("the command opens Ratchet's runtime store with a database shell; only Ratchet writes there.", "Read the task through ratchet status, ratchet log or ratchet evidence instead.")
          : deny(
            `the command hands ${place.slice(0, 200)} to a program that may change it; that is Ratchet's own (the runtime store or .ratchet/), and only Ratchet writes there.`,
            "Use the ratchet commands instead (ratchet status, ratchet log, …); the projections in .ratchet/ are rewritten from the store, and reading them with cat or ls is allowed."
          )
      }
      const own = storeWrite("The command", shell.writes.paths, context) ?? storeTree("The command", shell.trees, context)
      if (own !== null) return own
      const why = shell.opaque[0] ?? WriteTargets.unresolvedWrite(shell.writes.paths, shell.trees, variables(context))
      if (why !== undefined) return unreadable(why, context)
      const script = shell.scripts[0]
      if (script !== undefined) {
        const refused = scriptRun(script, context)
        if (refused !== null) return refused
      }
      const writing = shell.writes.paths.length > 0 || shell.writes.unknown || shell.trees.length > 0
      const judged = writing ? writes("The command", shell.writes.paths, shell.writes.unknown, context, shell.trees) : allow
      if (judged._tag !== "Allow") return judged
      if (shell.destructive.length > 0) return { _tag: "Ask", reason: `${shell.destructive[0]!.slice(0, 300)}. Allow it?` }
      return allow
    }
  }
}

/**
 * The task a stop is judged against: its state and the required criteria with no counted PASS.
 *
 * @since 0.1.0
 * @category models
 */
export interface StopContext {
  readonly taskId: string
  readonly state: Event.TaskState
  readonly unverified: ReadonlyArray<string>
}

/**
 * Whether the agent may stop: not while the task is RUNNING or VERIFYING with required criteria
 * unverified — once. When the host says this stop already follows such a block (`continuing`),
 * it is allowed, so a stop hook never loops.
 *
 * @since 0.1.0
 * @category constructors
 */
export const stop = (task: StopContext | null, continuing: boolean): Decision => {
  if (task === null || continuing) return allow
  if ((task.state !== "RUNNING" && task.state !== "VERIFYING") || task.unverified.length === 0) return allow
  const id = task.taskId
  return deny(
    `Task ${id} is ${task.state} and its required acceptance criteria ${task.unverified.join(", ")} are not verified yet; "done" is what verification says, not the agent.`,
    task.state === "RUNNING"
      ? `Finish the plan's steps (ratchet status ${id}); verification follows: a person runs ratchet verify ${id} in their terminal.`
      : `Verification is next: a person runs ratchet verify ${id} in their terminal, then ratchet done ${id}.`
  )
}
