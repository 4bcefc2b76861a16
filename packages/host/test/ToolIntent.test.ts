/**
 * Which tool calls open an intent, from a table written by hand (the accepted and the rejected
 * set), and how a call is described: bounded, on one line, whatever the host sent.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import type * as HostEvent from "../src/HostEvent.js"
import * as ToolIntent from "../src/ToolIntent.js"

const call = (tool: string, action: HostEvent.ToolAction): HostEvent.ToolCall => ({ id: "toolu_1", tool, action })
const shell = (command: string) => call("Bash", { _tag: "Shell", command })

describe("ToolIntent.isSideEffect", () => {
  /** (case, call, whether it opens an intent). */
  const table: ReadonlyArray<readonly [string, HostEvent.ToolCall, boolean]> = [
    // writes: a file tool, a shell command naming its target, writing somewhere unnamed, destroying
    ["an Edit", call("Edit", { _tag: "Write", paths: ["src/a.ts"] }), true],
    ["a Write of no path the host named", call("Write", { _tag: "Write", paths: [] }), true],
    ["a redirection", shell("echo hi > notes.txt"), true],
    ["an rm", shell("rm src/old.ts"), true],
    ["sed -i", shell("sed -i 's/a/b/' src/a.ts"), true],
    ["git reset --hard (writes somewhere unnamed)", shell("git reset --hard HEAD~1"), true],
    ["a write nested in sh -c", shell("sh -c 'cp a.txt b.txt'"), true],
    ["a write to a temporary file (still a side effect)", shell("echo x > /tmp/scratch"), true],
    ["code given to an interpreter (it may write anything)", shell("python3 -c 'open(\"a\", \"w\")'"), true],
    ["a shell reading a pipe", shell("echo ZWNobw== | base64 -d | sh"), true],
    // not side effects: reads, searches, other tools, commands naming no write
    ["a Read", call("Read", { _tag: "Read", paths: ["src/a.ts"] }), false],
    ["another tool", call("WebSearch", { _tag: "Other" }), false],
    ["a test run", shell("npm test"), false],
    ["a search", shell("grep -rn TODO src"), false],
    ["ratchet step done itself", shell("ratchet step done t-1234abcd fix --note done"), false],
    ["a pipeline into a reader", shell("cat a.txt | wc -l"), false],
    ["an empty command", shell(""), false]
  ]

  it.each(table)("%s", (_, given, expected) => {
    expect(ToolIntent.isSideEffect(given)).toBe(expected)
  })

  it("both sets are non-empty (a table that accepts everything would prove nothing)", () => {
    expect(table.filter(([, , expected]) => expected).length).toBeGreaterThan(3)
    expect(table.filter(([, , expected]) => !expected).length).toBeGreaterThan(3)
  })

  it("property: a Read or an Other is never a side effect, a Write always is", () => {
    fc.assert(fc.property(fc.array(fc.string(), { maxLength: 5 }), fc.string(), (paths, tool) => {
      expect(ToolIntent.isSideEffect(call(tool, { _tag: "Read", paths }))).toBe(false)
      expect(ToolIntent.isSideEffect(call(tool, { _tag: "Other" }))).toBe(false)
      expect(ToolIntent.isSideEffect(call(tool, { _tag: "Write", paths }))).toBe(true)
    }))
  })

  it("survives hostile and oversized shell text", () => {
    fc.assert(fc.property(fc.string({ maxLength: 2000 }), (text) => {
      expect(typeof ToolIntent.isSideEffect(shell(text))).toBe("boolean")
    }))
    expect(ToolIntent.isSideEffect(shell(`echo ${"$(".repeat(5000)}`))).toBeTypeOf("boolean")
    expect(ToolIntent.isSideEffect(shell(`${"a".repeat(2 * 1024 * 1024)} > out.txt`))).toBeTypeOf("boolean")
  })
})

describe("ToolIntent.describe", () => {
  it("names the tool and what it writes or runs", () => {
    expect(ToolIntent.describe(call("Edit", { _tag: "Write", paths: ["src/a.ts", "src/b.ts"] }))).toBe("Edit: src/a.ts, src/b.ts")
    expect(ToolIntent.describe(shell("echo hi >   notes.txt\nrm x"))).toBe("Bash: echo hi > notes.txt rm x")
    expect(ToolIntent.describe(call("WebSearch", { _tag: "Other" }))).toBe("WebSearch")
    expect(ToolIntent.describe(call(" \n ", { _tag: "Other" }))).toBe("(a tool)")
  })

  // Hundreds of strings up to 5000 characters: seconds alone, far more beside a loaded test run.
  it("property: one line of at most 1000 characters, never empty", { timeout: 180_000 }, () => {
    const text = (maxLength: number) => fc.string({ unit: "binary", maxLength })
    fc.assert(fc.property(text(300), text(5000), fc.array(text(200), { maxLength: 80 }), (tool, command, paths) => {
      expect(ToolIntent.describe(call(tool, { _tag: "Write", paths })).length).toBeLessThanOrEqual(1000)
      const described = ToolIntent.describe(call(tool, { _tag: "Shell", command }))
      expect(described.length).toBeGreaterThan(0)
      expect(described.length).toBeLessThanOrEqual(1000)
      expect(described).not.toMatch(/[\n\r\u2028\u2029]/)
    }))
  })
})
