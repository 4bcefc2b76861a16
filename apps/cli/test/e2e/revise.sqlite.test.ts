import { describe } from "vitest"
import { sqlite } from "./harness.js"
import { reviseScenarios } from "./scenarios/revise.js"

describe("ratchet run --until-verified end to end on SQLite", () => reviseScenarios(sqlite))
