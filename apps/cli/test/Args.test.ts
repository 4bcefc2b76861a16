/**
 * Argument parsing against a hand-written command table: what is accepted and how it decodes, what
 * is refused and that every refusal names the field and the fix; a property that no argv makes
 * `parse` throw; and how `Commands.find` picks the command from the leading words.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as Args from "../src/Args.js"
import * as Commands from "../src/Commands.js"

const positionals: ReadonlyArray<Args.PositionalSpec> = [
  { name: "task", description: "The task id", required: true },
  { name: "subject", description: "What to approve", required: false, choices: ["spec", "plan"] }
]

const options: Readonly<Record<string, Args.OptionSpec>> = {
  goal: { type: "string", required: true, valueName: "<text>", description: "What the task must achieve." },
  blocking: { type: "boolean", description: "Blocks the brief." },
  source: { type: "string", choices: ["user", "code"], valueName: "user|code", description: "Where it comes from." },
  epoch: { type: "string", valueName: "<n>", integer: { min: 1, max: 100 }, description: "The epoch." },
  level: { type: "string", valueName: "<n>", integer: { min: 0, max: 9 }, description: "A level from 0." }
}

const parse = (...args: ReadonlyArray<string>) => Args.parse("demo", args, positionals, options)

const parsed = (...args: ReadonlyArray<string>): Args.Parsed => {
  const result = parse(...args)
  if (result instanceof Args.UsageError) throw new Error(`expected a parse, got ${result.message}`)
  return result
}

const refused = (...args: ReadonlyArray<string>): Args.UsageError => {
  const result = parse(...args)
  if (!(result instanceof Args.UsageError)) throw new Error(`expected a usage error, got ${JSON.stringify(result)}`)
  expect(result.command).toBe("demo")
  expect(result.field).not.toBe("")
  expect(result.reason).not.toBe("")
  expect(result.fix).not.toBe("")
  return result
}

describe("Args.parse accepts", () => {
  it("positionals by name, the optional one left out", () => {
    expect(parsed("t-1", "--goal", "ship it")).toEqual({ positionals: { task: "t-1" }, options: { goal: "ship it" } })
    expect(parsed("t-1", "plan", "--goal", "g").positionals).toEqual({ task: "t-1", subject: "plan" })
  })

  it("options before, between and after positionals", () => {
    expect(parsed("--goal", "g", "t-1", "--blocking", "spec")).toEqual({
      positionals: { task: "t-1", subject: "spec" },
      options: { goal: "g", blocking: true }
    })
  })

  it("booleans as true and leaves absent options out", () => {
    const result = parsed("t-1", "--goal", "g", "--blocking")
    expect(result.options).toEqual({ goal: "g", blocking: true })
    expect("source" in result.options).toBe(false)
  })

  it("--opt=value, including an empty value and one that starts with a dash", () => {
    expect(parsed("t-1", "--goal=a=b").options["goal"]).toBe("a=b")
    expect(parsed("t-1", "--goal=-x").options["goal"]).toBe("-x")
  })

  it("a value in its choices", () => {
    expect(parsed("t-1", "--goal", "g", "--source", "code").options["source"]).toBe("code")
  })

  it("integer options as numbers, at both ends of their range", () => {
    expect(parsed("t-1", "--goal", "g", "--epoch", "1").options["epoch"]).toBe(1)
    expect(parsed("t-1", "--goal", "g", "--epoch=100").options["epoch"]).toBe(100)
    expect(parsed("t-1", "--goal", "g", "--epoch", "007").options["epoch"]).toBe(7)
    expect(parsed("t-1", "--goal", "g", "--level", "0").options["level"]).toBe(0)
  })

  it("-0 as 0, never a negative zero", () => {
    const level = parsed("t-1", "--goal", "g", "--level=-0").options["level"]
    expect(Object.is(level, 0)).toBe(true)
  })

  it("the global options: -C <dir>, -C<dir>, --cwd=<dir>, --json, --verbose", () => {
    expect(parsed("t-1", "--goal", "g", "-C", "../other").options["cwd"]).toBe("../other")
    expect(parsed("t-1", "--goal", "g", "-C../other").options["cwd"]).toBe("../other")
    expect(parsed("t-1", "--goal", "g", "--cwd=/srv/repo").options["cwd"]).toBe("/srv/repo")
    expect(parsed("--json", "--verbose", "t-1", "--goal", "g").options).toEqual({ json: true, verbose: true, goal: "g" })
  })

  it("text that starts with a dash after --", () => {
    expect(parsed("--goal", "g", "--", "-t", "spec").positionals).toEqual({ task: "-t", subject: "spec" })
    expect(parsed("--goal", "g", "--", "--help").positionals).toEqual({ task: "--help" })
  })

  it("a lone dash and empty strings as positionals", () => {
    expect(parsed("-", "--goal", "g").positionals).toEqual({ task: "-" })
    expect(parsed("", "--goal", "g").positionals).toEqual({ task: "" })
  })

  it("an argument of exactly the length limit", () => {
    expect(parsed("t-1", "--goal", "g".repeat(Args.maxArgumentLength)).options["goal"]).toHaveLength(Args.maxArgumentLength)
  })
})

describe("--help", () => {
  it.each([
    [["--help"]],
    [["-h"]],
    [["t-1", "--help"]],
    // Whatever else is wrong with the line: a missing required option or positional, a bad choice…
    [["--source", "nope", "-h"]],
    [["t-1", "a", "b", "c", "--help"]],
    // …an unknown option, a repeated one, an option without its value.
    [["--bogus", "--help"]],
    [["--goal", "a", "--goal", "b", "--help"]],
    [["--help", "--goal"]],
    // Combined with a short option.
    [["-hC", "dir"]]
  ])("short-circuits %j", (args) => {
    expect(parse(...args)).toEqual({ positionals: {}, options: { help: true } })
  })

  it("is text after --", () => {
    expect(refused("--goal", "g", "--", "t-1", "--help", "extra").field).toBe("arguments")
  })
})

describe("Args.parse refuses, naming the field", () => {
  it("an unknown option, and says how to pass text that starts with a dash", () => {
    const error = refused("t-1", "--goal", "g", "--bogus")
    expect(error.field).toBe("--bogus")
    expect(error.reason).toContain("Unknown option")
    const short = refused("t-1", "--goal", "g", "-x")
    expect(short.field).toBe("-x")
    expect(short.fix).toContain("after --")
    expect(short.fix).toContain("ratchet demo --help")
  })

  it("an option that only exists negated", () => {
    expect(refused("t-1", "--goal", "g", "--no-blocking").field).toBe("--no-blocking")
  })

  it("a missing required option, with its description as the fix", () => {
    const error = refused("t-1")
    expect(error.field).toBe("--goal")
    expect(error.reason).toBe("is required.")
    expect(error.fix).toContain("What the task must achieve.")
  })

  it("a string option without its value, at the end or followed by an option", () => {
    expect(refused("t-1", "--goal").field).toBe("--goal")
    expect(refused("t-1", "--source", "--goal", "g").field).toBe("--source")
    expect(refused("t-1", "--goal", "-x").field).toBe("--goal")
  })

  it("a value on a boolean option", () => {
    expect(refused("t-1", "--goal", "g", "--blocking=yes").field).toBe("--blocking")
  })

  it("a missing positional, with its description", () => {
    const error = refused("--goal", "g")
    expect(error.field).toBe("<task>")
    expect(error.reason).toBe("is missing.")
    expect(error.fix).toContain("The task id")
  })

  it("an extra positional, quoted, with the advice to quote text", () => {
    const error = refused("t-1", "spec", "and", "more", "--goal", "g")
    expect(error.field).toBe("arguments")
    expect(error.reason).toContain("\"and\" \"more\"")
    expect(error.fix).toContain("Quote")
  })

  it("a positional outside its choices", () => {
    const error = refused("t-1", "brief", "--goal", "g")
    expect(error.field).toBe("<subject>")
    expect(error.fix).toBe("Use one of: spec | plan.")
  })

  it("an option value outside its choices", () => {
    const error = refused("t-1", "--goal", "g", "--source", "USER")
    expect(error.field).toBe("--source")
    expect(error.reason).toContain("\"USER\" is not one of user, code")
  })

  it.each([
    ["0", "below the range"],
    ["101", "above the range"],
    ["-1", "negative"],
    ["1.5", "a fraction"],
    ["1e3", "an exponent"],
    ["0x10", "hexadecimal"],
    ["+5", "a sign"],
    [" 5", "whitespace"],
    ["5 ", "whitespace"],
    ["ten", "a word"],
    ["99999999999999999", "past 16 digits"],
    ["Infinity", "infinity"]
  ])("an integer option given %j (%s)", (value) => {
    const error = refused("t-1", "--goal", "g", `--epoch=${value}`)
    expect(error.field).toBe("--epoch")
    expect(error.reason).toContain("is not an integer from 1 to 100")
  })

  it.each([
    ["--goal", ["--goal="]],
    ["--goal", ["--goal", "  "]],
    ["--epoch", ["--goal", "g", "--epoch="]]
  ] as const)("a blank %s is refused as empty", (field, args) => {
    const error = refused("t-1", ...args)
    expect(error.field).toBe(field)
    expect(error.reason).toBe("is empty.")
  })

  it("-0 where the range starts at 1", () => {
    expect(refused("t-1", "--goal", "g", "--epoch=-0").field).toBe("--epoch")
  })

  it("a repeated option, string or boolean, instead of keeping the last", () => {
    const error = refused("t-1", "--goal", "a", "--goal", "b")
    expect(error.field).toBe("--goal")
    expect(error.reason).toBe("is given more than once.")
    expect(refused("t-1", "--goal", "g", "--blocking", "--blocking").field).toBe("--blocking")
    expect(refused("t-1", "--goal", "g", "-C", "a", "--cwd=b").field).toBe("--cwd")
  })

  it("a NUL character, naming the option it is the value of, or the argument's position", () => {
    expect(refused("t-1", "--goal", "a\u0000b").field).toBe("--goal")
    expect(refused("t-1", "--goal=a\u0000b").field).toBe("--goal")
    const positional = refused("t\u0000", "--goal", "g")
    expect(positional.field).toBe("argument 1")
    expect(positional.reason).toContain("NUL")
  })

  it("an argument over 65 536 characters, with the advice to use a file", () => {
    const long = "g".repeat(Args.maxArgumentLength + 1)
    const error = refused("t-1", "--goal", long)
    expect(error.field).toBe("--goal")
    expect(error.reason).toContain(`${Args.maxArgumentLength + 1} characters`)
    expect(error.fix).toContain("file")
    expect(refused(long, "--goal", "g").field).toBe("argument 1")
  })

  it("a message of field, reason and fix", () => {
    const error = refused("t-1")
    expect(error.message).toBe(`--goal: is required. What the task must achieve. See: ratchet demo --help`)
  })
})

/** Arguments a person or a fuzzer might type: option-like words, text, NULs, equals signs. */
const argument = fc.oneof(
  fc.constantFrom(
    "--goal",
    "--goal=",
    "--blocking",
    "--blocking=yes",
    "--source",
    "--source=user",
    "--epoch",
    "--epoch=1",
    "--level=-0",
    "--json",
    "--verbose",
    "--help",
    "-h",
    "-C",
    "-Cdir",
    "--cwd",
    "--",
    "-",
    "-x",
    "--no-json",
    "--__proto__",
    "--constructor",
    "--toString=1",
    "spec",
    "plan",
    "t-1",
    "\u0000"
  ),
  fc.string(),
  fc.string({ unit: "binary" }),
  fc.string().map((s) => `--${s}`),
  fc.string().map((s) => `-${s}`),
  fc.tuple(fc.constantFrom("--goal", "--epoch", "--source", "--cwd"), fc.string()).map(([name, value]) => `${name}=${value}`)
)

