/**
 * Claude Code's transcript of a session, read for one answer only: did a tool call of the main
 * agent's current turn run and end without an error? The Stop hook asks it (ADR 0030), because
 * Ratchet's PostToolUse entry matches only the tools the guard judges, so the end of a Read, Grep,
 * Glob, WebFetch or MCP call reaches no hook, and a turn made only of those would otherwise never
 * record `toolUsed`.
 *
 * What the hosts' documents say of the file, and what this module takes from them:
 * - The hooks reference gives every hook `transcript_path` and warns that the file "is written
 *   asynchronously and may lag the in-memory conversation"; the sessions guide says it is JSONL.
 * - The Agent SDK's `getSessionMessages()` reads its entries as `{ type: "user" | "assistant",
 *   message }`, `message` being the raw payload: a Messages API message, whose results of tool
 *   calls are `tool_result` blocks in a user message, `is_error: true` when the call failed or was
 *   refused. The monitoring guide adds that a response is written as one entry per content block,
 *   and that the entry format is internal to Claude Code and may change between versions.
 *
 * So the reading only ever adds `toolUsed`, and only on positive evidence. From the last complete
 * line backwards, an assistant entry is skipped, a user entry made only of `tool_result` blocks is
 * a result (a success unless `is_error` is true), and anything else — the prompt, a hook's
 * feedback, an attachment, a system line, a line this schema does not know, a line that is not
 * JSON — is where the turn may have started, and ends the search. A changed format, a lagging
 * file, a missing or unreadable one therefore lose the flag (as if no read had ended), and never
 * put a call of another turn into this one. A denied or failed call is not a use here: its end is
 * either no end at all (a denial, as before this record existed) or already PostToolUseFailure's.
 *
 * The file is opened without waiting (a FIFO answers nothing rather than hanging the hook), read
 * only when it is a regular file, and only its last {@link maxTailBytes} bytes.
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as fs from "node:fs"
import * as path from "node:path"

/**
 * The most of the file's end that is read. A turn's trailing entries since its last prompt are
 * searched from the end, and the search stops at the first success it finds, so the tail only has
 * to hold the last result; a single result larger than this (a huge Read) is not seen.
 *
 * @since 0.2.0
 * @category constants
 */
export const maxTailBytes = 2 * 1024 * 1024

/**
 * One content block of a tool-result entry: its `is_error` when the host gives it.
 *
 * @since 0.2.0
 * @category schemas
 */
export const ToolResult = Schema.Struct({
  type: Schema.Literal("tool_result"),
  is_error: Schema.optionalWith(Schema.Boolean, { exact: true })
})

/**
 * The entries the search goes through: the agent's own (`assistant`), and a user entry that only
 * carries results of tool calls. Every other field is ignored.
 *
 * @since 0.2.0
 * @category schemas
 */
export const Entry = Schema.Union(
  Schema.Struct({ type: Schema.Literal("assistant") }),
  Schema.Struct({ type: Schema.Literal("user"), message: Schema.Struct({ content: Schema.NonEmptyArray(ToolResult) }) })
)

/**
 * @since 0.2.0
 * @category models
 */
export type Entry = typeof Entry.Type

const decodeEntry = Schema.decodeUnknownEither(Schema.parseJson(Entry))

/**
 * Whether the complete lines of `text` end with a turn in which a tool call ended without an
 * error. `whole` says that `text` starts at the beginning of the file; otherwise its first line is
 * a fragment and is left out. A last line without its newline is still being written, and is left
 * out too.
 *
 * @since 0.2.0
 * @category predicates
 */
export const callEnded = (text: string, whole: boolean): boolean => {
  const lines = text.split("\n")
  // The segment after the last newline is not a complete line (empty when the text ends with one).
  lines.pop()
  const first = whole ? 0 : 1
  for (let i = lines.length - 1; i >= first; i--) {
    const line = lines[i]!
    if (line.trim() === "") continue
    const entry = decodeEntry(line)
    if (Either.isLeft(entry)) return false
    if (entry.right.type === "assistant") continue
    if (entry.right.message.content.some((block) => block.is_error !== true)) return true
  }
  return false
}

/**
 * The last {@link maxTailBytes} bytes of the regular file at `file`, and whether they are all of
 * it; null when it is not an absolute path to a regular file that can be read.
 */
const tail = (file: string): { readonly text: string; readonly whole: boolean } | null => {
  if (!path.isAbsolute(file)) return null
  let fd: number
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
  } catch {
    return null
  }
  try {
    const stat = fs.fstatSync(fd)
    if (!stat.isFile()) return null
    const start = Math.max(0, stat.size - maxTailBytes)
    const buffer = Buffer.alloc(stat.size - start)
    const read = fs.readSync(fd, buffer, 0, buffer.length, start)
    return { text: buffer.toString("utf8", 0, read), whole: start === 0 }
  } catch {
    return null
  } finally {
    fs.closeSync(fd)
  }
}

/**
 * Whether the transcript at `file` shows that a tool call of the current turn ended without an
 * error (see the module's documentation). Never fails: whatever cannot be read tells nothing.
 *
 * @since 0.2.0
 * @category decoding
 */
export const callEndedInTurn = (file: string): Effect.Effect<boolean> =>
  Effect.sync(() => {
    const read = tail(file)
    return read !== null && callEnded(read.text, read.whole)
  }).pipe(Effect.catchAllDefect(() => Effect.succeed(false)))
