/**
 * What Ratchet knows of the programs a command line runs: which run other programs (wrappers,
 * shells, interpreters, launchers), how their options are read, which only read their operands,
 * which acts of `ratchet` only a person may do, and which files a program writes.
 *
 * Tables, not rules: `Shell` walks a command line with them. A program missing here is judged as
 * an ordinary program (it runs, it may write what it names); a program that runs text it is given
 * belongs here, or the guard cannot see what it runs.
 *
 * @internal
 */
import type { Word } from "./shellSyntax.js"
import * as Targets from "./shellTargets.js"
import * as WriteTargets from "./writeTargets.js"

/** The last path segment of a word: the program `/usr/bin/env` runs is `env`. */
export const basename = (word: string): string => word.slice(word.lastIndexOf("/") + 1)

// ---------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------

/** One option as read: its name (`-c`, `--eval`) and its value when it takes one. */
export interface Option {
  readonly name: string
  readonly value: Word | null
}

/**
 * Reads the options starting at `from`: `--name=value`, `--name value` and `-x value` when the
 * option takes a value, bundles (`-qec text`: a letter that takes a value takes the rest of the
 * bundle, or the next word). With `plus`, `+o` options are read too (shells). Stops after `--`,
 * or at the first word that is not an option (`-` alone is an operand). Returns the options and
 * the index of the first operand.
 */
export const readOptions = (
  words: ReadonlyArray<Word>,
  from: number,
  valued: ReadonlySet<string>,
  plus = false
): { readonly options: ReadonlyArray<Option>; readonly index: number } => {
  const options: Array<Option> = []
  let i = from
  while (i < words.length) {
    const word = words[i]!
    const text = word.text
    if (text === "--") return { options, index: i + 1 }
    const sign = text[0]
    if ((sign !== "-" && !(plus && sign === "+")) || text.length < 2) break
    if (text.startsWith("--")) {
      const equals = text.indexOf("=")
      if (equals !== -1) options.push({ name: text.slice(0, equals), value: { ...word, text: text.slice(equals + 1) } })
      else if (valued.has(text) && i + 1 < words.length) {
        options.push({ name: text, value: words[i + 1]! })
        i++
      } else options.push({ name: text, value: null })
      i++
      continue
    }
    let next = false
    for (let k = 1; k < text.length; k++) {
      const name = `${sign}${text[k]}`
      if (!valued.has(name)) {
        options.push({ name, value: null })
        continue
      }
      const rest = text.slice(k + 1)
      if (rest !== "") options.push({ name, value: { ...word, text: rest } })
      else if (i + 1 < words.length) {
        options.push({ name, value: words[i + 1]! })
        next = true
      } else options.push({ name, value: null })
      break
    }
    i += next ? 2 : 1
  }
  return { options, index: i }
}

const set = (...items: ReadonlyArray<string>): ReadonlySet<string> => new Set(items)

// ---------------------------------------------------------------------------------------------
// Ratchet and the acts only a person may do
// ---------------------------------------------------------------------------------------------

/**
 * The acts of `ratchet` only a person may do, in their own terminal; `unknown` is a `ratchet`
 * command whose subcommand the text does not say (computed), which may be any of them.
 */
export type Act = "approve" | "approver" | "reopen" | "unblock" | "rewind" | "verify" | "lessons" | "hooks" | "unknown"

/** The subcommands that are person-only acts by themselves. */
const personOnly: ReadonlySet<string> = set("approve", "approver", "reopen", "unblock", "rewind", "verify", "hooks")

/**
 * `lessons` subcommands that are a person's: every control of a lesson, each signed at a terminal
 * (ADR 0031), and asking the evaluator again (an expiry it decides is a change of status, and an
 * agent has no reason to ask for one). Proposing, listing, showing and querying stay an agent's.
 */
const personLessons: ReadonlySet<string> = set("pin", "reject", "supersede", "deprecate", "edit", "compile", "evaluate")

/**
 * Whether a word names the `ratchet` program: `ratchet` by any path or case, its scripts
 * (`ratchet.mjs`), a version (`ratchet@0.2`), the package (`@ratchet/cli`), or the CLI's sources.
 */
