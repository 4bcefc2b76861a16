/**
 * The task lifecycle's edge table against a matrix written by hand from the seed's state diagram
 * (seed 004, §3) plus the additions of ADR 0003: the invalidation edges a new spec or plan revision
 * takes (SPEC_APPROVED, PREFLIGHT, PLAN_READY, PLAN_APPROVED → SPEC_READY; PLAN_APPROVED →
 * PLAN_READY) and a cancel from every state that is not terminal (FAILED included).
 *
 * The matrix is never derived from `Task.edges`: all 225 pairs are compared with `Task.isEdge`,
 * the rejected pairs as carefully as the accepted ones, and each legal edge's kind is checked too.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import * as Task from "../src/Task.js"
import { STATES } from "./fixtures.js"

type State = Task.State

/**
 * Cell letters: `.` no edge; F forward; B back (reopen and its exits); P pause/resume;
 * K block/unblock; X fail; I invalidation (ADR 0003); C cancel (ADR 0003).
 */
const MATRIX: Record<State, string> = {
  //              IN IV SR SA PF PR PA RU VE CO RE PS BL FA CA
  INITIALIZING:  ".  F  .  .  .  .  .  .  .  .  .  .  .  .  C",
  INTERVIEWING:  ".  .  F  .  .  .  .  .  .  .  .  P  .  .  C",
  SPEC_READY:    ".  .  .  F  .  .  .  .  .  .  .  .  .  .  C",
  SPEC_APPROVED: ".  .  I  .  F  .  .  .  .  .  .  .  .  .  C",
  PREFLIGHT:     ".  .  I  .  .  F  .  .  .  .  B  .  .  .  C",
  PLAN_READY:    ".  .  I  .  .  .  F  .  .  .  .  .  .  .  C",
  PLAN_APPROVED: ".  .  I  .  .  I  .  F  .  .  .  .  .  .  C",
  RUNNING:       ".  .  .  .  .  .  .  .  F  .  B  P  K  X  C",
  VERIFYING:     ".  .  .  .  .  .  .  .  .  F  B  .  K  X  C",
  COMPLETED:     ".  .  .  .  .  .  .  .  .  .  .  .  .  .  .",
  REOPENED:      ".  B  B  .  .  .  .  .  .  .  .  .  .  .  C",
  PAUSED:        ".  P  .  .  .  .  .  P  .  .  .  .  .  .  C",
  BLOCKED:       ".  .  .  .  .  .  .  K  K  .  B  .  .  .  C",
  FAILED:        ".  .  .  .  .  .  .  .  .  .  B  .  .  .  C",
  CANCELLED:     ".  .  .  .  .  .  .  .  .  .  .  .  .  .  ."
}

const KIND: Record<string, Task.EdgeKind> = {
  F: "forward",
  B: "back",
  P: "pause",
  K: "block",
  X: "fail",
  I: "invalidation",
  C: "cancel"
}

const cell = (from: State, to: State): string => {
  const cells = MATRIX[from].trim().split(/\s+/)
  expect(cells).toHaveLength(15)
  return cells[STATES.indexOf(to as (typeof STATES)[number])]!
}

const PAIRS: ReadonlyArray<readonly [State, State]> = STATES.flatMap((from) => STATES.map((to) => [from, to] as const))

