import { describe } from "vitest"
import { sqlite } from "./harness.js"
import { lessonsAgentsScenarios } from "./scenarios/lessons-agents.js"

describe("lessons for agents on SQLite", () => lessonsAgentsScenarios(sqlite))
