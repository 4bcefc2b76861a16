/**
 * The multi-process half of the storage conformance suite: a child process that opens a store
 * and performs one order, and the parent side that starts several such children and releases them
 * at the same moment.
 *
 * A backend's child script is three lines:
 *
 * ```ts
 * import { runChild } from "@ratchet/testkit/StorageChild"
 * import { MyStore } from "my-store"
 * runChild(MyStore.layer({ location: process.env["MY_STORE_LOCATION"]! }))
 * ```
 *
 * The protocol, one JSON object per line (lines without the protocol marker are ignored, so a
 * child may log to stdout):
 *
 * 1. the parent writes the child's order (`append`, `appendAtHead` or `open`) to its stdin;
 * 2. the child opens the store (except for `open`, whose point is to open it late) and reports
 *    `ready`;
 * 3. once every child is ready, the parent writes `go` to each: the children start their orders
 *    together, released by that rendezvous through their stdin rather than by a sleep;
 * 4. each child reports `done` with its outcome — the result, or the failure's `_tag`, message
 *    and fields — closes the store and exits.
 *
 * Nothing here imports vitest, so a child runs outside the test runner.
 *
 * @since 0.1.0
 */
import { spawn } from "node:child_process"
import { createInterface, type Interface } from "node:readline"
import { fileURLToPath } from "node:url"
import * as Event from "@ratchet/kernel/Event"
import type { BlobStore } from "@ratchet/storage/BlobStore"
import * as EventStore from "@ratchet/storage/EventStore"
import type { LeaseStore } from "@ratchet/storage/LeaseStore"
import type * as LessonStore from "@ratchet/storage/LessonStore"
import type { ReadModels } from "@ratchet/storage/ReadModel"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import type * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"

/**
 * Every service a store layer provides.
 *
 * @since 0.1.0
 * @category models
 */
export type Services = EventStore.EventStore | ReadModels | LeaseStore | BlobStore | LessonStore.LessonStore

/**
 * How to start a child process that opens a given store and calls {@link runChild}.
 *
 * @since 0.1.0
 * @category models
 */
export interface ChildCommand {
  readonly command: string
  readonly args: ReadonlyArray<string>
  /** Added to this process's environment, e.g. where the shared store lives. */
  readonly env?: Readonly<Record<string, string>> | undefined
  readonly cwd?: string | undefined
}

/**
 * One store that this process and its children open together: `layer` opens it here, `child`
 * starts a process that opens the same one.
 *
 * @since 0.1.0
 * @category models
 */
export interface SharedStore {
  readonly layer: Layer.Layer<Services, unknown>
  readonly child: ChildCommand
}

/**
 * What the multi-process checks need from a backend: a fresh store (a new directory, a new
 * database schema) each time `share` is called, and how a child opens it.
 *
 * @since 0.1.0
 * @category models
 */
export interface ProcessHarness {
  readonly share: () => SharedStore
}

/**
 * A child running a TypeScript script through `tsx`, resolving `@ratchet/*` packages to their
 * sources as this repository's tests do. Needs `tsx` installed where the tests run.
 *
 * @since 0.1.0
 * @category constructors
 */
export const tsxChild = (script: string | URL, env: Readonly<Record<string, string>> = {}): ChildCommand => ({
  command: process.execPath,
  args: [
    "--conditions=@ratchet/source",
    "--import",
    "tsx",
    typeof script === "string" ? script : fileURLToPath(script)
  ],
  env
})

// ---------------------------------------------------------------------------------------------
// The protocol
// ---------------------------------------------------------------------------------------------

const marker = "ratchet-storage-child/1"

const WireAppend = Schema.Struct({
  projectId: Schema.String,
  streamId: Schema.String,
  branch: Schema.optional(Schema.String),
  expectedVersion: Schema.Number,
  epoch: Schema.NullOr(Schema.Number),
  operationId: Schema.String,
  /** Encoded with `Event.encode`; the child decodes them. */
  events: Schema.Array(Schema.Unknown)
})

