import { describePostgres } from "@ratchet/testkit/Postgres"
import { afterAll } from "vitest"
import { postgres } from "./harness.js"
import { mcpScenarios } from "./scenarios/mcp.js"

const engine = postgres()
afterAll(engine.cleanup)

await describePostgres("ratchet mcp on PostgreSQL", () => mcpScenarios(engine))
