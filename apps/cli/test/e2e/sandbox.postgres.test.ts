import { describePostgres } from "@ratchet/testkit/Postgres"
import { afterAll } from "vitest"
import { postgres } from "./harness.js"
import { sandboxScenarios } from "./scenarios/sandbox.js"

const engine = postgres()
afterAll(engine.cleanup)

await describePostgres("ratchet hooks install and the hosts' sandboxes on PostgreSQL", () => sandboxScenarios(engine))
