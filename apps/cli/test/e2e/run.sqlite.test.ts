import { describe } from "vitest"
import { sqlite } from "./harness.js"
import { runScenarios } from "./scenarios/run.js"

describe("ratchet run end to end on SQLite", () => runScenarios(sqlite))
