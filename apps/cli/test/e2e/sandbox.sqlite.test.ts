import { describe } from "vitest"
import { sqlite } from "./harness.js"
import { sandboxScenarios } from "./scenarios/sandbox.js"

describe("ratchet hooks install and the hosts' sandboxes on SQLite", () => sandboxScenarios(sqlite))
