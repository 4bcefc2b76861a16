import { describe } from "vitest"
import { sqlite } from "./harness.js"
import { recovery } from "./scenarios/recovery.js"

describe("ratchet end to end on SQLite", () => recovery(sqlite))