const wellFormed = (result: Args.Parsed | Args.UsageError): void => {
  if (result instanceof Args.UsageError) {
    expect(result.field.length).toBeGreaterThan(0)
    expect(result.fix.length).toBeGreaterThan(0)
    expect(result.reason.length).toBeGreaterThan(0)
  } else {
    expect(typeof result.positionals).toBe("object")
    expect(typeof result.options).toBe("object")
    for (const value of Object.values(result.options)) {
      expect(["string", "boolean", "number", "undefined"]).toContain(typeof value)
    }
  }
}

describe("Args.parse on any input", () => {
  it("never throws, and returns a parse or a usage error with a field and a fix", () => {
    fc.assert(
      fc.property(fc.array(argument, { maxLength: 12 }), (args) => {
        wellFormed(Args.parse("demo", args, positionals, options))
      }),
      { numRuns: 2000 }
    )
  })

  it("does the same for every real command's table", () => {
    fc.assert(
      fc.property(fc.constantFrom(...Commands.commands), fc.array(argument, { maxLength: 8 }), (spec, args) => {
        wellFormed(Args.parse(spec.name, args, spec.positionals, spec.options))
      }),
      { numRuns: 2000 }
    )
  })

  it("keeps an integer option within its range whenever it parses", () => {
    fc.assert(
      fc.property(fc.string(), (value) => {
        const result = Args.parse("demo", ["t-1", "--goal", "g", `--epoch=${value}`], positionals, options)
        if (!(result instanceof Args.UsageError)) {
          const epoch = result.options["epoch"]
          expect(Number.isSafeInteger(epoch)).toBe(true)
          expect(epoch).toBeGreaterThanOrEqual(1)
          expect(epoch).toBeLessThanOrEqual(100)
        }
      })
    )
  })
})

