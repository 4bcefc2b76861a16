import { describePostgres } from "@ratchet/testkit/Postgres"
import { afterAll } from "vitest"
import { postgres } from "./harness.js"
import { verifyScenarios } from "./scenarios/verify.js"

const engine = postgres()
afterAll(engine.cleanup)

await describePostgres("ratchet verify, done and evidence end to end on PostgreSQL", () => verifyScenarios(engine))
