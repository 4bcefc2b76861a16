import { describe } from "vitest"
import { sqlite } from "./harness.js"
import { gateScenarios } from "./scenarios/gate.js"

describe("the gate against the action, on SQLite", () => gateScenarios(sqlite))
