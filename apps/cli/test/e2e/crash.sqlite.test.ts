import { describe } from "vitest"
import { sqlite } from "./harness.js"
import { crashMatrix } from "./scenarios/crash.js"

describe("the runner killed at every durable boundary, on SQLite", () => crashMatrix(sqlite))