describe("Commands.find", () => {
  const found = (...argv: ReadonlyArray<string>) => {
    const result = Commands.find(argv)
    return result === null ? null : { name: result.spec.name, rest: result.rest }
  }

  it("rewrites brief <task> <verb> to the brief <verb> command with the task first", () => {
    expect(found("brief", "t-1", "ask", "Why?", "--blocking")).toEqual({ name: "brief ask", rest: ["t-1", "Why?", "--blocking"] })
    expect(found("brief", "t-1", "answer", "Q-1", "UTC", "--source", "user")).toEqual({
      name: "brief answer",
      rest: ["t-1", "Q-1", "UTC", "--source", "user"]
    })
    expect(found("brief", "t-1", "restate", "One sentence.")).toEqual({ name: "brief restate", rest: ["t-1", "One sentence."] })
    expect(found("brief", "t-1", "close")).toEqual({ name: "brief close", rest: ["t-1"] })
  })

  it("takes a task id that is also a verb as the task", () => {
    expect(found("brief", "ask", "ask", "Why?")).toEqual({ name: "brief ask", rest: ["ask", "Why?"] })
  })

  it("finds brief <verb> without a task, leaving the missing task to the parser", () => {
    expect(found("brief", "close")).toEqual({ name: "brief close", rest: [] })
  })

  it("finds two-word commands", () => {
    expect(found("lease", "show", "t-1")).toEqual({ name: "lease show", rest: ["t-1"] })
    expect(found("lease", "heartbeat", "t-1", "--epoch", "2")).toEqual({ name: "lease heartbeat", rest: ["t-1", "--epoch", "2"] })
    expect(found("task", "create", "--goal", "g")).toEqual({ name: "task create", rest: ["--goal", "g"] })
    expect(found("task", "list")).toEqual({ name: "task list", rest: [] })
  })

  it("finds one-word commands, with or without arguments", () => {
    expect(found("status")).toEqual({ name: "status", rest: [] })
    expect(found("status", "t-1", "--json")).toEqual({ name: "status", rest: ["t-1", "--json"] })
    expect(found("approve", "t-1", "spec")).toEqual({ name: "approve", rest: ["t-1", "spec"] })
    expect(found("init", "-C", "dir")).toEqual({ name: "init", rest: ["-C", "dir"] })
  })

  it("finds every command in the table by its own name", () => {
    for (const spec of Commands.commands) {
      const words = spec.name.split(" ")
      const argv = words[0] === "brief" ? ["brief", "t-1", ...words.slice(1)] : words
      expect(Commands.find(argv)?.spec).toBe(spec)
    }
  })

  it.each([
    [[]],
    [["statsu"]],
    [["lease"]],
    [["lease", "t-1"]],
    [["task"]],
    [["brief"]],
    [["brief", "t-1"]],
    [["brief", "t-1", "bogus"]],
    [["brief", "--help"]],
    [["--json"]]
  ])("is null for %j", (argv) => {
    expect(Commands.find(argv)).toBeNull()
  })
})

