/**
 * `ratchet completion bash|zsh|fish`, each script run by its shell against a real project whose
 * task ids it completes by running the built CLI:
 * - bash: the script sourced, `_ratchet` called with COMP_WORDS and COMP_CWORD set as bash sets
 *   them, COMPREPLY read back;
 * - zsh: the script sourced with `compadd` and `_files` recording what they are given, and, on a
 *   pseudo-terminal, a TAB typed in an interactive zsh that loaded it from fpath with compinit;
 * - fish: fish's own completion of a command line (`complete -C`).
 * One table of cases (written by hand) runs in every shell, plus every command's options (from the
 * command table). A shell that is not installed is skipped; bash always runs.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { globalOptions } from "../../src/Args.js"
import * as Commands from "../../src/Commands.js"
import { bin, createTask, exec, makeWorld, removeWorlds, sqlite, type World } from "./harness.js"

const installed = (shell: string, probe: ReadonlyArray<string>): boolean => spawnSync(shell, probe, { stdio: "ignore" }).status === 0
const hasZsh = installed("zsh", ["-f", "-c", "zmodload zsh/complist"])
const hasFish = installed("fish", ["--no-config", "-c", "true"])
const hasScript = installed("script", ["-qec", "true", "/dev/null"])

/** A shell word in single quotes (bash, zsh). */
const quoted = (word: string): string => `'${word.replace(/'/g, "'\\''")}'`
/** A string in fish's single quotes. */
const fishQuoted = (text: string): string => `'${text.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`

/** One completion: the words typed (the last is the one being completed), where, and the candidates. */
interface Case {
  readonly name: string
  readonly words: ReadonlyArray<string>
  readonly cwd?: "repo" | "outside"
  readonly expected: ReadonlyArray<string>
}

const firstWords = [...new Set(Commands.commands.map((spec) => spec.name.split(" ")[0] as string))]
const subcommands = (word: string) => Commands.commands.flatMap((spec) => spec.name.startsWith(`${word} `) ? [spec.name.slice(word.length + 1)] : [])
const globals = Object.keys(globalOptions).map((name) => `--${name}`)
const optionsOf = (spec: Commands.CommandSpec) => [...Object.keys(spec.options).map((name) => `--${name}`), ...globals]

let world: World
let taskId: string
/** Where the `ratchet` the scripts call is found: a wrapper around the built CLI. */
let binDir: string
let outside: string
const scripts: Record<string, string> = {}

const env = (): NodeJS.ProcessEnv => {
  const base: NodeJS.ProcessEnv = { ...world.env, PATH: `${binDir}${path.delimiter}${world.env["PATH"] ?? ""}`, HOME: world.root }
  delete base["BASH_ENV"]
  delete base["ENV"]
  return base
}

