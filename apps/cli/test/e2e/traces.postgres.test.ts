import { describePostgres } from "@ratchet/testkit/Postgres"
import { afterAll } from "vitest"
import { postgres } from "./harness.js"
import { traces } from "./scenarios/traces.js"

const engine = postgres()
afterAll(engine.cleanup)

await describePostgres("ratchet end to end on PostgreSQL", () => traces(engine))