/**
 * What the parent asks of a child.
 *
 * - `append`: one append, as given.
 * - `appendAtHead`: read the head, append with it as the expected version, and on a
 *   `VersionConflict` read it again and retry, up to `retries` times; any other outcome is final.
 * - `open`: open the store only after `go` (so several children open a fresh store at once), then
 *   read the head of `streamId`.
 *
 * @since 0.1.0
 * @category models
 */
export const Order = Schema.Union(
  Schema.Struct({ op: Schema.Literal("append"), request: WireAppend }),
  Schema.Struct({ op: Schema.Literal("appendAtHead"), request: WireAppend, retries: Schema.Int }),
  Schema.Struct({ op: Schema.Literal("open"), streamId: Schema.String })
)

/**
 * @since 0.1.0
 * @category models
 */
export type Order = typeof Order.Type

/**
 * How a child's order ended. A failure keeps the error's `_tag`, message and JSON-safe fields
 * (`expected`, `actual`, `presented`, …) so the parent can check them.
 *
 * @since 0.1.0
 * @category models
 */
export const Outcome = Schema.Union(
  Schema.Struct({ ok: Schema.Literal(true), result: Schema.Unknown }),
  Schema.Struct({
    ok: Schema.Literal(false),
    tag: Schema.String,
    message: Schema.String,
    fields: Schema.Record({ key: Schema.String, value: Schema.Unknown })
  })
)

/**
 * @since 0.1.0
 * @category models
 */
export type Outcome = typeof Outcome.Type

const Report = Schema.Union(
  Schema.Struct({ protocol: Schema.Literal(marker), type: Schema.Literal("ready") }),
  Schema.Struct({ protocol: Schema.Literal(marker), type: Schema.Literal("done"), outcome: Outcome })
)

type Report = typeof Report.Type

const decodeReport = Schema.decodeUnknownOption(Schema.parseJson(Report))
const decodeOrder = Schema.decodeUnknownEither(Schema.parseJson(Order))

/**
 * Encodes an append request for a child's order.
 *
 * @since 0.1.0
 * @category constructors
 */
export const wireAppend = (request: EventStore.AppendRequest): typeof WireAppend.Type => ({
  projectId: request.projectId,
  streamId: request.streamId,
  ...(request.branch === undefined ? {} : { branch: request.branch }),
  expectedVersion: request.expectedVersion,
  epoch: request.epoch,
  operationId: request.operationId,
  events: request.events.map(Event.encode)
})

// ---------------------------------------------------------------------------------------------
// The child
// ---------------------------------------------------------------------------------------------

// The fields worth sending back: primitives and small JSON values (a StorageError's `reason`),
// never a `cause`, which may hold a driver's error with cycles.
const jsonSafe = ([key, value]: readonly [string, unknown]): boolean => {
  if (key === "cause") return false
  if (value === null || typeof value === "string" || typeof value === "number" || typeof value === "boolean") return true
  if (typeof value !== "object") return false
  try {
    return JSON.stringify(value).length <= 4_000
  } catch {
    return false
  }
}

const outcomeOf = (exit: Exit.Exit<unknown, unknown>): Outcome => {
  if (Exit.isSuccess(exit)) return { ok: true, result: exit.value ?? null }
  const failure = Cause.failureOption(exit.cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    if (typeof error === "object" && error !== null) {
      const record = error as Record<string, unknown>
      return {
        ok: false,
        tag: typeof record["_tag"] === "string" ? record["_tag"] : "UnknownError",
        message: error instanceof Error ? error.message : String(error),
        fields: Object.fromEntries(Object.entries(record).filter(jsonSafe))
      }
    }
    return { ok: false, tag: "UnknownError", message: String(error), fields: {} }
  }
  return { ok: false, tag: "Defect", message: Cause.pretty(exit.cause), fields: {} }
}

const decodeAppend = (wire: typeof WireAppend.Type): Effect.Effect<EventStore.AppendRequest, Error> =>
  Effect.forEach(wire.events, (input, index) =>
    Either.match(Event.decode(input), {
      onLeft: (error) => Effect.fail(new Error(`order event #${index} does not decode: ${error.message}`)),
      onRight: Effect.succeed
    })).pipe(Effect.map((events) => ({ ...wire, events })))

