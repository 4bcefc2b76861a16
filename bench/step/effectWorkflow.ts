/**
 * The `@effect/workflow` side: one durable workflow whose activities are the steps, run by the
 * cluster's workflow engine (`ClusterWorkflowEngine`) on a single-node cluster (`SingleRunner`)
 * whose message storage is `SqlMessageStorage` (and runner storage `SqlRunnerStorage`) on its own
 * SQLite file through `@effect/sql-sqlite-node`, the same client our store uses.
 *
 * Each activity is persisted as the engine persists every activity: its request is saved as an
 * entity message and its result as a reply, before the workflow goes on; the activity's effect is
 * a no-op. A round runs one workflow of as many activities as the round has steps (each named
 * after its index, as an activity's name is its identity in the workflow), so the workflow's own
 * start and end are spread over the round.
 */
import * as ClusterWorkflowEngine from "@effect/cluster/ClusterWorkflowEngine"
import * as SingleRunner from "@effect/cluster/SingleRunner"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as Activity from "@effect/workflow/Activity"
import * as Workflow from "@effect/workflow/Workflow"
import type * as WorkflowEngine from "@effect/workflow/WorkflowEngine"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Schema from "effect/Schema"

/** The workflow of the pairs: `steps` activities, one after another. */
const Steps = Workflow.make({
  name: "BenchSteps",
  payload: { id: Schema.String, steps: Schema.Number },
  idempotencyKey: ({ id }) => id
})

const StepsLive = Steps.toLayer(({ steps }) =>
  Effect.gen(function*() {
    for (let i = 0; i < steps; i++) {
      yield* Activity.make({ name: `step-${i}`, execute: Effect.void })
    }
  })
)

/** An open engine on `filename`, with what it runs and the pragmas its connection reads back. */
export interface EffectWorkflowSide {
  /** Runs one workflow of `steps` activities to its end. */
  readonly run: (id: string, steps: number) => Promise<void>
  readonly pragmas: Readonly<Record<string, string>>
  readonly close: () => Promise<void>
}

/** Opens the engine on `filename` with the given connection pragmas (e.g. `synchronous`), applied before anything is written. */
export const open = async (filename: string, pragmas: Readonly<Record<string, string>>): Promise<EffectWorkflowSide> => {
  const client = SqliteClient.layer({ filename })
  const applied = Layer.effectDiscard(Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.forEach(Object.entries(pragmas), ([name, value]) => sql.unsafe(`PRAGMA ${name} = ${value}`), { discard: true })
  )).pipe(Layer.provideMerge(client))
  const engine = StepsLive.pipe(
    Layer.provideMerge(ClusterWorkflowEngine.layer),
    Layer.provideMerge(SingleRunner.layer()),
    Layer.provideMerge(applied)
  )
  const runtime = ManagedRuntime.make(engine)
  const readBack = await runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.forEach(["journal_mode", "synchronous", "busy_timeout"], (name) =>
      Effect.map(sql.unsafe<Record<string, unknown>>(`PRAGMA ${name}`), (rows) => [name, String(Object.values(rows[0] ?? {})[0])] as const))))
  return {
    run: (id, steps) => runtime.runPromise(Steps.execute({ id, steps }) as Effect.Effect<void, never, WorkflowEngine.WorkflowEngine>),
    pragmas: Object.fromEntries(readBack),
    close: () => runtime.dispose()
  }
}