const cases = (): ReadonlyArray<Case> => [
  { name: "the commands", words: [""], expected: [...firstWords, "help"] },
  { name: "commands by prefix", words: ["st"], expected: firstWords.filter((word) => word.startsWith("st")) },
  { name: "the program's options", words: ["-"], expected: ["--help", "--version"] },
  { name: "a group's subcommands", words: ["task", ""], expected: subcommands("task") },
  { name: "a subcommand by prefix", words: ["task", "l"], expected: ["list"] },
  { name: "task ids where a task goes", words: ["status", ""], expected: [taskId] },
  { name: "task ids by prefix", words: ["status", taskId.slice(0, 4)], expected: [taskId] },
  { name: "task ids of the project named by -C", words: ["status", "-C", world.repo, ""], cwd: "outside", expected: [taskId] },
  { name: "task ids of the project named by --cwd=", words: ["lease", "show", `--cwd=${world.repo}`, ""], cwd: "outside", expected: [taskId] },
  { name: "no task ids outside a project", words: ["status", ""], cwd: "outside", expected: [] },
  { name: "the task before a brief verb", words: ["brief", ""], expected: [taskId] },
  { name: "the brief verbs after the task", words: ["brief", taskId, ""], expected: subcommands("brief") },
  { name: "an option's choices", words: ["brief", taskId, "answer", "Q-1", "UTC", "--source", ""], expected: ["user", "code", "research"] },
  { name: "a positional's choices", words: ["approve", taskId, ""], expected: ["restatement", "spec", "plan"] },
  { name: "a positional's choice by prefix", words: ["approve", taskId, "s"], expected: ["spec"] },
  { name: "the host of hooks install", words: ["hooks", "install", ""], expected: ["claude-code", "codex"] },
  { name: "the host of hooks uninstall by prefix", words: ["hooks", "uninstall", "co"], expected: ["codex"] },
  { name: "a choice after --option=", words: ["hooks", "install", "claude-code", "--scope=u"], expected: ["--scope=user"] },
  { name: "the states gate --to takes", words: ["gate", taskId, "--to", "RUN"], expected: ["RUNNING"] },
  { name: "a command's options", words: ["task", "create", "--"], expected: optionsOf(Commands.commands.find((c) => c.name === "task create")!) },
  {
    name: "options not given yet",
    words: ["task", "create", "--goal", "Ship", "--"],
    expected: optionsOf(Commands.commands.find((c) => c.name === "task create")!).filter((o) => o !== "--goal")
  },
  {
    name: "options once the positionals are given",
    words: ["task", "create", "--json", ""],
    expected: optionsOf(Commands.commands.find((c) => c.name === "task create")!).filter((o) => o !== "--json")
  },
  { name: "help topics", words: ["help", ""], expected: firstWords },
  { name: "help on a group", words: ["help", "lease", ""], expected: subcommands("lease") },
  { name: "help on a brief verb", words: ["help", "brief", ""], expected: subcommands("brief") },
  { name: "the shells", words: ["completion", ""], expected: ["bash", "zsh", "fish"] },
  { name: "nothing for free text", words: ["brief", taskId, "ask", ""], expected: [] },
  { name: "nothing for an option's free text", words: ["log", taskId, "--branch", ""], expected: [] },
  { name: "nothing after -- and the positionals", words: ["run", taskId, "--", ""], expected: [] },
  { name: "nothing for no command", words: ["nonsense", ""], expected: [] },
  // Every command of the table: its options and the global ones, after its words.
  ...Commands.commands.map((spec): Case => {
    const [first = "", ...rest] = spec.name.split(" ")
    return { name: `ratchet ${spec.name} --…`, words: [...(first === "brief" ? ["brief", taskId, ...rest] : [first, ...rest]), "--"], expected: optionsOf(spec) }
  })
]

const sorted = (words: ReadonlyArray<string>) => [...words].sort()

/** Runs `lines` (one case each, printing its candidates and then `<end>`) and splits the output. */
const runCases = async (shell: string, args: ReadonlyArray<string>, script: string, count: number): Promise<ReadonlyArray<ReadonlyArray<string>>> => {
  const file = path.join(world.root, `cases.${shell}`)
  fs.writeFileSync(file, script)
  const result = await exec(shell, [...args, file], { cwd: world.repo, env: env() })
  expect(result.stderr, `${shell} wrote to stderr`).toBe("")
  expect(result.code).toBe(0)
  const outputs = result.stdout.split("<end>\n").slice(0, -1).map((block) => block.split("\n").filter((line) => line !== ""))
  expect(outputs).toHaveLength(count)
  return outputs
}

const where = (c: Case) => (c.cwd === "outside" ? outside : world.repo)

beforeAll(async () => {
  world = await makeWorld(sqlite, { approver: false })
  taskId = await createTask(world, "Make the flaky date test deterministic")
  binDir = path.join(world.root, "bin")
  outside = path.join(world.root, "outside")
  fs.mkdirSync(binDir)
  fs.mkdirSync(outside)
  fs.writeFileSync(path.join(binDir, "ratchet"), `#!/bin/sh\nexec ${quoted(process.execPath)} ${quoted(bin)} "$@"\n`, { mode: 0o755 })
  for (const shell of ["bash", "zsh", "fish"]) {
    const printed = await world.ok(["completion", shell])
    scripts[shell] = path.join(world.root, `ratchet.${shell}`)
    fs.writeFileSync(scripts[shell], printed.stdout)
  }
  // zsh finds a completion function in fpath by the file's name.
  fs.mkdirSync(path.join(world.root, "zfunc"))
  fs.copyFileSync(scripts["zsh"] as string, path.join(world.root, "zfunc", "_ratchet"))
}, 180_000)
afterAll(removeWorlds)

