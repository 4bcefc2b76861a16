import { describePostgres } from "@ratchet/testkit/Postgres"
import { afterAll } from "vitest"
import { postgres } from "./harness.js"
import { hookScenarios } from "./scenarios/hook.js"

const engine = postgres()
afterAll(engine.cleanup)

await describePostgres("ratchet hook and hooks on PostgreSQL", () => hookScenarios(engine))
