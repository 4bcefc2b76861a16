import { describe } from "vitest"
import { sqlite } from "./harness.js"
import { refusals } from "./scenarios/refusals.js"

describe("ratchet end to end on SQLite", () => refusals(sqlite))
