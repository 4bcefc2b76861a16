import { describe } from "vitest"
import { sqlite } from "./harness.js"
import { agentFenceScenarios } from "./scenarios/agent-fence.js"

describe("the runner's agent fenced by the run's hooks, end to end on SQLite", () => agentFenceScenarios(sqlite))