const perform = (order: Order): Effect.Effect<unknown, unknown, EventStore.EventStore> =>
  Effect.gen(function*() {
    const store = yield* EventStore.EventStore
    switch (order.op) {
      case "open":
        return yield* store.head(order.streamId)
      case "append":
        return yield* store.append(yield* decodeAppend(order.request))
      case "appendAtHead": {
        const request = yield* decodeAppend(order.request)
        let conflicts = 0
        for (;;) {
          const head = yield* store.head(request.streamId, request.branch ?? EventStore.mainBranch)
          const attempt = yield* Effect.either(store.append({ ...request, expectedVersion: head?.version ?? 0 }))
          if (Either.isRight(attempt)) return { ...attempt.right, conflicts }
          if (attempt.left._tag !== "@ratchet/storage/VersionConflict" || conflicts >= order.retries) {
            return yield* Effect.fail(attempt.left)
          }
          conflicts += 1
        }
      }
    }
  })

const send = (report: Report): void => {
  process.stdout.write(`${JSON.stringify(report)}\n`)
}

const nextLine = async (lines: AsyncIterator<string>, waitingFor: string): Promise<string> => {
  const next = await lines.next()
  if (next.done === true) throw new Error(`stdin closed while waiting for ${waitingFor}`)
  return next.value
}

const childMain = async (layer: Layer.Layer<Services, unknown>, input: Interface): Promise<void> => {
  const lines = input[Symbol.asyncIterator]()
  const order = decodeOrder(await nextLine(lines, "the order"))
  if (Either.isLeft(order)) throw new Error(`the order does not decode: ${order.left.message}`)
  let runtime: ManagedRuntime.ManagedRuntime<Services, unknown> | undefined
  if (order.right.op !== "open") {
    runtime = ManagedRuntime.make(layer)
    const opened = await runtime.runPromiseExit(Effect.void)
    if (Exit.isFailure(opened)) {
      send({ protocol: marker, type: "done", outcome: outcomeOf(opened) })
      return
    }
  }
  send({ protocol: marker, type: "ready" })
  const go = await nextLine(lines, "go")
  if (go.trim() !== "go") throw new Error(`expected "go", got ${JSON.stringify(go)}`)
  runtime ??= ManagedRuntime.make(layer)
  const exit = await runtime.runPromiseExit(perform(order.right))
  send({ protocol: marker, type: "done", outcome: outcomeOf(exit) })
  await runtime.dispose()
}

/**
 * The main function of a backend's child script: reads one order from stdin, opens the store with
 * `layer`, waits for `go`, performs the order, reports the outcome on stdout and exits. The exit
 * code is 0 whenever an outcome was reported (a rejected append is an outcome, not a crash).
 *
 * @since 0.1.0
 * @category testing
 */
export const runChild = (layer: Layer.Layer<Services, unknown>): Promise<void> => {
  const input = createInterface({ input: process.stdin })
  const exit = (code: number) => {
    input.close()
    // Flush stdout before exiting: it is a pipe, and the parent reads the outcome from it.
    process.stdout.write("", () => process.exit(code))
  }
  return childMain(layer, input).then(
    () => exit(0),
    (error: unknown) => {
      process.stderr.write(`storage conformance child failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`)
      exit(1)
    }
  )
}

// ---------------------------------------------------------------------------------------------
// The parent
// ---------------------------------------------------------------------------------------------

/**
 * A child did not follow the protocol: it crashed, exited early or stayed silent too long.
 *
 * @since 0.1.0
 * @category errors
 */
export class ChildFailed extends Schema.TaggedError<ChildFailed>()("@ratchet/testkit/ChildFailed", {
  child: Schema.Int,
  stage: Schema.Literal("ready", "done"),
  detail: Schema.String,
  stderr: Schema.String
}) {
  override get message(): string {
    const stderr = this.stderr.trim() === "" ? "(empty)" : this.stderr.trim()
    return `Storage conformance child #${this.child} failed before reporting ${this.stage}: ${this.detail}. Check that the child script calls runChild with a layer that opens the shared store, and that its command starts (tsx installed, the path right). Its stderr:\n${stderr}`
  }
}

interface Child {
  readonly index: number
  readonly write: (line: string) => void
  readonly next: () => Promise<Report | { readonly type: "exited"; readonly detail: string }>
  readonly stderr: () => string
}

