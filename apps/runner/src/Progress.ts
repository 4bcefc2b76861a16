/**
 * What a person sees while a run works: the step (n of m), its attempt and command, a live tail of
 * its output, the elapsed time of a long step (every few seconds), and how it ended. With `--json`, every progress event is one NDJSON line instead.
 *
 * @since 0.1.0
 */
import type * as Runner from "@ratchet/controller/Runner"

/**
 * @since 0.1.0
 * @category models
 */
export interface Sink {
  readonly progress: (event: Runner.Progress) => void
}

// eslint-disable-next-line no-control-regex
const controls = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g

/** Output as it may be printed on a terminal: control and bidirectional characters made visible. */
const visible = (text: string) => text.replace(controls, (char) => `\\u{${char.codePointAt(0)?.toString(16) ?? ""}}`)

/**
 * Human progress on `stream` (colour when `colour`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const human = (stream: NodeJS.WritableStream, colour: boolean): Sink => {
  const dim = (text: string) => (colour ? `\u001b[2m${text}\u001b[22m` : text)
  const bold = (text: string) => (colour ? `\u001b[1m${text}\u001b[22m` : text)
  const pending = new Map<string, string>()
  const line = (text: string) => stream.write(`${text}\n`)
  return {
    progress: (event) => {
      switch (event.type) {
        case "run":
          line(`${bold(event.started ? "Started" : "Continuing")} run ${event.runId} of ${event.taskId}: ${event.steps} step${event.steps === 1 ? "" : "s"} (lease epoch ${event.epoch})`)
          break
        case "recovered":
          line(`recovered ${event.stepId} attempt ${event.attempt}: ${event.decision}`)
          break
        case "tick":
          line(dim(`… ${event.stepId} attempt ${event.attempt} running for ${Math.round(event.elapsedMs / 1000)} s`))
          break
        case "orphan":
          line(`waiting for ${event.stepId}'s command, still running from a runner that died (process group ${event.pgid})`)
          break
        case "step":
          line(`${bold(`[${event.index + 1}/${event.total}] ${event.stepId}`)} attempt ${event.attempt}${event.command === null ? " (manual)" : `: ${visible(event.command)}`}`)
          break
        case "output": {
          // Whole lines only, so the tail reads cleanly while the command runs.
          const key = `${event.stepId}:${event.stream}`
          const text = (pending.get(key) ?? "") + event.text
          const lines = text.split("\n")
          pending.set(key, lines.pop() ?? "")
          for (const output of lines) line(dim(`│ ${visible(output)}`))
          break
        }
        case "step-end": {
          for (const [key, rest] of pending) {
            if (key.startsWith(`${event.stepId}:`) && rest !== "") line(dim(`│ ${visible(rest)}`))
            pending.delete(key)
          }
          const mark = event.state === "Succeeded" ? "✓" : "✗"
          const code = event.exitCode === null ? "" : `, exit ${event.exitCode}`
          const changed = event.changedPaths.length === 0 ? "" : `; changed ${event.changedPaths.slice(0, 5).join(", ")}${event.changedPaths.length > 5 ? ", …" : ""}`
          line(`${mark} ${event.stepId} attempt ${event.attempt}: ${event.state} in ${(event.durationMs / 1000).toFixed(1)} s${code}${changed}`)
          break
        }
      }
    }
  }
}

/**
 * NDJSON progress on `stream`: one JSON object per line.
 *
 * @since 0.1.0
 * @category constructors
 */
export const ndjson = (stream: NodeJS.WritableStream): Sink => ({
  progress: (event) => {
    stream.write(`${JSON.stringify(event)}\n`)
  }
})
