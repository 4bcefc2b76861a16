/**
 * The DBOS side: a DBOS Transact workflow whose steps are `DBOS.runStep` calls, with DBOS's system
 * database on the same PostgreSQL server and database as ours, in a schema of its own. Each step is
 * checkpointed as DBOS checkpoints every step: its output is recorded once it has run (DBOS writes
 * no record before a step starts); the step's function is a no-op.
 *
 * A round runs one workflow of as many steps as the round has, so the workflow's own start (its
 * status row) and end are spread over the round. DBOS is a process-wide singleton: one suite opens
 * it once. Its admin server is off.
 */
import { DBOS } from "@dbos-inc/dbos-sdk"

/** An open DBOS, with what it runs. */
export interface DbosSide {
  /** Runs one workflow of `steps` steps to its end, as workflow `id`. */
  readonly run: (id: string, steps: number) => Promise<void>
  readonly close: () => Promise<void>
}

const noop = () => Promise.resolve()

const workflow = DBOS.registerWorkflow(async (steps: number) => {
  for (let i = 0; i < steps; i++) await DBOS.runStep(noop, { name: `step-${i}` })
  return steps
}, { name: "benchSteps" })

/** Launches DBOS with its system database at `url`, in `schema`. */
export const open = async (url: string, schema: string): Promise<DbosSide> => {
  DBOS.setConfig({ name: "ratchet-bench", systemDatabaseUrl: url, systemDatabaseSchemaName: schema, runAdminServer: false, logLevel: "error" })
  await DBOS.launch()
  return {
    run: async (id, steps) => {
      const done = await DBOS.withNextWorkflowID(id, () => workflow(steps))
      if (done !== steps) throw new Error(`the DBOS workflow ran ${done} steps instead of ${steps}`)
    },
    close: () => DBOS.shutdown()
  }
}
