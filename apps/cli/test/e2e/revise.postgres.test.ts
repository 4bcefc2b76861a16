import { describePostgres } from "@ratchet/testkit/Postgres"
import { afterAll } from "vitest"
import { postgres } from "./harness.js"
import { reviseScenarios } from "./scenarios/revise.js"

const engine = postgres()
afterAll(engine.cleanup)

await describePostgres("ratchet run --until-verified end to end on PostgreSQL", () => reviseScenarios(engine))
