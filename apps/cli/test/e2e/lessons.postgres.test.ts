import { describePostgres } from "@ratchet/testkit/Postgres"
import { afterAll } from "vitest"
import { postgres } from "./harness.js"
import { lessons } from "./scenarios/lessons.js"

const engine = postgres()
afterAll(engine.cleanup)

await describePostgres("ratchet lessons end to end on PostgreSQL", () => lessons(engine))