const startChild = (command: ChildCommand, index: number): Effect.Effect<Child, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const child = spawn(command.command, [...command.args], {
        cwd: command.cwd ?? process.cwd(),
        env: { ...process.env, ...command.env },
        stdio: ["pipe", "pipe", "pipe"]
      })
      let stderr = ""
      child.stderr.setEncoding("utf8")
      child.stderr.on("data", (chunk: string) => {
        if (stderr.length < 64_000) stderr += chunk
      })
      let exited: string | undefined
      const exitWaiters: Array<() => void> = []
      const onGone = (detail: string) => {
        exited ??= detail
        for (const wake of exitWaiters.splice(0)) wake()
      }
      child.on("error", (error) => onGone(`could not start ${command.command}: ${error.message}`))
      child.on("close", (code, signal) => onGone(`it exited with ${signal === null ? `code ${code}` : `signal ${signal}`}`))
      child.stdin.on("error", () => undefined)
      const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
      const next = async (): Promise<Report | { readonly type: "exited"; readonly detail: string }> => {
        for (;;) {
          const line = await lines.next()
          if (line.done === true) {
            if (exited === undefined) await new Promise<void>((resolve) => exitWaiters.push(resolve))
            return { type: "exited", detail: exited ?? "its stdout closed" }
          }
          const report = decodeReport(line.value)
          if (Option.isSome(report)) return report.value
        }
      }
      return {
        process: child,
        handle: {
          index,
          write: (line: string) => {
            child.stdin.write(`${line}\n`)
          },
          next,
          stderr: () => stderr
        } satisfies Child
      }
    }),
    ({ process: child }) =>
      Effect.sync(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
      })
  ).pipe(Effect.map(({ handle }) => handle))

const expectReport = <T extends Report["type"]>(
  child: Child,
  type: T,
  timeout: Duration.DurationInput
): Effect.Effect<Extract<Report, { readonly type: T }>, ChildFailed> =>
  Effect.promise(child.next).pipe(
    Effect.timeoutFail({
      duration: timeout,
      onTimeout: () =>
        new ChildFailed({
          child: child.index,
          stage: type === "ready" ? "ready" : "done",
          detail: `it reported nothing within ${Duration.format(Duration.decode(timeout))}`,
          stderr: child.stderr()
        })
    }),
    Effect.flatMap((report) => {
      if (report.type === type) return Effect.succeed(report as Extract<Report, { readonly type: T }>)
      const detail = report.type === "exited"
        ? report.detail
        : report.type === "done"
        ? `it reported done before ready: ${report.outcome.ok ? "ok" : `${report.outcome.tag}: ${report.outcome.message}`}`
        : `it reported ${report.type} instead of ${type}`
      return Effect.fail(
        new ChildFailed({ child: child.index, stage: type === "ready" ? "ready" : "done", detail, stderr: child.stderr() })
      )
    })
  )

/**
 * Starts one child per order, waits until every child is ready, releases them all with `go`, and
 * returns their outcomes in order. Children still running when the scope closes are killed.
 *
 * @since 0.1.0
 * @category testing
 */
export const runChildren = (
  command: ChildCommand,
  orders: ReadonlyArray<Order>,
  options: { readonly timeout?: Duration.DurationInput } = {}
): Effect.Effect<ReadonlyArray<Outcome>, ChildFailed, Scope.Scope> =>
  Effect.gen(function*() {
    // A safety net, not a synchronisation: starting a TypeScript child on a loaded machine can
    // take tens of seconds, and a hung child must still fail the check rather than the run.
    const timeout = options.timeout ?? Duration.minutes(3)
    const children = yield* Effect.forEach(orders, (order, index) =>
      Effect.tap(startChild(command, index), (child) => Effect.sync(() => child.write(JSON.stringify(order)))))
    yield* Effect.forEach(children, (child) => expectReport(child, "ready", timeout), { concurrency: "unbounded" })
    for (const child of children) child.write("go")
    const reports = yield* Effect.forEach(children, (child) => expectReport(child, "done", timeout), {
      concurrency: "unbounded"
    })
    return reports.map((report) => report.outcome)
  })
