import { describePostgres } from "@ratchet/testkit/Postgres"
import { afterAll } from "vitest"
import { postgres } from "./harness.js"
import { crashMatrix } from "./scenarios/crash.js"

const engine = postgres()
afterAll(engine.cleanup)

await describePostgres("the runner killed at every durable boundary, on PostgreSQL", () => crashMatrix(engine))
