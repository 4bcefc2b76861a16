/**
 * The guard every adapter shares: given the task's state, its scope and who holds its lease, may
 * this tool call go ahead? Pure: the caller reads the task and the lease, the guard only judges.
 *
 * The policy, in order (the first rule that speaks decides):
 * 1. A call that would approve on the user's behalf (`ratchet approve`, `ratchet reopen`,
 *    `ratchet unblock --resolve`, however launched) is denied, whatever the state: approvals need
 *    a person at an interactive terminal.
 * 2. A call that would write Ratchet's runtime store (`$RATCHET_HOME`) or the project's
 *    `.ratchet/` directly is denied: Ratchet writes those, through its commands.
 * 3. A call that writes (a file-writing tool, or a shell command that writes) is denied unless the
 *    task is RUNNING, no other owner holds its writer lease, and every path it names is inside the
 *    workspace, inside `allowedScope` (when the spec gives one) and outside `forbiddenScope`. Paths
 *    in the system's temporary directories are not the project's and are left alone. With no task
 *    in progress in the workspace there is no contract to hold the call to, and it is allowed;
 *    with several and none named, which contract applies is unknown, and it is denied.
 * 4. A destructive command (`rm -rf`, `git reset --hard`, `git push --force`, …) is asked about,
 *    where the host can ask; an adapter whose host cannot ask turns the ask into a denial.
 * 5. Everything else is allowed.
 *
 * Every denial says why and what the user can do.
 *
 * @since 0.1.0
 */
import type * as Event from "@ratchet/kernel/Event"
import * as Scope from "@ratchet/controller/Scope"
import * as path from "node:path"
import type * as HostEvent from "./HostEvent.js"
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
  /** The workspace (repository) root, absolute. */
  readonly root: string
  /** The directory relative paths of the call are resolved from (the host's cwd), absolute. */
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
  | { readonly _tag: "Temporary" }
  | { readonly _tag: "Outside"; readonly shown: string }
  | { readonly _tag: "Workspace"; readonly relative: string }
  | { readonly _tag: "Unknown"; readonly shown: string }

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
  if (Scope.isRatchetPath(relative)) return { _tag: "Store", shown: word }
  return { _tag: "Workspace", relative: relative === "" ? "." : relative }
}

// ---------------------------------------------------------------------------------------------
// The rules
// ---------------------------------------------------------------------------------------------

/** Why edits wait in `state`, and what moves the task to where they are allowed. */
const notRunning = (task: Task): Decision => {
  const id = task.taskId
  const [why, fix] = ((): readonly [string, string] => {
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
        return ["the run is finished and being verified; a change now would make the evidence stale.", `Let verification decide (ratchet verify ${id}); a failing criterion sends the work back to RUNNING.`]
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
  return deny(`Task ${id} is ${task.state}: ${why}`, fix)
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

/** The write rules (2 and 3) for the paths a call writes; `unknown` when it writes elsewhere too. */
const writes = (tool: string, paths: ReadonlyArray<string>, unknown: boolean, context: Context): Decision => {
  const places = paths.map((word) => where(word, context))
  const store = places.find((place) => place._tag === "Store")
  if (store !== undefined && store._tag === "Store") {
    return deny(
      `${tool} would write ${store.shown}, which is Ratchet's own (the runtime store or .ratchet/); only Ratchet writes there.`,
      `Use the ratchet commands instead (ratchet status, ratchet log, …); the projections in .ratchet/ are rewritten from the store.`
    )
  }
  const task = context.task
  const project = places.filter((place) => place._tag !== "Temporary")
  if (project.length === 0 && !unknown) return allow
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
  for (const place of project) {
    // A path the text does not resolve (`$OUT/x`) is judged after the step by the scope check.
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

/**
 * Judges one tool call.
 *
 * @since 0.1.0
 * @category constructors
 */
export const decide = (call: HostEvent.ToolCall, context: Context): Decision => {
  const action = call.action
  switch (action._tag) {
    case "Read":
    case "Other":
      return allow
    case "Write":
      return writes(call.tool, action.paths, false, context)
    case "Shell": {
      const shell = Shell.classify(action.command)
      const approval = shell.approvals[0]
      if (approval !== undefined) {
        return deny(
          `\`${approval.text.slice(0, 200)}\` would approve on the user's behalf (ratchet ${approval.subcommand}); an agent may not approve.`,
          "Ask the user to run it themselves at an interactive terminal, where they read what they approve and type its confirmation."
        )
      }
      if (shell.mentions.some((word) => /ratchet\.db(-wal|-shm|-journal)?\b/.test(word)) && shell.programs.some((program) => /^sqlite3?$/.test(program))) {
        return deny(
          "the command opens Ratchet's runtime store with a database shell; only Ratchet writes there.",
          "Read the task through ratchet status, ratchet log or ratchet evidence instead."
        )
      }
      const judged = shell.writes.paths.length > 0 || shell.writes.unknown ? writes("The command", shell.writes.paths, shell.writes.unknown, context) : allow
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
      ? `Finish the plan's steps (ratchet status ${id}); verification follows with ratchet verify ${id} by an identity other than yours.`
      : `Verification is next: ratchet verify ${id}, run by an identity that did none of the work, then ratchet done ${id}.`
  )
}
