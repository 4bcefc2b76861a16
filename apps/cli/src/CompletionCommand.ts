/**
 * `ratchet completion bash|zsh|fish`: prints the shell's completion script, made by a generator
 * that only this command loads.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import { globalOptions } from "./Args.js"
import type { CommandSpec, Outcome } from "./Command.js"

/**
 * `ratchet completion`, completing the commands of `table` (the command table it is part of, read
 * when the command runs).
 *
 * @since 0.3.0
 * @category commands
 */
export const completion = (table: () => ReadonlyArray<CommandSpec>): CommandSpec => ({
  name: "completion",
  usage: "ratchet completion bash|zsh|fish",
  summary: "Print the shell completion script for bash, zsh or fish",
  description: [
    "The script completes commands, a group's subcommands, every command's options, the values an option or argument accepts, files and directories where one goes, and task ids where a task goes. It is generated from this version's command table: write it to a file once (and again after upgrading Ratchet) rather than running ratchet completion in every new shell. Everything is completed by the shell itself except task ids, which it reads by running ratchet task list --json in the directory being completed (or -C), so only a TAB where a task goes starts ratchet.",
    "bash (with the bash-completion package, which loads it on first use): mkdir -p ~/.local/share/bash-completion/completions && ratchet completion bash > ~/.local/share/bash-completion/completions/ratchet; without that package, write it anywhere and source it from ~/.bashrc.",
    "zsh: mkdir -p ~/.zfunc && ratchet completion zsh > ~/.zfunc/_ratchet, and put fpath=(~/.zfunc $fpath) in ~/.zshrc before compinit runs.",
    "fish: ratchet completion fish > ~/.config/fish/completions/ratchet.fish.",
    "Open a new shell to use it. With --json: { shell, script }."
  ].join(" "),
  positionals: [{ name: "shell", description: "The shell: bash, zsh or fish", required: true, choices: ["bash", "zsh", "fish"] }],
  options: {},
  examples: [
    "ratchet completion bash > ~/.local/share/bash-completion/completions/ratchet",
    "ratchet completion zsh > ~/.zfunc/_ratchet",
    "ratchet completion fish > ~/.config/fish/completions/ratchet.fish"
  ],
  needs: "standalone",
  run: (parsed) =>
    // Loaded on demand: the generator is bundled apart and imports nothing, so no other command
    // parses it, and the table and the global options are handed to it.
    Effect.map(Effect.promise(() => import("./ShellCompletion.js")), ({ script }): Outcome => {
      const shell = parsed.positionals["shell"] === "zsh" ? "zsh" : parsed.positionals["shell"] === "fish" ? "fish" : "bash"
      const text = script(shell, table(), globalOptions)
      return { exit: 0, json: { shell, script: text }, text }
    })
})
