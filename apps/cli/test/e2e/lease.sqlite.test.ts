import { describe } from "vitest"
import { sqlite } from "./harness.js"
import { lease } from "./scenarios/lease.js"

describe("ratchet end to end on SQLite", () => lease(sqlite))
