import { describePostgres } from "@ratchet/testkit/Postgres"
import { afterAll } from "vitest"
import { postgres } from "./harness.js"
import { manyMachines } from "./scenarios/machines.js"

const engine = postgres()
afterAll(engine.cleanup)

await describePostgres("several runners on one PostgreSQL store", () => manyMachines(engine))
