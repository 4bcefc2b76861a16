import { describePostgres } from "@ratchet/testkit/Postgres"
import { afterAll } from "vitest"
import { postgres } from "./harness.js"
import { agentScenarios } from "./scenarios/agent.js"

const engine = postgres()
afterAll(engine.cleanup)

await describePostgres("ratchet run with agent steps end to end on PostgreSQL", () => agentScenarios(engine))
