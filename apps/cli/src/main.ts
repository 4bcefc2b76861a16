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
import * as Tracing from "@ratchet/controller/Tracing"
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
import * as Mistyped from "./Mistyped.js"
import * as Render from "./Render.js"
import * as Repository from "./Repository.js"
import * as Store from "./Store.js"
import * as StoreRecord from "./StoreRecord.js"
import * as Terminal from "./Terminal.js"
import * as Version from "./Version.js"

/** `RATCHET_ACTOR=kind:id`, or the login name as a user. */
const actorOf = (command: string): Commands.Env["actor"] | Args.UsageError =>
  Either.match(Invoker.parse(process.env["RATCHET_ACTOR"]), {
    onLeft: ({ fix, reason }) => new Args.UsageError({ command, field: "RATCHET_ACTOR", reason, fix }),
    onRight: (actor) => actor
  })

interface Io {
  readonly json: boolean
  readonly verbose: boolean
  /** `--no-color` on the command line. */
  readonly noColor: boolean
  readonly command: string
}

const print = (text: string) => process.stdout.write(text.endsWith("\n") ? text : `${text}\n`)

const fail = (io: Io, code: number, error: unknown, extra: string | null = null): number => {
  const style = Render.style(Render.colourFor(process.stderr, io.noColor))
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
    // A new project needs a git repository (ADR 0027); one made outside git before that rule keeps
    // working, --force included.
    if (known._tag === "Left" && known.left._tag === "@ratchet/controller/ProjectNotInitialised") yield* Repository.requireWorkTree(env.cwd)
    const localDir = known._tag === "Right" ? known.right.localDir : undefined
    // The store as every command chooses it (the environment, else this checkout's record), which
    // init then records for the checkout; --force may create the one the record names afresh.
    const choice = yield* Store.choose(localDir, { creating: force })
    const location = Store.location()
    const forgotten = force && localDir !== undefined ? StoreMark.forget(StoreMark.fileOf(localDir), location.key) : null
    // The store first: opening it applies its migrations (the scope closes it again), and a store
    // that cannot be opened (unreachable, or written by a newer Ratchet) must leave the repository
    // untouched rather than half initialised.
    yield* Effect.scoped(Layer.build(Store.guardedAt(localDir)))
    const initialised = yield* Workspace.make.init(env.cwd, typeof name === "string" ? { displayName: name } : {})
    const recorded = Store.recordOf(choice)
    const previous = choice.record === null ? null : Store.describe(choice.record.record)
    const localNow = initialised.localDir
    if (recorded === null && localNow !== undefined) StoreRecord.remove(localNow)
    const recordFile = recorded === null || localNow === undefined ? null : StoreRecord.write(localNow, recorded)
    const where = Store.describe(choice)
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
        home: choice.home,
        storeRecord: recordFile,
        forgotten
      },
      text: [
        initialised.created ? `Initialised Ratchet project ${initialised.project.projectId}` : `Already a Ratchet project: ${initialised.project.projectId}`,
        `project file: ${initialised.projectFile}`,
        `workspace:    ${initialised.workspaceId}`,
        `store:        ${where} (${Store.origin(choice)})`,
        recordFile === null
          ? `record:       not written: the database URL could not be recorded without its password; commands find the store only through RATCHET_DATABASE_URL`
          : `record:       ${recordFile}${previous !== null && previous !== where ? ` (it named ${previous} before)` : ""}: commands run in this checkout without RATCHET_HOME find this store`,
        ...(recorded?.database?.passwordOmitted === true
          ? ["note:         the password in RATCHET_DATABASE_URL was not recorded; without the variable, the PostgreSQL client takes it from PGPASSWORD or ~/.pgpass"]
          : []),
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
 * For a standalone command that reads the store's directory (`readsHome`): the store chosen as a
 * project command would choose it, when run in a project. `hook` chooses for the project the host
 * names (Hook.ts); the other standalone commands locate no project.
 */
const chooseIfInProject = (spec: Commands.CommandSpec, cwd: string): Effect.Effect<void, unknown> =>
  spec.readsHome !== true || Store.checkEnvironment(spec.name) !== null
    ? Effect.void
    : Effect.flatMap(
      Effect.option(Workspace.make.locate(cwd)),
      (located) => located._tag === "Some" ? Effect.asVoid(Store.choose(located.value.localDir)) : Effect.void
    )

/**
 * Runs `given` (the arguments after `ratchet`) and resolves to the exit code.
 *
 * @since 0.1.0
 * @category main
 */
export const run = async (given: ReadonlyArray<string>): Promise<number> => {
  // `ratchet --version` (or -v, -V) is `ratchet version`: one output, whichever is typed.
  const asTyped = given[0] !== undefined && Version.flags.includes(given[0]) ? ["version", ...given.slice(1)] : given
  // `ratchet -C ../repo status`, `ratchet --json task list`: global options may come first.
  const argv = Args.hoistGlobalOptions(asTyped)
  const json = argv.includes("--json")
  const verbose = argv.includes("--verbose")
  const terminator = argv.indexOf("--")
  const noColor = (terminator === -1 ? argv : argv.slice(0, terminator)).includes("--no-color")
  const first = argv[0]
  if (first === undefined || first === "--help" || first === "-h" || first === "help") {
    const topic = first === "help" ? argv.slice(1).filter((a) => !a.startsWith("-")) : []
    if (topic.length === 1 && Help.groups.includes(topic[0] as string)) {
      print(Help.group(topic[0] as string, Help.width()))
      return 0
    }
    if (topic.length > 0) {
      const found = Commands.find(topic[0] === "brief" && topic.length === 2 ? ["brief", topic[1] as string, "--help"] : topic)
      if (found === null) return fail({ json, verbose, noColor, command: "help" }, 2, Mistyped.unknownCommand(topic, Commands.commands))
      print(Help.command(found.spec, Help.width()))
      return 0
    }
    if (argv.includes("--markdown")) print(Help.reference())
    else if (json) print(JSON.stringify({ ok: true, command: "help", version: Version.version, commit: Version.commit, commands: Commands.commands.map((c) => ({ name: c.name, usage: c.usage, summary: c.summary })) }))
    else print(Help.main(Help.width()))
    return 0
  }
  const found = Commands.find(argv)
  if (found === null && Help.groups.includes(first) && (argv.includes("--help") || argv.includes("-h"))) {
    print(Help.group(first, Help.width()))
    return 0
  }
  if (found === null) return fail({ json, verbose, noColor, command: first }, 2, Mistyped.unknownCommand(argv, Commands.commands))
  const { spec, rest } = found
  const io: Io = { json, verbose, noColor, command: spec.name }
  const parsed = Args.parse(spec.name, rest, spec.positionals, spec.options)
  if (parsed instanceof Args.UsageError) return fail(io, 2, parsed, `Usage: ${spec.usage}`)
  if (parsed.options["help"] === true) {
    print(Help.command(spec, Help.width()))
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
    style: Render.style(Render.colourFor(process.stdout, noColor)),
    actor,
    write: (text) => process.stdout.write(text)
  }

  const environment = spec.needs === "project" || spec.name === "init" ? Store.checkEnvironment(spec.name) : null
  if (environment !== null) return fail(io, 2, environment)

  // Which store: chosen once the project is located (--home, the environment, the checkout's
  // record, the default), before any store is opened (Store.choose).
  const home = typeof parsed.options["home"] === "string" ? parsed.options["home"] : undefined
  const program: Effect.Effect<Commands.Outcome, unknown> = spec.name === "init"
    ? runInit(parsed, env)
    : spec.needs === "standalone"
    ? Effect.zipRight(
      chooseIfInProject(spec, env.cwd),
      spec.run(parsed, env).pipe(Effect.provideService(Controller.Controller, noController(spec.name)))
    )
    : Effect.flatMap(Workspace.make.locate(env.cwd), (project) =>
      Effect.zipRight(Store.choose(project.localDir, { home }), Effect.suspend(() => spec.run(parsed, env).pipe(Effect.provide(Store.controller(project))))))

  // One span per command (a child of TRACEPARENT's when a parent process passed one), exported
  // only when the OTEL_* variables ask for it (Tracing).
  const annotated = Effect.tap(program, (outcome) => Effect.annotateCurrentSpan("ratchet.exit_code", outcome.exit))
  const traced = Tracing.root(`ratchet ${spec.name}`, { "ratchet.command": spec.name, "ratchet.json": json }, annotated).pipe(
    Effect.provide(Tracing.layer("ratchet", { version: Version.version }))
  )
  const exit = await Effect.runPromiseExit(traced)
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
