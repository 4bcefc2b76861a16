/**
 * Help fits the terminal: the width it is wrapped to (COLUMNS, the terminal, 80), and at 80 and 60
 * columns no line of any help is wider, except a line holding one word that cannot be broken.
 * Wrapping loses no word, and an example wrapped with a trailing backslash is still the example.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Commands from "../src/Commands.js"
import * as Help from "../src/Help.js"

/** A line wider than `width` is allowed only when it is one word: nothing there to break at. */
const overlong = (text: string, width: number): ReadonlyArray<string> =>
  text.split("\n").filter((line) => {
    if ([...line].length <= width) return false
    const words = line.trim().replace(/^\$ /, "").replace(/ \\$/, "").match(/(?:"[^"]*"|'[^']*'|[^\s"'])+/g) ?? []
    return words.length > 1
  })

/** The words of a text, ignoring layout and the backslashes that continue an example. */
const words = (text: string): ReadonlyArray<string> => text.split(/\s+/).filter((word) => word !== "" && word !== "\\")

const every = (width: number): ReadonlyArray<readonly [string, string]> => [
  ["ratchet --help", Help.main(width)],
  ...Help.groups.map((word) => [`ratchet help ${word}`, Help.group(word, width)] as const),
  ...Commands.commands.map((spec) => [`ratchet ${spec.name} --help`, Help.command(spec, width)] as const)
]

describe("Help.widthOf", () => {
  it.each([
    ["no COLUMNS, not a terminal", undefined, false, undefined, 80],
    ["no COLUMNS, not a terminal, whatever columns says", undefined, false, 200, 80],
    ["no COLUMNS, a terminal of 132", undefined, true, 132, 132],
    ["no COLUMNS, a terminal of 20", undefined, true, 20, 20],
    ["no COLUMNS, a terminal reporting 0", undefined, true, 0, 80],
    ["no COLUMNS, a terminal reporting 19", undefined, true, 19, 80],
    ["no COLUMNS, a terminal without a size", undefined, true, undefined, 80],
    ["COLUMNS=60 in a pipe", "60", false, undefined, 60],
    ["COLUMNS=60 beats the terminal", "60", true, 132, 60],
    ["COLUMNS with spaces around", " 100 ", false, undefined, 100],
    ["COLUMNS=20, the least", "20", false, undefined, 20],
    ["COLUMNS=1000, the most", "1000", false, undefined, 1000],
    ["COLUMNS=19: ignored", "19", true, 90, 90],
    ["COLUMNS=1001: ignored", "1001", false, undefined, 80],
    ["COLUMNS=0: ignored", "0", false, undefined, 80],
    ["COLUMNS empty: ignored", "", true, 100, 100],
    ["COLUMNS not a number: ignored", "wide", false, undefined, 80],
    ["COLUMNS negative: ignored", "-80", false, undefined, 80],
    ["COLUMNS with a fraction: ignored", "80.5", false, undefined, 80],
    ["COLUMNS in hex: ignored", "0x50", false, undefined, 80]
  ])("%s → %i", (_name, COLUMNS, isTTY, columns, expected) => {
    expect(Help.widthOf({ COLUMNS, isTTY, columns })).toBe(expected)
  })
})

describe("help wrapped to the terminal", () => {
  it.each([80, 60, 40])("at %i columns no line is wider, except one unbreakable word", (width) => {
    for (const [name, text] of every(width)) expect(overlong(text, width), name).toEqual([])
  })

  it("unwrapped, the longest lines are far wider than 80 (what the wrapping is for)", () => {
    const longest = Math.max(...every(Help.unwrapped).flatMap(([, text]) => text.split("\n").map((line) => line.length)))
    expect(longest).toBeGreaterThan(200)
    expect(overlong(Help.main(Help.unwrapped), 80).length).toBeGreaterThan(10)
  })

  it("loses and reorders no word", () => {
    const wide = every(Help.unwrapped)
    for (const width of [80, 60, 40]) {
      for (const [index, [name, text]] of every(width).entries()) expect(words(text), `${name} at ${width}`).toEqual(words(wide[index]![1]))
    }
  })

  it("continues a long example with a backslash, keeping a quoted string whole", () => {
    const spec = Commands.commands.find((c) => c.name === "hooks install")!
    const example = "ratchet hooks install claude-code --command \"/opt/ratchet/bin/ratchet hook claude-code\""
    expect(spec.examples).toContain(example)
    const lines = Help.command(spec, 60).split("\n")
    const start = lines.findIndex((line) => line === "  $ ratchet hooks install claude-code --command \\")
    expect(start).toBeGreaterThan(0)
    expect(lines[start + 1]).toBe("      \"/opt/ratchet/bin/ratchet hook claude-code\"")
    // Pasted into a shell, the backslash and newline vanish: the example as written.
    expect(`${lines[start]}\n${lines[start + 1]}`.replace(/ \\\n\s+/g, " ").replace(/^ {2}\$ /, "")).toBe(example)
  })

  it("lays a table out in two columns, a name too wide for its column above its text", () => {
    const text = Help.main(80)
    expect(text).toMatch(/^ {2}task list {23}List this project's tasks, newest first$/m)
    expect(text).toMatch(/^ {2}task create --goal <text> \[--slug <slug>\]\n {34}Create a task and begin its interview$/m)
    expect(text).toMatch(/^ {2}RATCHET_HOME {18}Where the SQLite store/m)
  })

  it("docs/cli.md is the help at 80 columns", () => {
    expect(Help.reference()).toContain(Help.main(80))
    for (const spec of Commands.commands) expect(Help.reference()).toContain(Help.command(spec, 80))
  })
})
