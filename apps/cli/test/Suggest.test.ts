/**
 * "Did you mean": the edit distance (hand-computed pairs and its properties), which candidates are
 * close enough to suggest, and the usage errors of a mistyped command, subcommand, brief verb,
 * option and choice against the real command table.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as Args from "../src/Args.js"
import * as Commands from "../src/Commands.js"
import * as Mistyped from "../src/Mistyped.js"
import * as Suggest from "../src/Suggest.js"

describe("Suggest.distance", () => {
  it.each([
    ["", "", 0],
    ["", "abc", 3],
    ["abc", "", 3],
    ["list", "list", 0],
    ["lsit", "list", 1], // one swap of neighbours
    ["tsk", "task", 1], // one insertion
    ["taskk", "task", 1], // one deletion
    ["stauts", "status", 1],
    ["aprove", "approve", 1],
    ["jsn", "json", 1],
    ["cerate", "create", 1],
    ["kitten", "sitting", 3],
    ["ca", "abc", 3], // optimal string alignment: a swapped pair is not edited again
    ["no-colour", "no-color", 1],
    ["→é", "é→", 1] // code points, not UTF-16 units
  ])("%j → %j is %i", (a, b, expected) => {
    expect(Suggest.distance(a, b)).toBe(expected)
  })

  it("is symmetric, zero only for equal words, and at most the longer length", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 }), (a, b) => {
        const d = Suggest.distance(a, b)
        expect(Suggest.distance(b, a)).toBe(d)
        expect(d === 0).toBe(a === b)
        expect(d).toBeLessThanOrEqual(Math.max([...a].length, [...b].length))
        expect(d).toBeGreaterThanOrEqual(Math.abs([...a].length - [...b].length))
      })
    )
  })
})

describe("Suggest.closest", () => {
  const commands = ["init", "task", "status", "stats", "step", "spec", "plan", "approve", "approver", "log", "lease", "help"]

  it.each([
    ["tsk", ["task"]],
    ["stauts", ["status", "stats"]], // a tie: both, in the table's order
    ["stat", ["stats", "status"]], // one edit and two: both, the closer first
    ["Status", ["status"]], // only the case differs: that one alone
    ["STATUS", ["status"]],
    ["aprove", ["approve", "approver"]],
    ["appr", ["approve", "approver"]], // a prefix
    ["hepl", ["help"]],
    ["lg", ["log"]], // one edit from a short word
    ["xyzzy", []],
    ["s", []], // one letter is no prefix worth suggesting
    ["", []],
    ["x".repeat(65), []]
  ])("%j → %j", (typed, expected) => {
    expect(Suggest.closest(typed, commands)).toEqual(expected)
  })

  it("never suggests more than two, each from the candidates", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 10 }), fc.array(fc.string({ maxLength: 10 }), { maxLength: 20 }), (typed, candidates) => {
        const suggested = Suggest.closest(typed, candidates)
        expect(suggested.length).toBeLessThanOrEqual(2)
        for (const word of suggested) expect(candidates).toContain(word)
      })
    )
  })

  it("words the sentence", () => {
    expect(Suggest.didYouMean([])).toBe("")
    expect(Suggest.didYouMean(["--json"])).toBe("Did you mean --json?")
    expect(Suggest.didYouMean(["status", "stats"], "ratchet ")).toBe("Did you mean ratchet status or ratchet stats?")
  })
})

describe("Mistyped.unknownCommand, against the command table", () => {
  const refusal = (...argv: ReadonlyArray<string>) => {
    expect(Commands.find(argv)).toBeNull()
    const error = Mistyped.unknownCommand(argv, Commands.commands)
    expect(error.field).toBe("command")
    return error
  }

  it("a mistyped command: the closest, completed with the subcommand typed after it", () => {
    const error = refusal("tsk", "list")
    expect(error.reason).toBe("\"tsk\" is not a ratchet command.")
    expect(error.fix).toBe("Did you mean ratchet task list? See ratchet --help.")
    expect(error.suggestions).toEqual(["task list"])
    expect(refusal("tsk").suggestions).toEqual(["task"])
    expect(refusal("stauts", "t-1").suggestions).toEqual(["status", "stats"])
    expect(refusal("hepl").suggestions).toEqual(["help"])
  })

  it("a command nothing is close to: no suggestion, and no suggestions field", () => {
    const error = refusal("xyzzy")
    expect(error.fix).toBe("See ratchet --help.")
    expect("suggestions" in error).toBe(false)
  })

  it("a mistyped subcommand of a group, and a group without one", () => {
    const error = refusal("task", "lsit")
    expect(error.reason).toBe("\"lsit\" is not a command of ratchet task (create, list).")
    expect(error.fix).toBe("Did you mean ratchet task list? See ratchet help task.")
    expect(error.suggestions).toEqual(["task list"])
    expect(refusal("lease", "aquire", "t-1").suggestions).toEqual(["lease acquire"])
    expect(refusal("approver", "ad").suggestions).toEqual(["approver add"])
    const bare = refusal("lease")
    expect(bare.reason).toBe("ratchet lease needs a command: show, acquire, heartbeat, release, takeover.")
    expect(refusal("task", "--json").reason).toContain("needs a command")
  })

  it("a mistyped brief verb, after the task", () => {
    const error = refusal("brief", "t-1", "aks", "Which timezone?")
    expect(error.reason).toBe("\"aks\" is not a brief verb.")
    expect(error.fix).toContain("Did you mean ratchet brief t-1 ask?")
    expect(error.suggestions).toEqual(["brief ask"])
    expect(refusal("brief", "ask", "Which timezone?").reason).toContain("the task goes before the verb")
  })

  it("an option where the command goes", () => {
    expect(refusal("--json", "task", "list").reason).toContain("the command comes first")
    expect(refusal("--hlep").suggestions).toEqual(["--help"])
  })
})

describe("Args.parse suggests", () => {
  const options: Readonly<Record<string, Args.OptionSpec>> = {
    source: { type: "string", choices: ["user", "code", "research"], valueName: "user|code|research", description: "Where it comes from." },
    blocking: { type: "boolean", description: "Blocks the brief." }
  }
  const positionals: ReadonlyArray<Args.PositionalSpec> = [{ name: "subject", description: "What", required: true, choices: ["restatement", "spec", "plan"] }]
  const refused = (...args: ReadonlyArray<string>): Args.UsageError => {
    const result = Args.parse("demo", args, positionals, options)
    if (!(result instanceof Args.UsageError)) throw new Error(`expected a usage error, got ${JSON.stringify(result)}`)
    return result
  }

  it("the option an unknown one may have meant, a global one too", () => {
    const error = refused("spec", "--blockng")
    expect(error.field).toBe("--blockng")
    expect(error.suggestions).toEqual(["--blocking"])
    expect(error.fix).toMatch(/^Did you mean --blocking\? If "--blockng" is text/)
    expect(refused("spec", "--jsn").suggestions).toEqual(["--json"])
    expect(refused("spec", "--JSON").suggestions).toEqual(["--json"])
    expect(refused("spec", "--no-colour").suggestions).toEqual(["--no-color"])
    expect(refused("spec", "--source=user", "--verbos").suggestions).toEqual(["--verbose"])
  })

  it("a long option typed with one dash", () => {
    expect(refused("spec", "-json").suggestions).toEqual(["--json"])
    expect(refused("spec", "-blocking").suggestions).toEqual(["--blocking"])
  })

  it("nothing for an option close to none", () => {
    const error = refused("spec", "--frobnicate")
    expect("suggestions" in error).toBe(false)
    expect(error.fix).toMatch(/^If "--frobnicate" is text/)
    expect("suggestions" in refused("spec", "-x")).toBe(false)
  })

  it("the choice a wrong value may have meant, for an option and a positional", () => {
    const option = refused("spec", "--source", "usr")
    expect(option.suggestions).toEqual(["user"])
    expect(option.fix).toBe("Did you mean user? Use one of: user | code | research.")
    const positional = refused("spce")
    expect(positional.field).toBe("<subject>")
    expect(positional.suggestions).toEqual(["spec"])
    expect("suggestions" in refused("nothing-like-it")).toBe(false)
  })
})