describe("Args.hoistGlobalOptions", () => {
  // Written by hand: what a person types, and what the parser is then given.
  const moved: ReadonlyArray<readonly [ReadonlyArray<string>, ReadonlyArray<string>]> = [
    [["-C", "../repo", "status"], ["status", "-C", "../repo"]],
    [["--cwd", "../repo", "status", "t-1"], ["status", "t-1", "--cwd", "../repo"]],
    [["--cwd=../repo", "status"], ["status", "--cwd=../repo"]],
    [["--json", "task", "list"], ["task", "list", "--json"]],
    [["--no-color", "--verbose", "status"], ["status", "--no-color", "--verbose"]],
    [["--json", "-C", "/r", "brief", "t-1", "ask", "Why?"], ["brief", "t-1", "ask", "Why?", "--json", "-C", "/r"]],
    // Before a `--`, never after it, so they cannot become a command's arguments.
    [["--json", "step", "run", "--", "npm", "test"], ["step", "run", "--json", "--", "npm", "test"]]
  ]
  const unchanged: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
    ["nothing typed", []],
    ["the command first", ["status", "--json"]],
    ["help first", ["--help", "status"]],
    ["a mistyped option first", ["--jsn", "status"]],
    ["-C without its value", ["-C"]],
    ["-C followed by an option", ["-C", "--json", "status"]],
    ["only global options", ["--json"]],
    ["global options then another option", ["--json", "--help"]],
    ["--cwd= with no directory", ["--cwd=", "status"]],
    ["a single dash", ["-", "status"]]
  ]
  it.each(moved)("moves the leading global options of %j after the command", (typed, parsed) => {
    expect(Args.hoistGlobalOptions(typed)).toEqual(parsed)
  })
  it.each(unchanged)("leaves %s as it is", (_name, typed) => {
    expect(Args.hoistGlobalOptions(typed)).toBe(typed)
  })
})
