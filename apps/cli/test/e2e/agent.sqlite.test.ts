import { describe } from "vitest"
import { sqlite } from "./harness.js"
import { agentScenarios } from "./scenarios/agent.js"

describe("ratchet run with agent steps end to end on SQLite", () => agentScenarios(sqlite))
