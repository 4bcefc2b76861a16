import { describe } from "vitest"
import { sqlite } from "./harness.js"
import { mcpScenarios } from "./scenarios/mcp.js"

describe("ratchet mcp on SQLite", () => mcpScenarios(sqlite))
