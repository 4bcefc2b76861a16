import { describePostgres } from "@ratchet/testkit/Postgres"
import { afterAll } from "vitest"
import { postgres } from "./harness.js"
import { orphanScenarios } from "./scenarios/orphan.js"

const engine = postgres()
afterAll(engine.cleanup)

await describePostgres("a dead or stopped runner's command, on PostgreSQL", () => orphanScenarios(engine))