export const isRatchetName = (text: string): boolean =>
  /^(?:.*\/)?ratchet(?:@[^/]*)?(?:\.[cm]?[jt]s)?$/i.test(text) || /^@ratchet\/cli(?:@.*)?$/i.test(text) || /(?:^|\/)apps\/cli\/.*\.[cm]?[jt]s$/.test(text)

/** Whether a script operand is standard input by another name (`-`, `/dev/stdin`, `/dev/fd/0`). */
export const isStandardInput = (text: string): boolean => text === "-" || /^\/(dev\/(stdin|fd\/[0-9]+)|proc\/(self|[0-9]+)\/fd\/[0-9]+)$/.test(text)

/** Whether a word may be anything once the shell has read it (an expansion, a glob). */
export const isDynamic = (word: Word): boolean => word.computed || word.globbed

/** The person-only act a subcommand word names (all its brace alternatives), or null. */
const actOfWord = (word: Word, next: Word | undefined): Act | null => {
  if (isDynamic(word)) return "unknown"
  const alternatives = word.braced ? word.text.split(/[{},]/) : [word.text]
  for (const alternative of alternatives) {
    if (personOnly.has(alternative)) return alternative as Act
    if (alternative === "lessons" && next !== undefined && (isDynamic(next) || personLessons.has(next.text))) return "lessons"
  }
  return null
}

/**
 * The act of `ratchet` with these arguments when it is person-only: its subcommand is the first
 * operand, after the global options (`-C <dir>`, `--cwd <dir>` take a value).
 */
export const actOf = (args: ReadonlyArray<Word>): Act | null => {
  const { index } = readOptions(args, 0, set("-C", "--cwd"))
  const subcommand = args[index]
  if (subcommand === undefined) return null
  const operands = args.slice(index + 1)
  const next = operands[readOptions(operands, 0, set()).index]
  return actOfWord(subcommand, next)
}

/** How far after a mention of `ratchet` a person-only subcommand is looked for. */
const window = 6

/**
 * The person-only act a run of tokens mentions: a token naming `ratchet` followed, within a few
 * tokens, by a person-only subcommand (`ratchet approve` inside a Python string, after `-exec`, in a
 * here-document). Judged as if it ran.
 */
export const mentionedAct = (tokens: ReadonlyArray<string>): Act | null => {
  for (let i = 0; i < tokens.length; i++) {
    if (!isRatchetName(tokens[i]!)) continue
    for (let k = i + 1; k <= i + window && k < tokens.length; k++) {
      const token = tokens[k]!
      if (personOnly.has(token)) return token as Act
      if (token === "lessons" && tokens.slice(k + 1, k + 3).some((next) => personLessons.has(next))) return "lessons"
    }
  }
  return null
}

/** A word split into the name-like tokens a mention is looked for in (quotes, operators and braces split). */
export const nameTokens = (text: string): ReadonlyArray<string> => text.split(/[^A-Za-z0-9_.@/-]+/).filter((token) => token !== "")

