import { describe } from "vitest"
import { sqlite } from "./harness.js"
import { crashMatrix, lostStore } from "./scenarios/crash.js"

describe("the runner killed at every durable boundary, on SQLite", () => crashMatrix(sqlite))
describe("the store lost what it committed, on SQLite", () => lostStore(sqlite))
