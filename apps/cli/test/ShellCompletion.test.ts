/**
 * The completion generator, without a shell (test/e2e/completion.test.ts runs the scripts): every
 * command and option of the table is in each script, the kinds of values are right, a word that
 * would break the scripts' quoting is refused, and `ratchet completion --help` says how to install
 * what the scripts' headers say.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Args from "../src/Args.js"
import type { CommandSpec } from "../src/Command.js"
import * as Commands from "../src/Commands.js"
import * as ShellCompletion from "../src/ShellCompletion.js"

const completion = Commands.commands.find((spec) => spec.name === "completion")!

const spec = (overrides: Partial<CommandSpec>): CommandSpec => ({ ...completion, name: "demo", positionals: [], options: {}, ...overrides })

describe("ShellCompletion.script", () => {
  it.each(ShellCompletion.shells)("%s: every command, with its options and the global ones", (shell) => {
    const text = ShellCompletion.script(shell, Commands.commands, Args.globalOptions)
    for (const command of Commands.commands) {
      expect(text, command.name).toContain(`'${command.name}'`)
      for (const name of Object.keys(command.options)) expect(text).toContain(`--${name}`)
    }
    for (const name of Object.keys(Args.globalOptions)) expect(text).toContain(`--${name}`)
  })

  it("the kinds of values: task ids, files, directories, choices, free text", () => {
    const text = ShellCompletion.script("bash", Commands.commands, Args.globalOptions)
    expect(text).toContain("'status') _ratchet_o='--json --verbose --cwd --no-color --help'; _ratchet_v=' --cwd=@directory -C=@directory '; _ratchet_p='@task' ;;")
    expect(text).toContain("'approve') ")
    expect(text).toMatch(/'approve'\) [^\n]*_ratchet_p='@task restatement,spec,plan'/)
    expect(text).toMatch(/'spec'\) [^\n]* --file=@file /)
    expect(text).toMatch(/'digest'\) [^\n]*_ratchet_p='@file'/)
    expect(text).toMatch(/'task create'\) [^\n]* --goal=@text /)
    expect(text).toMatch(/'hooks install'\) [^\n]* --scope=project,user /)
    expect(text).toContain("    task) _ratchet_s='create list' ;;")
    expect(text).toContain("    brief) _ratchet_s='ask answer restate close' ;;")
  })

  it("refuses a word that would break out of the scripts' quoting", () => {
    const tables: ReadonlyArray<CommandSpec> = [
      spec({ name: "it's" }),
      spec({ options: { "a b": { type: "boolean", description: "x" } } }),
      spec({ options: { mode: { type: "string", choices: ["fast", "very slow"], description: "x" } } }),
      spec({ options: { mode: { type: "string", choices: ["a,b"], description: "x" } } }),
      spec({ positionals: [{ name: "kind", description: "x", required: true, choices: ["'quoted'"] }] }),
      spec({ positionals: [{ name: "kind", description: "x", required: true, choices: ["@task"] }] })
    ]
    for (const table of tables) {
      for (const shell of ShellCompletion.shells) expect(() => ShellCompletion.script(shell, [table], Args.globalOptions), table.name).toThrow(/a completion script can hold/)
    }
  })

  it("the command's help says how to install each script as its header does", () => {
    expect(completion.positionals[0]?.choices).toEqual(ShellCompletion.shells)
    for (const shell of ShellCompletion.shells) {
      const text = ShellCompletion.script(shell, Commands.commands, Args.globalOptions)
      for (const line of ShellCompletion.install[shell].filter((l) => l.startsWith("mkdir") || l.startsWith("ratchet"))) {
        expect(text).toContain(line)
        for (const part of line.split(" && ")) expect(completion.description, part).toContain(part)
      }
    }
  })
})
