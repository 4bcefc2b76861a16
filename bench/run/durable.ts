/**
 * Durable steps for the `ratchet run` budget: the runner's steady-state write (see
 * `../step/runnerSteps.ts`) on a SQLite store of its own, with the settings `ratchet run`'s store
 * has (our defaults: WAL, `synchronous=FULL`), in the directory given.
 */
import * as SqliteStore from "@ratchet/storage-sqlite/SqliteStore"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as fs from "node:fs"
import { runnerSteps } from "../step/runnerSteps.js"

export const durableSteps = async (directory: string) => {
  fs.mkdirSync(directory, { recursive: true })
  const runtime = ManagedRuntime.make(SqliteStore.layer({ directory }))
  const steps = runnerSteps()
  await runtime.runPromise(steps.cursor("durable"))
  return {
    /** `count` durable steps, one after another. */
    step: async (count: number) => {
      for (let i = 0; i < count; i++) await runtime.runPromise(steps.step("durable"))
    },
    close: () => runtime.dispose()
  }
}
