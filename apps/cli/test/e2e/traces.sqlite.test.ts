import { describe } from "vitest"
import { sqlite } from "./harness.js"
import { traces } from "./scenarios/traces.js"

describe("ratchet end to end on SQLite", () => traces(sqlite))
