import { describePostgres } from "@ratchet/testkit/Postgres"
import { afterAll } from "vitest"
import { postgres } from "./harness.js"
import { lessonsAgentsScenarios } from "./scenarios/lessons-agents.js"

const engine = postgres()
afterAll(engine.cleanup)

await describePostgres("lessons for agents on PostgreSQL", () => lessonsAgentsScenarios(engine))
