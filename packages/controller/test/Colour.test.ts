/**
 * The colour decision, as a hand-written table: every rule in its order of precedence (--no-color,
 * then a non-empty NO_COLOR, then FORCE_COLOR, then the terminal), the values each variable may
 * have, and the combinations where a weaker rule must lose.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Colour from "../src/Colour.js"

type Row = readonly [
  description: string,
  flag: boolean,
  env: { readonly NO_COLOR?: string; readonly FORCE_COLOR?: string; readonly TERM?: string },
  isTTY: boolean,
  colour: boolean
]

const rows: ReadonlyArray<Row> = [
  // the terminal alone
  ["a terminal", false, {}, true, true],
  ["a pipe", false, {}, false, false],
  ["a terminal that is TERM=dumb", false, { TERM: "dumb" }, true, false],
  ["a terminal with another TERM", false, { TERM: "xterm-256color" }, true, true],
  // --no-color beats everything
  ["--no-color on a terminal", true, {}, true, false],
  ["--no-color with FORCE_COLOR=1", true, { FORCE_COLOR: "1" }, true, false],
  ["--no-color with NO_COLOR empty and FORCE_COLOR=3 in a pipe", true, { NO_COLOR: "", FORCE_COLOR: "3" }, false, false],
  // NO_COLOR counts only when it is not empty
  ["NO_COLOR=1 on a terminal", false, { NO_COLOR: "1" }, true, false],
  ["NO_COLOR=0 on a terminal (any non-empty value)", false, { NO_COLOR: "0" }, true, false],
  ["NO_COLOR=false on a terminal (any non-empty value)", false, { NO_COLOR: "false" }, true, false],
  ["NO_COLOR=\" \" on a terminal (a space is not empty)", false, { NO_COLOR: " " }, true, false],
  ["NO_COLOR empty on a terminal: as if unset", false, { NO_COLOR: "" }, true, true],
  ["NO_COLOR empty in a pipe: as if unset", false, { NO_COLOR: "" }, false, false],
  ["NO_COLOR=1 beats FORCE_COLOR=1", false, { NO_COLOR: "1", FORCE_COLOR: "1" }, false, false],
  ["NO_COLOR empty does not stop FORCE_COLOR=1", false, { NO_COLOR: "", FORCE_COLOR: "1" }, false, true],
  // FORCE_COLOR forces in a pipe, and 0 / false turn colour off on a terminal
  ["FORCE_COLOR=1 in a pipe", false, { FORCE_COLOR: "1" }, false, true],
  ["FORCE_COLOR=2 in a pipe", false, { FORCE_COLOR: "2" }, false, true],
  ["FORCE_COLOR=true in a pipe", false, { FORCE_COLOR: "true" }, false, true],
  ["FORCE_COLOR=1 with TERM=dumb", false, { FORCE_COLOR: "1", TERM: "dumb" }, false, true],
  ["FORCE_COLOR=0 on a terminal", false, { FORCE_COLOR: "0" }, true, false],
  ["FORCE_COLOR=false on a terminal", false, { FORCE_COLOR: "false" }, true, false],
  ["FORCE_COLOR=FALSE on a terminal", false, { FORCE_COLOR: "FALSE" }, true, false],
  ["FORCE_COLOR=0 in a pipe", false, { FORCE_COLOR: "0" }, false, false],
  ["FORCE_COLOR empty in a pipe: ignored", false, { FORCE_COLOR: "" }, false, false],
  ["FORCE_COLOR empty on a terminal: ignored", false, { FORCE_COLOR: "" }, true, true]
]

describe("Colour.decide", () => {
  it.each(rows)("%s", (_description, noColorFlag, env, isTTY, colour) => {
    expect(Colour.decide({ noColorFlag, env, isTTY })).toBe(colour)
  })

  it("forStream reads this process's environment and the stream's isTTY", () => {
    const saved = { NO_COLOR: process.env["NO_COLOR"], FORCE_COLOR: process.env["FORCE_COLOR"], TERM: process.env["TERM"] }
    try {
      delete process.env["NO_COLOR"]
      delete process.env["FORCE_COLOR"]
      process.env["TERM"] = "xterm"
      expect(Colour.forStream({ isTTY: true })).toBe(true)
      expect(Colour.forStream({ isTTY: true }, true)).toBe(false)
      expect(Colour.forStream({})).toBe(false)
      process.env["FORCE_COLOR"] = "1"
      expect(Colour.forStream({})).toBe(true)
      process.env["NO_COLOR"] = "1"
      expect(Colour.forStream({})).toBe(false)
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name]
        else process.env[name] = value
      }
    }
  })
})
