import { describePostgres } from "@ratchet/testkit/Postgres"
import { afterAll } from "vitest"
import { postgres } from "./harness.js"
import { runScenarios } from "./scenarios/run.js"

const engine = postgres()
afterAll(engine.cleanup)

await describePostgres("ratchet run end to end on PostgreSQL", () => runScenarios(engine))
