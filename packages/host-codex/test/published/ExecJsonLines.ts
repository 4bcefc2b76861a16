/**
 * Golden lines of Codex's `exec --json` stream, typed by its TypeScript SDK's published
 * `ThreadEvent` (`@openai/codex-sdk`, pinned in this package's devDependencies): a line that drifts
 * from the published type fails this project's typecheck. `StandInStream.test.ts` holds every line
 * the test kit's stand-in `codex` writes to the shape (keys and value types, recursively) of one of
 * these of the same kind, and this package's decoder to reading each of them as known.
 *
 * One line of each kind the stand-in writes: each item it reports, a finished and a failed turn.
 */
import type { ThreadEvent, Usage } from "@openai/codex-sdk"

const usage: Usage = { input_tokens: 2946, cached_input_tokens: 1024, cache_write_input_tokens: 0, output_tokens: 70, reasoning_output_tokens: 0 }

export const lines: ReadonlyArray<ThreadEvent> = [
  { type: "thread.started", thread_id: "0199a213-81c0-7800-8aa1-bbab2a035a53" },
  { type: "turn.started" },
  { type: "item.completed", item: { id: "item_0", type: "reasoning", text: "**Adding the flag**" } },
  { type: "item.started", item: { id: "item_1", type: "command_execution", command: "npm test", aggregated_output: "", status: "in_progress" } },
  { type: "item.completed", item: { id: "item_1", type: "command_execution", command: "npm test", aggregated_output: "1 passing", exit_code: 0, status: "completed" } },
  { type: "item.completed", item: { id: "item_2", type: "file_change", changes: [{ path: "src/flag.txt", kind: "add" }], status: "completed" } },
  { type: "item.completed", item: { id: "item_4", type: "agent_message", text: "Added the --json flag in src/flag.txt; the tests pass." } },
  { type: "turn.completed", usage },
  { type: "item.completed", item: { id: "item_5", type: "error", message: "The stand-in was asked to fail." } },
  { type: "turn.failed", error: { message: "The stand-in was asked to fail." } }
]
