/**
 * The `agent` kind of a plan step: the work is done by a headless coding agent that the runner
 * starts, not by a command or a person.
 *
 * ```yaml
 * agent:
 *   host: claude-code        # or codex
 *   prompt: |
 *     Add a --json flag to the list command and test it.
 *   timeoutSeconds: 1800     # optional, 1 to 86400
 *   model: claude-sonnet-4-5 # optional
 *   maxTurns: 40             # optional, 1 to 500
 * ```
 *
 * Every field is part of the plan's digest (`Plan.projection`), so a changed prompt, host, model or
 * limit is a different plan and needs its own approval.
 *
 * The bounds are there because each value reaches a host's command line or its prompt:
 * - the prompt is at most {@link maxPromptBytes} bytes of UTF-8 (a single argument of a process
 *   is limited by the operating system, and the runner adds its envelope to it), and holds no NUL
 *   or other control character but tab and newline (a NUL cannot pass through an argument, and
 *   escape sequences or carriage returns would make the approved text read differently at a
 *   terminal than what the agent receives);
 * - the model is one printable word that cannot start with "-" (it is passed as a flag's value
 *   and must never be read as another flag);
 * - the limits are positive integers with maxima, so a typo cannot approve an unbounded run.
 *
 * Each refusal names the field, says why and says what to write instead.
 *
 * @since 0.4.0
 */
import * as Schema from "effect/Schema"
import * as Digest from "./Digest.js"

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

/**
 * The hosts an agent step can run on.
 *
 * @since 0.4.0
 * @category models
 */
export const hosts = ["claude-code", "codex"] as const

/**
 * @since 0.4.0
 * @category models
 */
export type Host = (typeof hosts)[number]

/**
 * The largest prompt, in bytes of UTF-8.
 *
 * @since 0.4.0
 * @category models
 */
export const maxPromptBytes = 65_536

/**
 * The longest agent step may run, in seconds (one day, like a command step's timeout).
 *
 * @since 0.4.0
 * @category models
 */
export const maxTimeoutSeconds = 86_400

/**
 * The most turns an agent step may allow its host.
 *
 * @since 0.4.0
 * @category models
 */
export const maxTurnsLimit = 500

/** Control characters other than tab (U+0009) and newline (U+000A), C1 included. */
// eslint-disable-next-line no-control-regex
const forbiddenControl = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/

const codePoint = (char: string): string => `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`

/**
 * The length of `text` in UTF-8, counted here (the kernel has no platform's `TextEncoder`): a lone
 * surrogate counts as the three bytes of the U+FFFD an encoder would write for it.
 *
 * @since 0.4.0
 * @category utils
 */
export const utf8Length = (text: string): number => {
  let bytes = 0
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index)
    if (unit < 0x80) bytes += 1
    else if (unit < 0x800) bytes += 2
    else if (unit >= 0xd800 && unit <= 0xdbff && index + 1 < text.length) {
      const next = text.charCodeAt(index + 1)
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4
        index += 1
      } else bytes += 3
    } else bytes += 3
  }
  return bytes
}

/**
 * Why `prompt` cannot be an agent step's prompt, or undefined when it can.
 *
 * @since 0.4.0
 * @category guards
 */
export const promptProblem = (prompt: string): string | undefined => {
  if (prompt.trim().length === 0) return "the prompt is empty; write what the agent should do"
  const bytes = utf8Length(prompt)
  if (bytes > maxPromptBytes) {
    return `the prompt is ${bytes} bytes of UTF-8, more than the ${maxPromptBytes} allowed; shorten it, or put the details in a file of the repository and name that file in the prompt`
  }
  const found = forbiddenControl.exec(prompt)
  if (found !== null) {
    return `the prompt holds the control character ${codePoint(found[0])} at offset ${found.index}; only tab and newline are allowed (write line ends as plain newlines and remove escape sequences)`
  }
  return undefined
}

/**
 * The prompt: text within the bounds of {@link promptProblem}.
 *
 * @since 0.4.0
 * @category schemas
 */
export const Prompt = Digest.CanonicalString.pipe(
  Schema.filter((prompt) => promptProblem(prompt)),
  Schema.annotations({ identifier: "Prompt" })
)

/**
 * A model name as the host's `--model` flag takes it: one printable word of at most 128
 * characters that starts with a letter or digit.
 *
 * @since 0.4.0
 * @category schemas
 */
export const Model = Digest.CanonicalString.pipe(
  Schema.filter((model) =>
    /^[A-Za-z0-9][A-Za-z0-9._:/@[\]-]{0,127}$/.test(model)
      ? undefined
      : `expected a model name on one line: letters, digits and . _ : / @ [ ] - (starting with a letter or digit, at most 128 characters), got ${
        JSON.stringify(model.slice(0, 80))
      }; write the name the host's --model flag takes, for example "claude-sonnet-4-5" or "gpt-5-codex"`
  ),
  Schema.annotations({ identifier: "Model" })
)

/**
 * The host, one of {@link hosts}.
 *
 * @since 0.4.0
 * @category schemas
 */
export const HostName = Schema.Literal(...hosts).annotations({
  identifier: "Host",
  message: (issue) => ({
    message: `expected the host "claude-code" or "codex", got ${
      JSON.stringify(typeof issue.actual === "string" ? issue.actual.slice(0, 80) : issue.actual)
    }; name the agent program the runner starts`,
    override: true
  })
})

const boundedInt = (name: string, max: number) =>
  Schema.Number.pipe(
    Schema.filter((n) =>
      Number.isInteger(n) && n >= 1 && n <= max
        ? undefined
        : `expected ${name} to be a whole number from 1 to ${max}, got ${n}; give a positive whole number no larger than ${max}`
    )
  )

/**
 * An agent step's work: which host runs which prompt, within which limits.
 *
 * @since 0.4.0
 * @category schemas
 */
export const Agent = Schema.Struct({
  host: HostName,
  prompt: Prompt,
  timeoutSeconds: optional(boundedInt("timeoutSeconds", maxTimeoutSeconds)),
  model: optional(Model),
  maxTurns: optional(boundedInt("maxTurns", maxTurnsLimit))
}).annotations({ identifier: "Agent" })

/**
 * @since 0.4.0
 * @category models
 */
export interface Agent extends Schema.Schema.Type<typeof Agent> {}

/**
 * The semantic projection of an agent step's work; every field counts.
 *
 * @since 0.4.0
 * @category models
 */
export interface Projection {
  readonly host: Host
  readonly prompt: string
  readonly timeout_seconds?: number
  readonly model?: string
  readonly max_turns?: number
}

/**
 * The projection of `agent` that the plan's digest is taken over.
 *
 * @since 0.4.0
 * @category encoding
 */
export const projection = (agent: Agent): Projection =>
  Digest.omitEmpty({
    host: agent.host,
    prompt: agent.prompt,
    timeout_seconds: agent.timeoutSeconds,
    model: agent.model,
    max_turns: agent.maxTurns
  }) as unknown as Projection
