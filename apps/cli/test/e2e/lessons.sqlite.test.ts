import { describe } from "vitest"
import { sqlite } from "./harness.js"
import { lessons } from "./scenarios/lessons.js"

describe("ratchet lessons end to end on SQLite", () => lessons(sqlite))
