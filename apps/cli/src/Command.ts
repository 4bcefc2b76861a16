/**
 * What every command of the table shares: what it is run with (`Env`), what it returns
 * (`Outcome`), its declaration (`CommandSpec`), and the small helpers that turn a parsed command
 * line into a controller invocation and a written result into text and JSON.
 *
 * @since 0.2.0
 */
import * as path from "node:path"
import type * as ApproverKey from "@ratchet/controller/ApproverKey"
import * as Controller from "@ratchet/controller/Controller"
import * as ControllerError from "@ratchet/controller/ControllerError"
import * as Documents from "@ratchet/controller/Documents"
import type * as Event from "@ratchet/kernel/Event"
import * as Effect from "effect/Effect"
import type { OptionSpec, Parsed, PositionalSpec } from "./Args.js"
import * as Render from "./Render.js"

/**
 * What a command is run with.
 *
 * @since 0.1.0
 * @category models
 */
export interface Env {
  readonly cwd: string
  readonly json: boolean
  readonly style: Render.Style
  readonly actor: Event.Actor
  readonly write: (text: string) => void
}

/**
 * A finished command: its exit code (0, or 3 for a HOLD reported as a result), its JSON document
 * and its text. `null` text/json when the command streamed its output already.
 *
 * @since 0.1.0
 * @category models
 */
export interface Outcome {
  /** 0, 2, 3; a command that hands the terminal to the runner passes the runner's code on. */
  readonly exit: number
  readonly json: Record<string, unknown> | null
  readonly text: string | null
}

/**
 * @since 0.1.0
 * @category models
 */
export interface CommandSpec {
  /** The words that name it: `task create`, `brief ask`, `lease show`. */
  readonly name: string
  /** The synopsis as typed, e.g. `ratchet brief <task> ask <text> [--blocking]`. */
  readonly usage: string
  readonly summary: string
  readonly description: string
  readonly positionals: ReadonlyArray<PositionalSpec>
  readonly options: Readonly<Record<string, OptionSpec>>
  readonly examples: ReadonlyArray<string>
  /** `project`: runs against the located project's controller; `standalone`: opens what it needs. */
  readonly needs: "project" | "standalone"
  /**
   * A standalone command that still reads the store's directory (the approval key in it, the
   * sandbox that protects it): run in a project, the store is chosen for it as a project command's
   * is (`Store.choose`). Others (`version`, `completion`, `digest`) locate no project at all.
   */
  readonly readsHome?: true
  readonly run: (parsed: Parsed, env: Env) => Effect.Effect<Outcome, unknown, Controller.Controller>
}

export const taskArg: PositionalSpec = { name: "task", description: "The task id (ratchet task list shows them)", required: true, complete: "task" }

export const leaseEpoch: Readonly<Record<string, OptionSpec>> = {
  "lease-epoch": {
    type: "string",
    valueName: "<n>",
    integer: { min: 1, max: 2 ** 31 - 1 },
    description: "Write under the lease you hold at this epoch (from ratchet lease acquire); without it a leased task refuses writes."
  }
}

export const ok = (json: Record<string, unknown>, text: string): Outcome => ({ exit: 0, json, text })

export const str = (parsed: Parsed, name: string): string => {
  const value = parsed.positionals[name] ?? parsed.options[name]
  return typeof value === "string" ? value : ""
}

export const invocation = (parsed: Parsed, env: Env, signer?: ApproverKey.Signer | undefined): Controller.Invocation => {
  const epoch = parsed.options["lease-epoch"]
  return { actor: env.actor, ...(typeof epoch === "number" ? { leaseEpoch: epoch } : {}), ...(signer === undefined ? {} : { signer }) }
}

/** The text after a write: what changed, the task's state and its next step. */
export const writtenText = (written: Controller.Written, env: Env, headline: string): string => {
  const lines = [`${headline}`, `${written.task.taskId}: ${env.style.bold(written.task.state)}`]
  if (written.events.length === 0) lines.push(env.style.dim("(nothing changed)"))
  for (const warning of written.warnings) lines.push(env.style.yellow(`warning: ${warning}`))
  lines.push(`next: ${Render.visible(written.task.next)}`)
  return lines.join("\n")
}

/** The document of a write, as every transport answers it. */
export const writtenJson = Documents.written

/** The located project's controller, which every `project` command is run with. */
export const controller = Controller.Controller

/** `--ac AC-001,AC-002` as ids, trimmed; an `--ac` that names none is an error, not "all of them". */
export const acList = (parsed: Parsed): Effect.Effect<ReadonlyArray<string>, ControllerError.InvalidRequest> => {
  const raw = parsed.options["ac"]
  if (typeof raw !== "string") return Effect.succeed([])
  const ids = raw.split(",").map((id) => id.trim()).filter((id) => id !== "")
  return ids.length > 0
    ? Effect.succeed(ids)
    : Effect.fail(
      new ControllerError.InvalidRequest({
        field: "--ac",
        reason: `${JSON.stringify(raw.slice(0, 40))} names no criterion.`,
        fix: "Name criteria by id, comma-separated (--ac AC-001,AC-002), or leave --ac out for all of them."
      })
    )
}

/** `file` as typed, resolved against the directory the command runs in. */
export const resolve = (env: Env, file: string): string => path.resolve(env.cwd, file)

