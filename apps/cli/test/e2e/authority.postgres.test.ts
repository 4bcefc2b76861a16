import { describePostgres } from "@ratchet/testkit/Postgres"
import { afterAll } from "vitest"
import { postgres } from "./harness.js"
import { authority } from "./scenarios/authority.js"

const engine = postgres()
afterAll(engine.cleanup)

await describePostgres("ratchet end to end on PostgreSQL", () => authority(engine))
