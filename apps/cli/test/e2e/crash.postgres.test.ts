import { describePostgres } from "@ratchet/testkit/Postgres"
import { afterAll } from "vitest"
import { postgres } from "./harness.js"
import { crashMatrix, lostStore } from "./scenarios/crash.js"

const engine = postgres()
afterAll(engine.cleanup)

await describePostgres("the runner killed at every durable boundary, on PostgreSQL", () => crashMatrix(engine))
await describePostgres("the store lost what it committed, on PostgreSQL", () => lostStore(engine))
