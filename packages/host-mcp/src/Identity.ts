/**
 * Who the MCP server acts as. Its caller is an agent, whatever the environment says, so every
 * write it makes is recorded as `agent:<id>`: `RATCHET_ACTOR=agent:<id>` names the agent (hosts
 * set it per session or per agent), and anything else is `agent:mcp`. A `RATCHET_ACTOR` naming a
 * person (`user:ana`, often exported in a shell profile the host inherits) is not taken over: an
 * agent must never write as a person, because a person's identity is what approvals and the
 * independence of verification are judged by.
 *
 * @since 0.1.0
 */
import * as Invoker from "@ratchet/controller/Invoker"
import type * as Event from "@ratchet/kernel/Event"
import * as Either from "effect/Either"

/**
 * The agent id when `RATCHET_ACTOR` names no agent.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultId = "mcp"

/**
 * The actor the server writes as, and the `RATCHET_ACTOR` it did not take (a non-agent kind), so
 * the transport can say so on standard error.
 *
 * @since 0.1.0
 * @category models
 */
export interface Identity {
  readonly actor: Event.Actor
  readonly ignored: Event.Actor | null
}

/**
 * The identity for the value of `RATCHET_ACTOR`, or why the value is not `kind:id`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const of = (raw: string | undefined): Either.Either<Identity, { readonly reason: string; readonly fix: string }> => {
  const fallback: Event.Actor = { kind: "agent", id: defaultId }
  if (raw === undefined || raw === "") return Either.right({ actor: fallback, ignored: null })
  return Either.map(Invoker.parse(raw), (parsed) =>
    parsed.kind === "agent" ? { actor: parsed, ignored: null } : { actor: fallback, ignored: parsed })
}