describe("ratchet completion", { timeout: 180_000 }, () => {
  it("prints each shell's script (with --json too), generated from the command table", async () => {
    for (const shell of ["bash", "zsh", "fish"]) {
      const text = fs.readFileSync(scripts[shell] as string, "utf8")
      expect(text).toContain(`ratchet completion ${shell}`)
      // Every command of the table is in it.
      for (const spec of Commands.commands) expect(text, spec.name).toContain(`'${spec.name}'`)
      const json = await world.ok(["completion", shell, "--json"])
      expect(json.json).toEqual({ ok: true, command: "completion", exitCode: 0, shell, script: text })
    }
    const refused = await world.run(["completion", "tcsh"])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain("\"tcsh\" is not one of bash, zsh, fish")
  })

  it("bash: sourcing it registers _ratchet for ratchet", async () => {
    const result = await exec("bash", ["--norc", "--noprofile", "-c", `source ${quoted(scripts["bash"] as string)} && complete -p ratchet`], {
      cwd: world.repo,
      env: env()
    })
    expect(result.stdout.trim()).toBe("complete -F _ratchet ratchet")
  })

  it("bash: COMPREPLY for every case", async () => {
    const all = cases()
    const script = [
      `source ${quoted(scripts["bash"] as string)}`,
      "complete_words() { COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _ratchet; printf '%s\\n' \"${COMPREPLY[@]}\" '<end>'; }",
      ...all.map((c) => `cd ${quoted(where(c))} && complete_words ratchet ${c.words.map(quoted).join(" ")}`)
    ].join("\n")
    const outputs = await runCases("bash", ["--norc", "--noprofile"], script, all.length)
    for (const [index, c] of all.entries()) expect(sorted(outputs[index] ?? []), c.name).toEqual(sorted(c.expected))
  })

  it("bash: --option=value split at the = as bash splits it, files and directories", async () => {
    const spec = world.file("spec-for-bash.md", "---\n---\n")
    const split: ReadonlyArray<readonly [ReadonlyArray<string>, ReadonlyArray<string>]> = [
      // COMP_WORDBREAKS has "=": the candidates replace the "=" itself, or the value after it.
      [["hooks", "install", "claude-code", "--scope", "="], ["=project", "=user"]],
      [["hooks", "install", "claude-code", "--scope", "=", ""], ["project", "user"]],
      [["hooks", "install", "claude-code", "--scope", "=", "p"], ["project"]],
      [["status", `--cwd`, "=", path.join(world.root, "out")], [outside]],
      [["spec", taskId, "--file", spec.slice(0, -3)], [spec]],
      [["digest", spec.slice(0, -3)], [spec]],
      [["status", "-C", path.join(world.root, "out")], [outside]]
    ]
    const script = [
      `source ${quoted(scripts["bash"] as string)}`,
      "complete_words() { COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _ratchet; printf '%s\\n' \"${COMPREPLY[@]}\" '<end>'; }",
      ...split.map(([words]) => `complete_words ratchet ${words.map(quoted).join(" ")} 2>/dev/null`)
    ].join("\n")
    const outputs = await runCases("bash", ["--norc", "--noprofile"], script, split.length)
    for (const [index, [words, expected]] of split.entries()) expect(outputs[index], words.join(" ")).toEqual(expected)
  })

  describe.skipIf(!hasZsh)("zsh", () => {
    it("is valid zsh, and compinit finds it in fpath and registers _ratchet for ratchet", async () => {
      expect(spawnSync("zsh", ["-n", scripts["zsh"] as string]).status).toBe(0)
      const result = await exec("zsh", ["-f", "-c", `fpath=(${quoted(path.join(world.root, "zfunc"))} $fpath); autoload -Uz compinit; compinit -u -D; print -r -- $_comps[ratchet]`], {
        cwd: world.repo,
        env: env()
      })
      expect(result.stdout.trim()).toBe("_ratchet")
    })

    it("what _ratchet hands compadd, for every case", async () => {
      const all = cases()
      const script = [
        "compdef() { : }",
        `source ${quoted(scripts["zsh"] as string)}`,
        // compadd as zsh's own: the candidates that begin with what is typed, after IPREFIX.
        "compadd() { while (( $# )) && [[ $1 != -- ]]; do shift; done; shift; local c; for c in \"$@\"; do [[ $c == ${(b)PREFIX}* ]] && print -r -- \"$IPREFIX$c\"; done; }",
        "_files() { print -r -- \"<_files $*>\"; }",
        "complete_words() { words=(\"$@\"); CURRENT=$#; PREFIX=$words[CURRENT]; IPREFIX=''; _ratchet; print -r -- '<end>'; }",
        ...all.map((c) => `cd ${quoted(where(c))} && complete_words ratchet ${c.words.map(quoted).join(" ")}`)
      ].join("\n")
      const outputs = await runCases("zsh", ["-f"], script, all.length)
      for (const [index, c] of all.entries()) expect(sorted(outputs[index] ?? []), c.name).toEqual(sorted(c.expected))
    })

    it.skipIf(!hasScript)("completes a TAB typed in an interactive zsh", async () => {
      // Typed ahead in one go: zle takes each TAB's completion before the next key. After each
      // TAB, Ctrl-A and `print -r -- MARK: ` turn the completed line into one that prints itself.
      const typed: ReadonlyArray<readonly [string, string]> = [
        ["ratchet ta", "ratchet task "],
        [`ratchet approve ${taskId} sp`, `ratchet approve ${taskId} spec `],
        [`ratchet status ${taskId.slice(0, 4)}`, `ratchet status ${taskId} `],
        ["ratchet hooks install claude-code --scope=u", "ratchet hooks install claude-code --scope=user "],
        [`ratchet spec ${taskId} --file ${world.file("plan-for-zsh.yaml", "steps: []\n").slice(0, -5)}`, `ratchet spec ${taskId} --file ${path.join(world.root, "files", "plan-for-zsh.yaml")} `]
      ]
      const input = [
        `PS1='%% '; fpath=(${quoted(path.join(world.root, "zfunc"))} $fpath); autoload -Uz compinit; compinit -u -D; bindkey -e`,
        ...typed.map(([line]) => `${line}\t\u0001print -r -- MARK: `),
        "exit",
        ""
      ].join("\n")
      const result = await exec("script", ["-qec", "zsh -f -i", "/dev/null"], { cwd: world.repo, env: { ...env(), TERM: "dumb" }, input })
      // print joins its words with single spaces: the completed line, without the space after it.
      const printed = [...result.stdout.replace(/\r/g, "").matchAll(/^MARK: (.*)$/gm)].map((match) => match[1])
      expect(printed).toEqual(typed.map(([, completed]) => completed.trimEnd()))
    })
  })

  describe.skipIf(!hasFish)("fish", () => {
    it("is valid fish", () => {
      expect(spawnSync("fish", ["--no-config", "-n", scripts["fish"] as string]).status).toBe(0)
    })

    it("fish's own completion of the command line, for every case", async () => {
      const all = cases()
      const script = [
        `source ${fishQuoted(scripts["fish"] as string)}`,
        ...all.map((c) => `cd ${fishQuoted(where(c))}; and complete -C ${fishQuoted(["ratchet", ...c.words].join(" "))}; echo '<end>'`)
      ].join("\n")
      const outputs = await runCases("fish", ["--no-config"], script, all.length)
      // A candidate may carry a description after a tab.
      for (const [index, c] of all.entries()) expect(sorted((outputs[index] ?? []).map((line) => line.split("\t")[0] as string)), c.name).toEqual(sorted(c.expected))
    })

    it("files and directories", async () => {
      const spec = world.file("spec-for-fish.md", "---\n---\n")
      const lines: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
        [`ratchet spec ${taskId} --file ${spec.slice(0, -4)}`, [spec]],
        [`ratchet spec ${taskId} --file=${spec.slice(0, -4)}`, [`--file=${spec}`]],
        [`ratchet status -C ${path.join(world.root, "out")}`, [`${outside}/`]]
      ]
      const script = [`source ${fishQuoted(scripts["fish"] as string)}`, ...lines.map(([line]) => `complete -C ${fishQuoted(line)}; echo '<end>'`)].join("\n")
      const outputs = await runCases("fish", ["--no-config"], script, lines.length)
      for (const [index, [line, expected]] of lines.entries()) expect((outputs[index] ?? []).map((l) => l.split("\t")[0]), line).toEqual(expected)
    })
  })
})
