import { describe } from "vitest"
import { sqlite } from "./harness.js"
import { display } from "./scenarios/display.js"

describe("ratchet end to end on SQLite", () => display(sqlite))
