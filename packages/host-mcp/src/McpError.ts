/**
 * The MCP server's own refusals: what goes wrong before a call reaches the controller. Every one
 * becomes a tool error (`isError: true` with this message), never a protocol error, so the agent
 * reads the field, the reason and the fix the same way it reads a controller's refusal.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * A tool's arguments do not decode: a missing or unknown field, a value of the wrong type, a
 * string over its limit. Nothing was read or written.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidArguments extends Schema.TaggedError<InvalidArguments>()("@ratchet/host-mcp/InvalidArguments", {
  tool: Schema.String,
  field: Schema.String,
  reason: Schema.String,
  fix: Schema.String
}) {
  override get message(): string {
    return `${this.field}: ${this.reason} ${this.fix}`
  }
}

/**
 * A tool this server does not have. The approving tools are absent on purpose, and the message
 * says so when one of them is asked for.
 *
 * @since 0.1.0
 * @category errors
 */
export class UnknownTool extends Schema.TaggedError<UnknownTool>()("@ratchet/host-mcp/UnknownTool", {
  name: Schema.String,
  known: Schema.Array(Schema.String)
}) {
  override get message(): string {
    const named = JSON.stringify(this.name.slice(0, 80))
    const approval = /approve|reopen|resolve|settle|rewind|done|complete|unblock|verify/i.test(this.name)
      ? " Approvals, reopening, settling, rewinding and completion are a person's acts at a terminal, and verification needs an identity that did none of the work: ask the user to run the ratchet command."
      : ""
    return `name: ${named} is not a tool of the ratchet MCP server.${approval} Use one of: ${this.known.join(", ")}.`
  }
}

/**
 * A resource URI this server does not serve.
 *
 * @since 0.1.0
 * @category errors
 */
export class UnknownResource extends Schema.TaggedError<UnknownResource>()("@ratchet/host-mcp/UnknownResource", {
  uri: Schema.String
}) {
  override get message(): string {
    return `uri: ${JSON.stringify(this.uri.slice(0, 200))} is not a ratchet resource. Use ratchet://task/<taskId>, or its /spec, /plan or /log.`
  }
}

/**
 * The runner could not be started (its program is missing, the process could not be spawned).
 *
 * @since 0.1.0
 * @category errors
 */
export class RunNotStarted extends Schema.TaggedError<RunNotStarted>()("@ratchet/host-mcp/RunNotStarted", {
  taskId: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `run: the runner for task ${this.taskId} could not be started: ${this.reason} Check the installation, or run ratchet run ${this.taskId} in a terminal.`
  }
}
