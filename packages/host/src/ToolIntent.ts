/**
 * Which tool calls are side effects a step's record must hold, and how one is described there.
 *
 * While a manual step awaits its worker, every side-effecting call of the worker's session opens an
 * intent before it runs (see the controller's `HostSession`). A call is side-effecting when it
 * writes: a file-writing tool, or a shell command that writes named paths, writes somewhere the
 * text does not say (`git reset --hard`), writes below a directory (`tar -x`, `unzip`, `patch`), runs a
 * script from a file, is destructive, or cannot be read completely
 * (it runs programs from text Ratchet cannot see). Reads, searches and commands
 * that name no write (a test run, `ratchet step done` itself) are not: recording them would make
 * every look around an intent a crash could leave undecided.
 *
 * @since 0.1.0
 */
import type * as HostEvent from "./HostEvent.js"
import * as Shell from "./Shell.js"

/**
 * Whether `call` is a side effect worth an intent.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isSideEffect = (call: HostEvent.ToolCall): boolean => {
  switch (call.action._tag) {
    case "Read":
    case "Other":
      return false
    case "Write":
      return true
    case "Shell": {
      const shell = Shell.classify(call.action.command)
      // A command Ratchet cannot read completely may write anything.
      // A script run from a file, an archive unpacked, a link made: they write what the text does not list.
      return shell.writes.paths.length > 0 || shell.writes.unknown || shell.trees.length > 0 || shell.scripts.length > 0 || shell.destructive.length > 0 ||
        shell.opaque.length > 0
    }
  }
}

/** The longest description recorded: enough to recognise the call when settling it. */
const maxDescription = 1000

/**
 * The call as the intent records it, for the person who may have to settle it: the host's tool
 * name and what it writes or runs.
 *
 * @since 0.1.0
 * @category constructors
 */
export const describe = (call: HostEvent.ToolCall): string => {
  const line = (value: string) => value.replace(/\s+/g, " ").trim()
  const tool = line(call.tool.slice(0, 100)) || "(a tool)"
  const detail = line(
    call.action._tag === "Shell"
      ? call.action.command.slice(0, 4 * maxDescription)
      : call.action._tag === "Write" || call.action._tag === "Read"
      ? call.action.paths.slice(0, 50).join(", ")
      : ""
  )
  const text = detail.length === 0 ? tool : `${tool}: ${detail}`
  return text.length > maxDescription ? `${text.slice(0, maxDescription - 1)}…` : text
}
