import { describe } from "vitest"
import { sqlite } from "./harness.js"
import { lifecycle } from "./scenarios/lifecycle.js"

describe("ratchet end to end on SQLite", () => lifecycle(sqlite))
