import { describe } from "vitest"
import { sqlite } from "./harness.js"
import { verifyScenarios } from "./scenarios/verify.js"

describe("ratchet verify, done and evidence end to end on SQLite", () => verifyScenarios(sqlite))
