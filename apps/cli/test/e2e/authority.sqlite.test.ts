import { describe } from "vitest"
import { sqlite } from "./harness.js"
import { authority } from "./scenarios/authority.js"

describe("ratchet end to end on SQLite", () => authority(sqlite))
