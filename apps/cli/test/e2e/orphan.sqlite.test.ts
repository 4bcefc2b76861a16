import { describe } from "vitest"
import { sqlite } from "./harness.js"
import { orphanScenarios } from "./scenarios/orphan.js"

describe("a dead or stopped runner's command, on SQLite", () => orphanScenarios(sqlite))
