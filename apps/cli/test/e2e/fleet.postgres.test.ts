import { describePostgres } from "@ratchet/testkit/Postgres"
import { afterAll } from "vitest"
import { postgres } from "./harness.js"
import { fleet } from "./scenarios/fleet.js"

const engine = postgres()
afterAll(engine.cleanup)

await describePostgres("a fleet of runners on one PostgreSQL store (ADR 0042)", () => fleet(engine))
