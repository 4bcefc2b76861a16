import { describePostgres } from "@ratchet/testkit/Postgres"
import { afterAll } from "vitest"
import { postgres } from "./harness.js"
import { agentFenceScenarios } from "./scenarios/agent-fence.js"

const engine = postgres()
afterAll(engine.cleanup)

await describePostgres("the runner's agent fenced by the run's hooks, end to end on PostgreSQL", () => agentFenceScenarios(engine))