/** A word split into the tokens a place is looked for in (quotes, operators, `=`, `:` and `,` split). */
export const pathTokens = (text: string): ReadonlyArray<string> => text.match(/[^\s'"`;&|()<>=,:+*?![\]#]+/g) ?? []

/** Whether a token could name a place Ratchet keeps: a path, `~`, a variable, a mention of ratchet. */
export const isPlaceLike = (token: string): boolean => token.includes("/") || token.startsWith("~") || token.includes("$") || /ratchet/i.test(token)

// ---------------------------------------------------------------------------------------------
// Programs that run other programs
// ---------------------------------------------------------------------------------------------

/** Shells: their `-c` text is a command line, their script operand a file, else they read standard input. */
export const shells: ReadonlySet<string> = set("sh", "bash", "rbash", "zsh", "dash", "ksh", "mksh", "pdksh", "ash", "yash", "posh", "fish", "tcsh", "csh")

/** Shell options that take a value. */
export const shellValued: ReadonlySet<string> = set("-o", "+o", "-O", "+O", "--rcfile", "--init-file", "-C", "--init-command")

/**
 * An interpreter: the options that give it code as text, those that take a value, and those after
 * which it runs a module or subcommand by name (a program, not text).
 */
export interface Interpreter {
  readonly code: ReadonlySet<string>
  readonly valued: ReadonlySet<string>
  readonly module: ReadonlySet<string>
}

const interpreter = (code: ReadonlyArray<string>, valued: ReadonlyArray<string> = [], module: ReadonlyArray<string> = []): Interpreter => ({
  code: set(...code),
  valued: set(...code, ...valued, ...module),
  module: set(...module)
})

const python = interpreter(["-c"], ["-W", "-X", "-Q"], ["-m"])

const interpreters: Readonly<Record<string, Interpreter>> = {
  node: interpreter(["-e", "--eval", "-p", "--print"], ["-r", "--require", "--import", "--loader", "--experimental-loader", "-C", "--conditions", "--env-file", "--title"], ["--run"]),
  bun: interpreter(["-e", "--eval", "-p", "--print"], ["-r", "--preload", "--cwd", "--config", "-c"]),
  deno: interpreter([]),
  perl: interpreter(["-e", "-E"], ["-I", "-M", "-m", "-x"]),
  ruby: interpreter(["-e"], ["-r", "-I", "-C", "-E", "-x"]),
  php: interpreter(["-r", "-B", "-R", "-E", "-F"], ["-d", "-c", "-z", "-t", "-f"]),
  lua: interpreter(["-e"], ["-l"]),
  luajit: interpreter(["-e"], ["-l", "-j", "-O", "-b"]),
  Rscript: interpreter(["-e"]),
  R: interpreter(["-e"]),
  julia: interpreter(["-e", "-E", "--eval", "--print"], ["-L", "--load", "-J", "--sysimage", "-t", "--threads", "-p", "--procs"]),
  osascript: interpreter(["-e"], ["-l", "-s"]),
  raku: interpreter(["-e"], ["-I", "-M"]),
  perl6: interpreter(["-e"], ["-I", "-M"]),
  guile: interpreter(["-c", "-e"], ["-l", "-L", "-x"]),
  racket: interpreter(["-e", "--eval"], ["-l", "-t", "-r"]),
  elixir: interpreter(["-e", "--eval"], ["-r", "-pr"]),
  erl: interpreter(["-eval", "-s", "-run"]),
  groovy: interpreter(["-e"]),
  scala: interpreter(["-e"]),
  tclsh: interpreter([]),
  wish: interpreter([]),
  expect: interpreter(["-c"], ["-f"]),
  jshell: interpreter([]),
  irb: interpreter([]),
  gjs: interpreter(["-c", "--command"])
}

/** The interpreter a program name is, if any (`python3.12` is Python). */
export const interpreterOf = (program: string): Interpreter | null =>
  interpreters[program] ?? (/^(?:python[0-9.]*|pypy[0-9.]*)$/.test(program) ? python : program === "nodejs" ? interpreters["node"]! : null)

/**
 * A program that runs another one: the options that take a value, how many operands come before
 * the command it runs, the options whose value is a command line, the options after which it runs
 * nothing (a lookup), the options that make it run a shell, whether it runs a shell reading
 * standard input when given no command, whether its command is one line for `sh -c`, and the
 * options whose value it writes.
 */
export interface Wrapper {
  readonly valued: ReadonlySet<string>
  readonly leading: number
  readonly text: ReadonlySet<string>
  readonly lookup: ReadonlySet<string>
  readonly shell: ReadonlySet<string>
  readonly shellWithout: boolean
  readonly joined: ReadonlySet<string> | "always" | null
  readonly writes: ReadonlySet<string>
}

const wrapper = (valued: ReadonlyArray<string>, more: Partial<{
  leading: number
  text: ReadonlyArray<string>
  lookup: ReadonlyArray<string>
  shell: ReadonlyArray<string>
  shellWithout: boolean
  joined: ReadonlyArray<string> | "always"
  writes: ReadonlyArray<string>
}> = {}): Wrapper => ({
  valued: set(...valued, ...(more.text ?? []), ...(more.writes ?? [])),
  leading: more.leading ?? 0,
  text: set(...(more.text ?? [])),
  lookup: set(...(more.lookup ?? [])),
  shell: set(...(more.shell ?? [])),
  shellWithout: more.shellWithout ?? false,
  joined: more.joined === undefined ? null : more.joined === "always" ? "always" : set(...more.joined),
  writes: set(...(more.writes ?? []))
})

/** Wrappers: programs whose operands are a command they run. */
export const wrappers: Readonly<Record<string, Wrapper>> = {
  sudo: wrapper(["-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-T", "-U", "--user", "--group", "--host", "--prompt", "--close-from", "--chdir", "--role", "--type", "--command-timeout", "--other-user"], {
    shell: ["-s", "-i", "--shell", "--login"],
    lookup: ["-l", "--list", "-v", "--validate", "-V", "--version", "-K", "--remove-timestamp", "-e", "--edit", "-h", "--help"]
  }),
  doas: wrapper(["-u", "-C"], { shell: ["-s"] }),
  pkexec: wrapper(["--user"]),
  env: wrapper(["-u", "--unset", "-C", "--chdir", "-S", "--split-string", "-a", "--argv0"], { text: ["-S", "--split-string"] }),
  command: wrapper([], { lookup: ["-v", "-V"] }),
  exec: wrapper(["-a"]),
  builtin: wrapper([]),
  nohup: wrapper([]),
  setsid: wrapper([]),
  chronic: wrapper([]),
  unbuffer: wrapper([]),
  caffeinate: wrapper(["-t", "-w"]),
  time: wrapper(["-f", "--format"], { writes: ["-o", "--output"] }),
  nice: wrapper(["-n", "--adjustment"]),
  ionice: wrapper(["-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid", "-u", "--uid"], { lookup: ["-p", "--pid", "-P", "--pgid", "-u", "--uid"] }),
  timeout: wrapper(["-s", "--signal", "-k", "--kill-after"], { leading: 1 }),
  stdbuf: wrapper(["-i", "-o", "-e", "--input", "--output", "--error"]),
  flock: wrapper(["-w", "--timeout", "-E", "--conflict-exit-code"], { leading: 1, text: ["-c", "--command"] }),
  chroot: wrapper(["--userspec", "--groups"], { leading: 1 }),
  taskset: wrapper([], { leading: 1, lookup: ["-p", "--pid"] }),
  strace: wrapper(["-e", "-p", "-s", "-u", "-E", "-a", "-b", "-I", "-O", "-S", "-X", "-P"], { writes: ["-o"] }),
  ltrace: wrapper(["-e", "-p", "-s", "-u", "-a", "-A", "-D", "-F", "-l", "-n", "-L"], { writes: ["-o"] }),
  valgrind: wrapper([]),
  script: wrapper(["-O", "--log-out", "-I", "--log-in", "-B", "--log-io", "-T", "--log-timing", "-E", "--echo", "-m", "--logging-format"], {
    text: ["-c", "--command"],
    shellWithout: true
  }),
  su: wrapper(["-s", "--shell", "-g", "--group", "-G", "--supp-group", "-w", "--whitelist-environment"], { text: ["-c", "--command", "-C", "--session-command"], shellWithout: true }),
  runuser: wrapper(["-s", "--shell", "-g", "--group", "-G", "--supp-group", "-w", "--whitelist-environment", "-u", "--user"], { text: ["-c", "--command", "--session-command"] }),
  watch: wrapper(["-n", "--interval", "-q", "--equexit"], { joined: "always" }),
  "cross-env": wrapper([]),
  "env-cmd": wrapper(["-f", "--file", "-e", "--environments", "-r", "--rc-file"]),
  dotenv: wrapper(["-e", "-v", "-c", "-p"]),
  "xvfb-run": wrapper(["-n", "--server-num", "-s", "--server-args", "-f", "--auth-file", "-e", "--error-file", "-p", "--xauth-protocol", "-l"]),
  nsenter: wrapper(["-t", "--target", "-S", "--setuid", "-G", "--setgid", "-r", "--root", "-w", "--wd"]),
  unshare: wrapper([]),
  setpriv: wrapper([]),
  prlimit: wrapper(["-p", "--pid"], { lookup: ["-p", "--pid"] }),
  "systemd-run": wrapper(["-p", "--property", "-u", "--unit", "-E", "--setenv", "--uid", "--gid", "-M", "--machine", "--slice", "-H", "--host", "--description"]),
  torsocks: wrapper([]),
  proxychains: wrapper(["-f"]),
  proxychains4: wrapper(["-f"]),
  catchsegv: wrapper([]),
  tini: wrapper([]),
  "dumb-init": wrapper([]),
  busybox: wrapper([]),
  toybox: wrapper([])
}

/** Launchers of a package's program: `npx`, `npm exec`, `pnpm dlx`, … (after their subcommand). */
export const launcherValued: ReadonlySet<string> = set("-p", "--package", "-c", "--call", "-w", "--workspace", "--node-options", "--registry", "--cache", "--userconfig")

/** Launcher options whose value is a command line (`npx -c 'cmd'`). */
export const launcherText: ReadonlySet<string> = set("-c", "--call")

/** The program a launcher runs, given the package it names (`@ratchet/cli@1` runs `ratchet`). */
export const launchedProgram = (word: string): string =>
  /^@ratchet\/cli(?:@.*)?$/i.test(word) ? "ratchet" : basename(word.replace(/^(@[^/]+\/)?([^@]+)@.*$/, "$1$2"))

/**
 * Programs that run commands given as text or kept elsewhere (a remote host, a terminal
 * multiplexer, a scheduler, a file watcher, an editor, a sandbox): always beyond reading.
 */
export const runners: Readonly<Record<string, string>> = {
  ssh: "runs a command on another host",
  tmux: "runs commands in a terminal multiplexer",
  screen: "runs commands in a terminal multiplexer",
  at: "schedules commands it reads",
  batch: "schedules commands it reads",
  crontab: "installs scheduled commands",
  parallel: "runs commands it composes from its arguments",
  sem: "runs commands it composes from its arguments",
  entr: "runs a command when files change",
  watchexec: "runs a command when files change",
  nodemon: "runs a command when files change",
  chokidar: "runs a command when files change",
  concurrently: "runs command lines given as text",
  socat: "connects programs it starts by name",
  pwsh: "runs PowerShell code",
  powershell: "runs PowerShell code",
  vi: "is an editor that runs commands it reads",
  vim: "is an editor that runs commands it reads",
  nvim: "is an editor that runs commands it reads",
  ex: "is an editor that runs commands it reads",
  view: "is an editor that runs commands it reads",
  ed: "is an editor that runs commands it reads",
  emacs: "is an editor that runs code it reads",
  firejail: "runs a command in a sandbox whose options Ratchet does not read",
  open: "asks the desktop to open or run something, which Ratchet does not see",
  "xdg-open": "asks the desktop to open or run something, which Ratchet does not see",
  xdotool: "types into another program, which Ratchet does not see",
  ydotool: "types into another program, which Ratchet does not see",
  wtype: "types into another program, which Ratchet does not see",
  gdb: "runs commands inside another program",
  lldb: "runs commands inside another program",
  bwrap: "runs a command in a sandbox whose options Ratchet does not read",
  alias: "defines an alias, which can make any later word a program",
  hash: "can bind a command name to any program",
  enable: "can load a shell builtin from a file",
  ".": "runs the shell commands of a file in this shell, which Ratchet does not read",
  source: "runs the shell commands of a file in this shell, which Ratchet does not read"
}

/** Programs that only read their operands (or print them): what they are given is data. */
export const readers: ReadonlySet<string> = set(
  "cat", "ls", "head", "tail", "less", "more", "wc", "stat", "file", "du", "df", "tree", "grep", "egrep", "fgrep", "rg", "ag", "ack",
  "diff", "cmp", "comm", "uniq", "cut", "tr", "nl", "od", "hexdump", "strings", "md5sum", "sha1sum", "sha256sum", "sha512sum",
  "b2sum", "cksum", "realpath", "readlink", "dirname", "basename", "pwd", "echo", "printf", "true", "false", "test", "[", "[[",
  "which", "type", "whereis", "id", "whoami", "date", "printenv", "uname", "hostname", "jq", "column", "fold", "fmt", "cd", "pushd",
  "popd", "git", "sleep", "seq", "expr", "let", "read", "wait", "exit", "return", "shift", "set", "unset", "shopt", "ulimit", "umask",
  "kill", "ps", "pgrep", "lsof", "env", "tac", "rev", "look", "locate", "numfmt", "paste", "join", "tsort", "base64", "base32"
)

/** Variables that choose which program or code runs (`PATH`, `BASH_ENV`, `LD_PRELOAD`, `NODE_OPTIONS`, …). */
export const isProgramVariable = (name: string): boolean =>
  /^(PATH|BASH_ENV|ENV|ZDOTDIR|IFS|SHELLOPTS|BASHOPTS|PROMPT_COMMAND|LD_PRELOAD|LD_AUDIT|LD_LIBRARY_PATH|DYLD_INSERT_LIBRARIES|DYLD_LIBRARY_PATH|NODE_OPTIONS|PERL5OPT|RUBYOPT|PYTHONSTARTUP|PYTHONINSPECT|GIT_SSH|GIT_SSH_COMMAND|GIT_EXTERNAL_DIFF|GIT_PAGER|PAGER|MANPAGER|GIT_EDITOR|EDITOR|VISUAL|GIT_SEQUENCE_EDITOR|GIT_ASKPASS|SSH_ASKPASS|GIT_CONFIG_PARAMETERS|GIT_CONFIG_GLOBAL|GIT_CONFIG_SYSTEM|GIT_EXEC_PATH|GIT_TEMPLATE_DIR|LESSOPEN|LESSCLOSE|BROWSER)$/.test(name) ||
  /^(GIT_CONFIG_(KEY|VALUE)_|BASH_FUNC_|npm_config_)/i.test(name)

/** `git -c` settings (`key` or `key=value`) that never name a program to run; a pager may be `cat` or `less`. */
export const isHarmlessGitConfig = (setting: string): boolean => {
  const equals = setting.indexOf("=")
  const key = equals === -1 ? setting : setting.slice(0, equals)
  if (/^(core\.pager|pager\.[a-z-]+)$/i.test(key)) return equals !== -1 && /^(cat|less|more|false|true|)$/.test(setting.slice(equals + 1))
  return /^(user\.(name|email)|color\..*|core\.(quotepath|autocrlf|filemode|safecrlf|ignorecase)|advice\..*|init\.defaultbranch|(commit|tag)\.gpgsign|gc\.auto|safe\.directory|pull\.rebase|merge\.conflictstyle|diff\.noprefix|log\.showsignature|protocol\.file\.allow)$/i.test(key)
}

// ---------------------------------------------------------------------------------------------
// Writes
// ---------------------------------------------------------------------------------------------

/** The writes and destructive effects of one program with its arguments. */
export interface Effects {
  readonly paths: ReadonlyArray<string>
  readonly unknown: boolean
  readonly destructive: ReadonlyArray<string>
  /** Directories it writes anything below (an archive extracted, a download, a patch, a link's target). */
  readonly trees?: ReadonlyArray<string>
}

const none: Effects = { paths: [], unknown: false, destructive: [] }

/** Programs that write the files their operands name. */
export const operandWriters: ReadonlySet<string> = set("rm", "rmdir", "unlink", "shred", "mv", "cp", "ln", "install", "rsync", "touch", "mkdir", "tee", "truncate", "mkfifo", "chmod", "chown", "chgrp")

const operands = (args: ReadonlyArray<string>): ReadonlyArray<string> => {
  const index = args.indexOf("--")
  const before = index === -1 ? args : args.slice(0, index)
  const after = index === -1 ? [] : args.slice(index + 1)
  return [...before.filter((word) => !word.startsWith("-")), ...after]
}

const hasFlag = (args: ReadonlyArray<string>, short: string, long: ReadonlyArray<string>): boolean =>
  args.some((word) => long.includes(word) || (/^-[A-Za-z]+$/.test(word) && word.includes(short)))

/** What a sed script does beyond printing: runs commands (`e`, `s///e`) or writes files (`w`). */
const sedScript = (script: string): { readonly runs: boolean; readonly writes: boolean } => {
  let runs = false
  let writes = false
  for (const part of script.split(/[;\n]/)) {
    const command = part.replace(/^[\s{}!]*(?:(?:\d+|\$|\/(?:[^/\\]|\\.)*\/)\s*(?:,\s*(?:\d+|\$|\/(?:[^/\\]|\\.)*\/))?\s*!?\s*)?/, "")
    if (/^e(\s|$)/.test(command)) runs = true
    if (/^[wW]\s/.test(command)) writes = true
    const substitution = /^s(.)/.exec(command)
    if (substitution !== null) {
      const delimiter = substitution[1]!
      let at = 2
      for (let parts = 0; parts < 2 && at < command.length; at++) {
        if (command[at] === "\\") at++
        else if (command[at] === delimiter) parts++
      }
      const flags = command.slice(at).trim()
      if (/^[^\s]*e/.test(flags)) runs = true
      if (/^[^\s]*w/.test(flags)) writes = true
    }
  }
  return { runs, writes }
}

/** Whether a sed invocation runs commands from its script. */
export const sedRuns = (args: ReadonlyArray<string>): boolean => sedScripts(args).some((script) => sedScript(script).runs)

const sedScripts = (args: ReadonlyArray<string>): ReadonlyArray<string> => {
  const given = args.flatMap((word, index) => (index > 0 && (args[index - 1] === "-e" || args[index - 1] === "--expression") ? [word] : word.startsWith("--expression=") ? [word.slice(13)] : []))
  if (given.length > 0 || args.some((word) => word === "-f" || word.startsWith("--file"))) return given
  const first = operands(args.filter((word) => !/^-[A-Za-z]*[lf]$/.test(word)))[0]
  return first === undefined ? [] : [first]
}

/** Whether an awk program runs commands (`system`, pipes) or writes files (`print > file`). */
export const awkProgram = (program: string): { readonly runs: boolean; readonly writes: boolean } => ({
  runs: /\bsystem\s*\(|\|/.test(program),
  writes: /\bprintf?\b[^;{}]*>/.test(program)
})

/** The writes and destructive effects of one program with its arguments. */
export const effectsOf = (words: ReadonlyArray<string>): Effects => {
  const program = words[0] === undefined ? "" : basename(words[0])
  const args = words.slice(1)
  const text = words.join(" ")
  const targets = Targets.targetsOf(program, args)
  if (targets !== null) return { paths: targets.paths, unknown: false, destructive: [], trees: targets.trees }
  switch (program) {
    case "rm":
    case "rmdir":
    case "unlink":
    case "shred": {
      const recursive = hasFlag(args, "r", ["--recursive"]) || hasFlag(args, "R", [])
      const force = hasFlag(args, "f", ["--force"])
      return { paths: operands(args), unknown: false, destructive: recursive && force || program === "shred" ? [`${text} deletes without asking`] : [] }
    }
    case "mv":
    case "cp":
    case "install":
    case "rsync": {
      const targets = operands(args)
      const flag = args.findIndex((word) => word === "-t" || word === "--target-directory")
      const target = args.find((word) => word.startsWith("--target-directory="))?.slice("--target-directory=".length) ??
        (flag !== -1 ? args[flag + 1] : targets[targets.length - 1])
      const landed = target === undefined ? [] : WriteTargets.landings(targets.filter((word) => word !== target), target)
      if (program === "mv") return { paths: [...targets, ...landed], unknown: false, destructive: [] }
      const deletes = program === "rsync" && args.some((word) => word.startsWith("--delete"))
      // A tree copied (`cp -r tpl/. .`, `rsync -a tpl/ ./`) writes whatever it holds below the target.
      const tree = program !== "install" && (hasFlag(args, "r", ["--recursive", "--archive"]) || hasFlag(args, "R", []) || hasFlag(args, "a", []))
      const trees = tree && target !== undefined ? [target] : []
      return { paths: target === undefined ? [] : [target, ...landed], unknown: false, destructive: deletes ? [`${text} deletes files at the target`] : [], trees }
    }
    case "touch":
    case "mkdir":
    case "tee":
    case "truncate":
    case "mkfifo":
      return { paths: operands(args).filter((word) => program !== "truncate" || !/^[0-9]+[KMG]?$/.test(word)), unknown: false, destructive: [] }
    case "chmod":
    case "chown":
    case "chgrp": {
      const rest = operands(args)
      return { paths: rest.slice(1), unknown: false, destructive: hasFlag(args, "R", ["--recursive"]) ? [`${text} changes a whole tree`] : [] }
    }
    case "dd": {
      const output = args.find((word) => word.startsWith("of="))
      return { paths: output === undefined ? [] : [output.slice(3)], unknown: false, destructive: output !== undefined && output.startsWith("of=/dev/") ? [`${text} writes a device`] : [] }
    }
    case "sort": {
      const flag = args.findIndex((word) => word === "-o")
      const output = args.find((word) => word.startsWith("--output="))?.slice(9) ?? (flag !== -1 ? args[flag + 1] : undefined)
      return output === undefined ? none : { paths: [output], unknown: false, destructive: [] }
    }
    case "sed": {
      const inPlace = args.some((word) => word.startsWith("-i") || word.startsWith("--in-place") || (/^-[A-Za-z]+$/.test(word) && word.includes("i")))
      const writesFiles = sedScripts(args).some((script) => sedScript(script).writes)
      if (!inPlace) return writesFiles ? { paths: [], unknown: true, destructive: [] } : none
      // The files follow the script (the first operand) unless the script came by -e.
      const scripted = args.some((word) => word === "-e" || word === "--expression" || word.startsWith("-e") || word.startsWith("--expression="))
      const rest = operands(args.filter((_, index) => !(index > 0 && ["-e", "--expression", "-f"].includes(args[index - 1]!))))
      return { paths: scripted ? rest : rest.slice(1), unknown: writesFiles, destructive: [] }
    }
    case "mkfs":
    case "fdisk":
    case "wipefs":
      return { paths: [], unknown: true, destructive: [`${text} rewrites a disk`] }
    case "git":
      return gitEffects(args, text)
    default:
      if (program.startsWith("mkfs.")) return { paths: [], unknown: true, destructive: [`${text} rewrites a disk`] }
      return none
  }
}

/** Options of `git` itself that take a value (`git -C dir status`). */
export const gitValued: ReadonlySet<string> = set("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--exec-path")

const gitEffects = (all: ReadonlyArray<string>, text: string): Effects => {
  let index = 0
  const dirs: Array<string> = []
  while (index < all.length && all[index]!.startsWith("-")) {
    if (all[index] === "-C" && all[index + 1] !== undefined) dirs.push(all[index + 1]!)
    index += gitValued.has(all[index]!) ? 2 : 1
  }
  const subcommand = all[index]
  const args = all.slice(index + 1)
  switch (subcommand) {
    case "reset":
      return { paths: [], unknown: true, destructive: args.includes("--hard") || args.includes("--merge") ? [`${text} discards uncommitted changes`] : [] }
    case "clean":
      // Without -f git refuses to delete anything.
      return hasFlag(args, "f", ["--force"]) ? { paths: [], unknown: true, destructive: [`${text} deletes untracked files`] } : none
    case "checkout":
    case "switch":
    case "restore": {
      // A new branch from here (`checkout -b`, `switch -c`) and the index alone (`restore --staged`) leave the files as they are.
      if (args.some((word) => ["-b", "-B", "-c", "-C", "--orphan"].includes(word)) && !args.includes("--")) return none
      if (subcommand === "restore" && args.includes("--staged") && !args.includes("--worktree") && !args.includes("-W")) return none
      const discards = args.includes("--") || args.includes(".") || args.includes("--force") || hasFlag(args, "f", []) || subcommand === "restore"
      return { paths: [], unknown: true, destructive: discards ? [`${text} overwrites changes in the work tree`] : [] }
    }
    case "push":
      return {
        paths: [],
        unknown: false,
        destructive: args.some((word) => word === "--force" || word === "-f" || word.startsWith("--force-with-lease") || word.startsWith("+") || word === "--delete" || word === "--mirror")
          ? [`${text} rewrites or deletes history on the remote`]
          : []
      }
    case "branch":
      return { paths: [], unknown: false, destructive: args.includes("-D") || (args.includes("--delete") && args.includes("--force")) ? [`${text} deletes a branch that may not be merged`] : [] }
    case "stash":
      if (args[0] === "list" || args[0] === "show") return none
      return { paths: [], unknown: true, destructive: args[0] === "drop" || args[0] === "clear" ? [`${text} drops stashed changes`] : [] }
    case "rm":
    case "mv":
      return { paths: operands(args), unknown: false, destructive: [] }
    case "apply":
    case "am": {
      const targets = Targets.git(dirs, subcommand, args)
      return { paths: targets.paths, unknown: false, destructive: [], trees: targets.trees }
    }
    case "merge":
    case "rebase":
    case "pull":
    case "cherry-pick":
    case "revert":
    case "filter-branch":
      return { paths: [], unknown: true, destructive: subcommand === "filter-branch" ? [`${text} rewrites history`] : [] }
    default:
      return none
  }
}
