/**
 * The `ratchet` entry point: parse, locate the project, wire the store, run one command, print its
 * result (text, or one JSON document with `--json`) and exit with the brief's codes: 0 done or
 * CLEAR, 2 invalid input, 3 HOLD, 4 conflict, 1 unexpected.
 *
 * @since 0.1.0
 */
import * as path from "node:path"
import * as Controller from "@ratchet/controller/Controller"
import * as ControllerError from "@ratchet/controller/ControllerError"
import * as Documents from "@ratchet/controller/Documents"
import * as Invoker from "@ratchet/controller/Invoker"
import * as StoreMark from "@ratchet/controller/StoreMark"
import * as Workspace from "@ratchet/controller/Workspace"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Args from "./Args.js"
import * as Commands from "./Commands.js"
import * as Help from "./Help.js"
import * as Render from "./Render.js"
import * as Store from "./Store.js"
import * as Terminal from "./Terminal.js"

declare const __RATCHET_VERSION__: string | undefined

const version = typeof __RATCHET_VERSION__ === "string" ? __RATCHET_VERSION__ : "0.0.0-source"

/** `RATCHET_ACTOR=kind:id`, or the login name as a user. */
const actorOf = (command: string): Commands.Env["actor"] | Args.UsageError =>
  Either.match(Invoker.parse(process.env["RATCHET_ACTOR"]), {
    onLeft: ({ fix, reason }) => new Args.UsageError({ command, field: "RATCHET_ACTOR", reason, fix }),
    onRight: (actor) => actor
  })

interface Io {
  readonly json: boolean
  readonly verbose: boolean
  readonly command: string
}

const print = (text: string) => process.stdout.write(text.endsWith("\n") ? text : `${text}\n`)

const fail = (io: Io, code: number, error: unknown, extra: string | null = null): number => {
  const style = Render.style(Render.colourFor(process.stderr))
  if (io.json) {
    print(JSON.stringify(Documents.failure(io.command, error, code)))
  } else {
    const tag = (error as { _tag?: unknown })?._tag
    if (tag === "@ratchet/kernel/TaskCommandHeld") {
      const held = error as { gate: Parameters<typeof Render.gate>[0] }
      process.stderr.write(`${Render.gate(held.gate, style)}\n`)
    } else {
      const message = error instanceof Error || (typeof error === "object" && error !== null && "message" in error)
        ? String((error as { message: unknown }).message)
        : String(error)
      process.stderr.write(`${style.red("error")}: ${Render.visible(message)}\n`)
    }
  }
  if (extra !== null) process.stderr.write(`${extra}\n`)
  return code
}

const runInit = (parsed: Args.Parsed, env: Commands.Env) =>
  Effect.gen(function*() {
    const name = parsed.options["name"]
    const force = parsed.options["force"] === true
    // What this checkout saw the store commit, when it is a project already: a store that went
    // back, or a missing database, is refused rather than opened (and created) again, unless the
    // person starts over on purpose with --force, which forgets the mark first (ADR 0023).
    const known = yield* Effect.either(Workspace.make.locate(env.cwd))
    const localDir = known._tag === "Right" ? known.right.localDir : undefined
    const location = Store.location()
    const forgotten = force && localDir !== undefined ? StoreMark.forget(StoreMark.fileOf(localDir), location.key) : null
    // The store first: opening it applies its migrations (the scope closes it again), and a store
    // that cannot be opened (unreachable, or written by a newer Ratchet) must leave the repository
    // untouched rather than half initialised.
    yield* Effect.scoped(Layer.build(Store.guardedAt(localDir)))
    const initialised = yield* Workspace.make.init(env.cwd, typeof name === "string" ? { displayName: name } : {})
    const where = Store.engine() === "postgres"
      ? "PostgreSQL (RATCHET_DATABASE_URL)"
      : path.join(process.env["RATCHET_HOME"] ?? "~/.ratchet", "ratchet.db")
    return {
      exit: 0,
      json: {
        created: initialised.created,
        root: initialised.root,
        projectFile: initialised.projectFile,
        projectId: initialised.project.projectId,
        displayName: initialised.project.displayName,
        workspaceId: initialised.workspaceId,
        store: Store.engine(),
        forgotten
      },
      text: [
        initialised.created ? `Initialised Ratchet project ${initialised.project.projectId}` : `Already a Ratchet project: ${initialised.project.projectId}`,
        `project file: ${initialised.projectFile}`,
        `workspace:    ${initialised.workspaceId}`,
        `store:        ${where}`,
        ...(forgotten === null ? [] : [
          `forgotten:    this checkout had seen task ${forgotten.streamId} committed up to LSN ${forgotten.lsn} (${forgotten.at}); the store is used as it is now`
        ]),
        `next: ratchet task create --goal "…"`
      ].join("\n")
    } satisfies Commands.Outcome
  })

/**
 * The controller a standalone command is given: it opens no store, so any use of it is a bug (a
 * defect naming the member). Provided as a plain value, because `provideServiceEffect` would run
 * its effect, and fail, before the command even starts.
 */
const noController = (name: string): Controller.Service =>
  new Proxy({} as Controller.Service, {
    get: (_target, member) => {
      throw new Error(`${name} opens no store, but it used the controller's ${String(member)}`)
    }
  })

/**
 * Runs `argv` and resolves to the exit code.
 *
 * @since 0.1.0
 * @category main
 */
