import { describePostgres } from "@ratchet/testkit/Postgres"
import { afterAll } from "vitest"
import { postgres } from "./harness.js"
import { runPage } from "./scenarios/ui.js"

const engine = postgres()
afterAll(engine.cleanup)

await describePostgres("ratchet ui on PostgreSQL", () => runPage(engine))
