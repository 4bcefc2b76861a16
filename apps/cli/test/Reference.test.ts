/**
 * The help and the reference come from one command table: `docs/cli.md` is exactly
 * `Help.reference()`, every command's help has its usage, its options and a runnable example, and
 * `ratchet --help` lists every command. Every example parses as the command it illustrates.
 */
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import * as Args from "../src/Args.js"
import * as Commands from "../src/Commands.js"
import * as Help from "../src/Help.js"

const referenceFile = fileURLToPath(new URL("../../../docs/cli.md", import.meta.url))

/** Splits one example into words as a POSIX shell would (double quotes only), up to a pipe, `&&` or a redirection. */
const words = (example: string): ReadonlyArray<string> => {
  const result: Array<string> = []
  let current: string | null = null
  let quoted = false
  for (let i = 0; i < example.length; i++) {
    const c = example[i]!
    if (quoted) {
      if (c === "\"") quoted = false
      else current += c
    } else if (c === "\"") {
      quoted = true
      current ??= ""
    } else if (c === " ") {
      if (current !== null) result.push(current)
      current = null
    } else if (c === "|" || c === ">" || (c === "&" && example[i + 1] === "&")) {
      break
    } else {
      current = (current ?? "") + c
    }
  }
  if (current !== null) result.push(current)
  return result
}

describe("docs/cli.md", () => {
  it("is exactly Help.reference()", () => {
    const actual = fs.existsSync(referenceFile) ? fs.readFileSync(referenceFile, "utf8") : "(docs/cli.md is missing)"
    expect(actual, "docs/cli.md differs from the CLI's --help: run `npm run docs:cli` at the repository root and commit the result").toBe(
      Help.reference()
    )
  })
})

describe("each command's help", () => {
  describe.each(Commands.commands.map((spec) => [spec.name, spec] as const))("ratchet %s", (_name, spec) => {
    const help = Help.command(spec, Help.unwrapped)

    it("shows the usage and at least one example line starting with `  $ ratchet`", () => {
      expect(help).toContain(`Usage: ${spec.usage}`)
      expect(help.split("\n").some((line) => line.startsWith("  $ ratchet "))).toBe(true)
    })

    it("names every option, positional and global option", () => {
      for (const name of Object.keys(spec.options)) expect(help).toContain(`--${name}`)
      for (const positional of spec.positionals) expect(help).toContain(`<${positional.name}>`)
      for (const [name, option] of Object.entries(Args.globalOptions)) {
        expect(help).toContain(`--${name}`)
        if (option.short !== undefined) expect(help).toContain(`-${option.short}, --${name}`)
      }
    })

    it("has a usage that starts with its name and shows every required option", () => {
      const [first, ...rest] = spec.name.split(" ")
      const synopsis = spec.usage.replace(/^ratchet /, "")
      expect(synopsis.startsWith(first === "brief" ? `brief <task> ${rest.join(" ")}` : spec.name)).toBe(true)
      for (const [name, option] of Object.entries(spec.options)) {
        if (option.required === true) expect(spec.usage).toContain(`--${name}`)
      }
      for (const option of spec.usage.match(/--[a-z-]+/g) ?? []) {
        expect(Object.keys({ ...Args.globalOptions, ...spec.options })).toContain(option.slice(2))
      }
    })

    it("has examples that run as this command and parse", () => {
      expect(spec.examples.length).toBeGreaterThan(0)
      for (const example of spec.examples) {
        const [program, ...argv] = words(example)
        expect(program).toBe("ratchet")
        const found = Commands.find(argv)
        expect(found?.spec.name, example).toBe(spec.name)
        const parsed = Args.parse(spec.name, found?.rest ?? [], spec.positionals, spec.options)
        expect(parsed instanceof Args.UsageError ? parsed.message : "parses", example).toBe("parses")
      }
    })

    it("has a summary and a description, each one paragraph", () => {
      expect(spec.summary.length).toBeGreaterThan(0)
      expect(spec.summary).not.toContain("\n")
      expect(spec.description.length).toBeGreaterThan(0)
      expect(spec.description).not.toContain("\n")
    })
  })
})

describe("ratchet --help", () => {
  const main = Help.main(Help.unwrapped)

  it("lists every command with its synopsis and summary", () => {
    for (const spec of Commands.commands) {
      const synopsis = spec.usage.replace(/^ratchet /, "")
      const line = main.split("\n").find((l) => l.trimStart().startsWith(`${synopsis} `))
      expect(line, spec.name).toBeDefined()
      expect(line).toContain(spec.summary)
      for (const word of spec.name.split(" ")) expect(line).toContain(word)
    }
  })

  it("lists the exit codes and the environment", () => {
    for (const [code] of Help.exitCodes) expect(main).toMatch(new RegExp(`^  ${code}  `, "m"))
    for (const [name] of Help.environment) expect(main).toContain(name)
  })

  it("ends with a runnable example", () => {
    expect(main.split("\n").some((line) => line.startsWith("  $ ratchet "))).toBe(true)
  })
})

describe("Help.group", () => {
  it("lists exactly the group's commands, for every group", () => {
    const expected: Record<string, ReadonlyArray<string>> = {
      task: ["task create", "task list"],
      brief: ["brief ask", "brief answer", "brief restate", "brief close"],
      step: ["step done"],
      lease: ["lease show", "lease acquire", "lease heartbeat", "lease release", "lease takeover"],
      hooks: ["hooks install", "hooks uninstall"],
      lessons: [
        "lessons list",
        "lessons show",
        "lessons query",
        "lessons propose",
        "lessons evaluate",
        "lessons pin",
        "lessons reject",
        "lessons deprecate",
        "lessons supersede",
        "lessons edit"
      ],
      approver: ["approver init", "approver show", "approver add", "approver remove", "approver list", "approver trust"]
    }
    expect([...Help.groups].sort()).toEqual(Object.keys(expected).sort())
    for (const [word, names] of Object.entries(expected)) {
      const text = Help.group(word, Help.unwrapped)
      expect(text).toContain(`${names.length} commands`)
      for (const name of names) {
        const spec = Commands.commands.find((c) => c.name === name)
        expect(spec).toBeDefined()
        expect(text).toContain(spec?.usage.replace(/^ratchet /, ""))
      }
    }
  })
})