describe("Task states", () => {
  it("are the 15 canonical states of the seed, in order", () => {
    expect(Task.states).toEqual(STATES)
    expect(Task.State.literals).toEqual(STATES)
  })

  it("the State schema accepts exactly the 15 states", () => {
    for (const state of STATES) expect(Schema.is(Task.State)(state)).toBe(true)
    for (const other of ["", "running", "DONE", "RESUME", "BRIEF", null, 1]) {
      expect(Schema.is(Task.State)(other)).toBe(false)
    }
  })

  it("COMPLETED and CANCELLED are the only terminal states", () => {
    expect(Task.terminalStates).toEqual(["COMPLETED", "CANCELLED"])
    const terminal: Record<State, boolean> = {
      INITIALIZING: false,
      INTERVIEWING: false,
      SPEC_READY: false,
      SPEC_APPROVED: false,
      PREFLIGHT: false,
      PLAN_READY: false,
      PLAN_APPROVED: false,
      RUNNING: false,
      VERIFYING: false,
      COMPLETED: true,
      REOPENED: false,
      PAUSED: false,
      BLOCKED: false,
      FAILED: false,
      CANCELLED: true
    }
    for (const state of STATES) expect(Task.isTerminal(state), state).toBe(terminal[state])
  })

  it("maps canonical states to the public stage names of seed 004, §5", () => {
    const stage: Record<State, Task.Stage> = {
      INITIALIZING: "setup",
      INTERVIEWING: "brief",
      SPEC_READY: "contract",
      SPEC_APPROVED: "contract",
      PREFLIGHT: "plan",
      PLAN_READY: "plan",
      PLAN_APPROVED: "plan",
      RUNNING: "impl",
      VERIFYING: "verify",
      COMPLETED: "done",
      REOPENED: "held",
      PAUSED: "held",
      BLOCKED: "held",
      FAILED: "held",
      CANCELLED: "held"
    }
    for (const state of STATES) expect(Task.stageOf(state), state).toBe(stage[state])
  })

  it("caps successors at 5 per task", () => {
    expect(Task.maxSuccessorsPerTask).toBe(5)
  })
})

describe("Task.isEdge against the hand-written 15×15 matrix", () => {
  it("has 44 legal edges in the matrix (a check on the matrix itself)", () => {
    expect(PAIRS.filter(([from, to]) => cell(from, to) !== ".")).toHaveLength(44)
  })

  it.each(PAIRS.map(([from, to]) => ({ from, to, legal: cell(from, to) !== "." })))(
    "$from → $to is legal: $legal",
    ({ from, legal, to }) => {
      expect(Task.isEdge(from, to)).toBe(legal)
    }
  )

  it("nothing leaves a terminal state, and every other state can be cancelled", () => {
    for (const state of STATES) {
      const leaves = STATES.filter((to) => Task.isEdge(state, to))
      if (state === "COMPLETED" || state === "CANCELLED") expect(leaves, state).toEqual([])
      else expect(Task.isEdge(state, "CANCELLED"), state).toBe(true)
    }
  })

  it("has no self-loops", () => {
    for (const state of STATES) expect(Task.isEdge(state, state), state).toBe(false)
  })

  it("keeps the forbidden shortcuts of seed 004, §10 out of the table", () => {
    expect(Task.isEdge("INTERVIEWING", "RUNNING")).toBe(false)
    expect(Task.isEdge("SPEC_READY", "RUNNING")).toBe(false)
    expect(Task.isEdge("CANCELLED", "REOPENED")).toBe(false)
    expect(Task.isEdge("FAILED", "RUNNING")).toBe(false)
    expect(Task.isEdge("RUNNING", "COMPLETED")).toBe(false)
    expect(Task.isEdge("PAUSED", "VERIFYING")).toBe(false)
  })
})

describe("Task.edges", () => {
  it("lists each legal pair exactly once, with the kind the matrix gives it", () => {
    const seen = new Set<string>()
    for (const edge of Task.edges) {
      const key = `${edge.from}→${edge.to}`
      expect(seen.has(key), `duplicate ${key}`).toBe(false)
      seen.add(key)
      const letter = cell(edge.from, edge.to)
      expect(letter, `${key} is not in the matrix`).not.toBe(".")
      expect(edge.kind, key).toBe(KIND[letter])
    }
    expect(Task.edges).toHaveLength(44)
  })

  it("has the five invalidation edges of ADR 0003 and nothing else of that kind", () => {
    expect(
      Task.edges.filter((edge) => edge.kind === "invalidation").map((edge) => `${edge.from}→${edge.to}`).sort()
    ).toEqual([
      "PLAN_APPROVED→PLAN_READY",
      "PLAN_APPROVED→SPEC_READY",
      "PLAN_READY→SPEC_READY",
      "PREFLIGHT→SPEC_READY",
      "SPEC_APPROVED→SPEC_READY"
    ])
  })

  it("has a cancel edge from each of the 13 non-terminal states", () => {
    expect(Task.edges.filter((edge) => edge.kind === "cancel").map((edge) => edge.from).sort()).toEqual(
      STATES.filter((state) => state !== "COMPLETED" && state !== "CANCELLED").slice().sort()
    )
    expect(Task.edges.filter((edge) => edge.to === "CANCELLED").every((edge) => edge.kind === "cancel")).toBe(true)
  })
})
