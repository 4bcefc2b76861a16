import { describe } from "vitest"
import { sqlite } from "./harness.js"
import { hookScenarios } from "./scenarios/hook.js"

describe("ratchet hook and hooks on SQLite", () => hookScenarios(sqlite))