export const run = async (argv: ReadonlyArray<string>): Promise<number> => {
  const json = argv.includes("--json")
  const verbose = argv.includes("--verbose")
  const first = argv[0]
  if (first === undefined || first === "--help" || first === "-h" || first === "help") {
    const topic = first === "help" ? argv.slice(1).filter((a) => !a.startsWith("-")) : []
    if (topic.length === 1 && Help.groups.includes(topic[0] as string)) {
      print(Help.group(topic[0] as string))
      return 0
    }
    if (topic.length > 0) {
      const found = Commands.find(topic[0] === "brief" && topic.length === 2 ? ["brief", topic[1] as string, "--help"] : topic)
      if (found === null) return fail({ json, verbose, command: "help" }, 2, unknownCommand(topic))
      print(Help.command(found.spec))
      return 0
    }
    if (argv.includes("--markdown")) print(Help.reference())
    else if (json) print(JSON.stringify({ ok: true, command: "help", version, commands: Commands.commands.map((c) => ({ name: c.name, usage: c.usage, summary: c.summary })) }))
    else print(Help.main())
    return 0
  }
  if (first === "--version" || first === "-V") {
    print(json ? JSON.stringify({ ok: true, version }) : version)
    return 0
  }
  const found = Commands.find(argv)
  if (found === null && Help.groups.includes(first) && (argv.includes("--help") || argv.includes("-h"))) {
    print(Help.group(first))
    return 0
  }
  if (found === null) return fail({ json, verbose, command: first }, 2, unknownCommand(argv))
  const { spec, rest } = found
  const io: Io = { json, verbose, command: spec.name }
  const parsed = Args.parse(spec.name, rest, spec.positionals, spec.options)
  if (parsed instanceof Args.UsageError) return fail(io, 2, parsed, `Usage: ${spec.usage}`)
  if (parsed.options["help"] === true) {
    print(Help.command(spec))
    return 0
  }
  const actor = actorOf(spec.name)
  if (actor instanceof Args.UsageError) return fail(io, 2, actor)
  const cwdOption = parsed.options["cwd"]
  let started: string
  try {
    started = typeof cwdOption === "string" ? cwdOption : process.cwd()
  } catch {
    // The directory this process started in was deleted under it.
    return fail(io, 2, new Args.UsageError({
      command: spec.name,
      field: "cwd",
      reason: "the current directory no longer exists.",
      fix: "cd into the repository (or pass -C <dir>) and run the command again."
    }))
  }
  const env: Commands.Env = {
    cwd: path.resolve(started),
    json,
    style: Render.style(Render.colourFor(process.stdout)),
    actor,
    write: (text) => process.stdout.write(text)
  }

  const environment = spec.needs === "project" || spec.name === "init" ? Store.checkEnvironment(spec.name) : null
  if (environment !== null) return fail(io, 2, environment)

  const program: Effect.Effect<Commands.Outcome, unknown> = spec.name === "init"
    ? runInit(parsed, env)
    : spec.needs === "standalone"
    ? spec.run(parsed, env).pipe(Effect.provideService(Controller.Controller, noController(spec.name)))
    : Effect.flatMap(Workspace.make.locate(env.cwd), (project) =>
      spec.run(parsed, env).pipe(Effect.provide(Store.controller(project))))

  const exit = await Effect.runPromiseExit(program)
  // A prompt may have opened the terminal's line reader; it would keep the process alive.
  Terminal.close()
  if (Exit.isSuccess(exit)) {
    const outcome = exit.value
    if (json && outcome.json !== null) print(JSON.stringify(Documents.success(spec.name, outcome.exit, outcome.json)))
    else if (!json && outcome.text !== null) print(outcome.text)
    return outcome.exit
  }
  const failure = Cause.failureOption(exit.cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    return fail(io, Documents.exitCodeOf[ControllerError.exitClassOf(error)], error)
  }
  // A defect: a bug, not a refusal. The cause goes to stderr only when asked for.
  const defect = Cause.squash(exit.cause)
  return fail(
    io,
    1,
    { _tag: "UnexpectedError", message: `unexpected: ${defect instanceof Error ? defect.message : String(defect)}` },
    verbose ? Cause.pretty(exit.cause) : "Run again with --verbose for the full cause, and report it if it persists."
  )
}

const unknownCommand = (argv: ReadonlyArray<string>) => {
  if (argv[0] === "brief") {
    // `brief <task> <verb>`: say which part is wrong rather than calling "brief <task>" a command.
    const verbs = Commands.commands.flatMap((c) => c.name.startsWith("brief ") ? [c.name.slice("brief ".length)] : [])
    const verb = [argv[1], argv[2]].every((word) => word !== undefined && !word.startsWith("-")) ? argv[2] : undefined
    const verbFirst = argv[1] !== undefined && verbs.includes(argv[1])
    return new Args.UsageError({
      command: "brief",
      field: "command",
      reason: verbFirst
        ? `the task goes before the verb: ratchet brief <task> ${argv[1]} ….`
        : verb === undefined
        ? "brief needs a task and a verb."
        : `${JSON.stringify(verb.slice(0, 80))} is not a brief verb.`,
      fix: `Use ratchet brief <task> ${verbs.join("|")}; see ratchet help brief ${verbs[0] ?? "ask"}.`
    })
  }
  const typed = argv.filter((a) => !a.startsWith("-")).slice(0, 2).join(" ")
  const names = Commands.commands.map((c) => c.name)
  const close = names.filter((name) => name.startsWith(argv[0] ?? "\u0000") || (argv[0] ?? "").startsWith(name.split(" ")[0] ?? "\u0000"))
  return new Args.UsageError({
    command: typed,
    field: "command",
    reason: `"${typed.slice(0, 80)}" is not a ratchet command.`,
    fix: close.length > 0 ? `Did you mean: ${close.map((n) => `ratchet ${n}`).join(", ")}? See ratchet --help.` : "See ratchet --help."
  })
}
