/**
 * `ratchet lessons …` parsing, from a table written by hand: which words find which command, the
 * arguments each accepts and refuses (every refusal naming the field), `--status` and `--reason`
 * as they are decoded, accepted and refused.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Args from "../src/Args.js"
import * as Commands from "../src/Commands.js"
import * as LessonCommands from "../src/LessonCommands.js"

/** The command `argv` finds, parsed, or the usage error. */
const parse = (argv: ReadonlyArray<string>) => {
  const found = Commands.find(argv)
  if (found === null) return null
  return { name: found.spec.name, result: Args.parse(found.spec.name, found.rest, found.spec.positionals, found.spec.options) }
}

describe("ratchet lessons: arguments", () => {
  const accepted: ReadonlyArray<readonly [ReadonlyArray<string>, string, Record<string, unknown>]> = [
    [["lessons", "list"], "lessons list", {}],
    [["lessons", "list", "--status", "verified,enforced"], "lessons list", { status: "verified,enforced" }],
    [["lessons", "show", "fp-0123456789abcdef"], "lessons show", { lesson: "fp-0123456789abcdef" }],
    [["lessons", "query", "--task", "t-1a2b3c4d"], "lessons query", { task: "t-1a2b3c4d" }],
    [["lessons", "propose", "--file", "l.yaml", "--id", "tz"], "lessons propose", { file: "l.yaml", id: "tz" }],
    [["lessons", "evaluate"], "lessons evaluate", {}],
    [["lessons", "pin", "tz", "--reason", "we hit it"], "lessons pin", { lesson: "tz", reason: "we hit it" }],
    [["lessons", "reject", "tz"], "lessons reject", { lesson: "tz" }],
    [["lessons", "deprecate", "tz"], "lessons deprecate", { lesson: "tz" }],
    [["lessons", "supersede", "tz", "--by", "tz2"], "lessons supersede", { lesson: "tz", by: "tz2" }],
    [["lessons", "edit", "tz", "--file", "l.yaml"], "lessons edit", { lesson: "tz", file: "l.yaml" }]
  ]
  for (const [argv, name, values] of accepted) {
    it(`accepts ${argv.join(" ")}`, () => {
      const parsed = parse(argv)
      expect(parsed?.name).toBe(name)
      const result = parsed!.result
      if (result instanceof Args.UsageError) throw new Error(result.message)
      expect({ ...result.positionals, ...result.options }).toMatchObject(values)
    })
  }

  const refused: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
    [["lessons", "show"], "lesson"],
    [["lessons", "query"], "--task"],
    [["lessons", "propose"], "--file"],
    [["lessons", "supersede", "tz"], "--by"],
    [["lessons", "edit", "tz"], "--file"],
    [["lessons", "pin"], "lesson"],
    [["lessons", "pin", "tz", "--force"], "--force"],
    [["lessons", "list", "extra"], "extra"]
  ]
  for (const [argv, field] of refused) {
    it(`refuses ${argv.join(" ")}`, () => {
      const result = parse(argv)!.result
      if (!(result instanceof Args.UsageError)) throw new Error(`expected a usage error, got ${JSON.stringify(result)}`)
      expect(`${result.field} ${result.reason}`).toContain(field)
      expect(result.fix).not.toBe("")
    })
  }

  it("no lessons verb is a command of its own", () => {
    expect(parse(["lessons", "promote", "tz"])).toBeNull()
    expect(parse(["lessons", "verify", "tz"])).toBeNull()
  })
})

describe("ratchet lessons: --status and --reason", () => {
  const statuses: ReadonlyArray<readonly [unknown, ReadonlyArray<string> | string]> = [
    [undefined, []],
    ["verified", ["verified"]],
    [" candidate , probationary ", ["candidate", "probationary"]],
    ["", "--status"],
    [",", "--status"],
    ["Verified", "--status"],
    ["verified,live", "\"live\""],
    ["promoted", "\"promoted\""]
  ]
  for (const [raw, expected] of statuses) {
    it(`--status ${JSON.stringify(raw)}`, () => {
      const result = LessonCommands.statusesOf(raw)
      if (typeof expected === "string") {
        if (Either.isRight(result)) throw new Error(`expected a refusal, got ${JSON.stringify(result.right)}`)
        expect(result.left.field).toBe("--status")
        expect(result.left.message).toContain(expected)
      } else expect(result).toEqual(Either.right(expected))
    })
  }

  const parsedWith = (reason: string | undefined): Args.Parsed => ({ positionals: {}, options: reason === undefined ? {} : { reason } }) as unknown as Args.Parsed
  const reasons: ReadonlyArray<readonly [string | undefined, string | null]> = [
    [undefined, "pin by a person at a terminal"],
    ["we hit this every release", "we hit this every release"],
    ["x".repeat(400), "x".repeat(400)],
    ["x".repeat(401), null],
    ["", null],
    ["a\u202eb", null],
    ["a\u0007b", null]
  ]
  for (const [raw, expected] of reasons) {
    it(`--reason ${JSON.stringify(raw?.slice(0, 20))}${(raw?.length ?? 0) > 20 ? "…" : ""}`, () => {
      const result = LessonCommands.reasonOf(parsedWith(raw), "pin")
      if (expected === null) {
        if (Either.isRight(result)) throw new Error("expected a refusal")
        expect(result.left.field).toBe("--reason")
      } else expect(result).toEqual(Either.right(expected))
    })
  }
})
