import { describePostgres } from "@ratchet/testkit/Postgres"
import { afterAll } from "vitest"
import { postgres } from "./harness.js"
import { gateScenarios } from "./scenarios/gate.js"

const engine = postgres()
afterAll(engine.cleanup)

await describePostgres("the gate against the action, on PostgreSQL", () => gateScenarios(engine))
