/**
 * A plan's agent profile (ADR 0041): who does the work and who judges it when nobody is there.
 *
 * ```yaml
 * profile:
 *   implementer: codex         # every agent step of the plan runs on this host
 *   verifier: ci-verifier      # the approver whose key verifies and completes unattended
 *   untilVerified: true        # `ratchet run` verifies, revises and completes by itself
 * ```
 *
 * Every field is part of the plan's digest (`Plan.projection`): changing who implements, who
 * verifies, or whether the loop runs unattended needs a new approval. The profile does not pick a
 * host behind a step's back: `implementer` must be the host every agent step names (a plan that
 * mixes them says so, step by step, and leaves `implementer` out), so what a step says is what runs.
 * `verifier` binds the unattended verifier: a verifier key of another approver is refused.
 *
 * @since 0.5.0
 */
import * as Schema from "effect/Schema"
import * as AgentStep from "./AgentStep.js"
import * as Approvers from "./Approvers.js"

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

/**
 * @since 0.5.0
 * @category schemas
 */
export const Profile = Schema.Struct({
  implementer: optional(Schema.Literal(...AgentStep.hosts)),
  verifier: optional(Approvers.ApproverId),
  untilVerified: optional(Schema.Boolean)
}).annotations({ identifier: "Profile" })

/**
 * @since 0.5.0
 * @category models
 */
export type Profile = typeof Profile.Type

/**
 * The semantic projection of a profile; every field counts.
 *
 * @since 0.5.0
 * @category models
 */
export interface Projection {
  readonly implementer?: AgentStep.Host
  readonly verifier?: string
  readonly until_verified?: boolean
}

/**
 * The projection of `profile` the plan's digest is taken over.
 *
 * @since 0.5.0
 * @category encoding
 */
export const projection = (profile: Profile): Projection => ({
  ...(profile.implementer === undefined ? {} : { implementer: profile.implementer }),
  ...(profile.verifier === undefined ? {} : { verifier: profile.verifier }),
  ...(profile.untilVerified === undefined ? {} : { until_verified: profile.untilVerified })
})

/**
 * The issues of `profile` against the plan's steps: an agent step on another host than the
 * implementer's.
 *
 * @since 0.5.0
 * @category validation
 */
export const issues = (
  profile: Profile,
  steps: ReadonlyArray<{ readonly id: string; readonly agent?: { readonly host: AgentStep.Host } | undefined }>
): ReadonlyArray<{ readonly path: string; readonly message: string }> =>
  profile.implementer === undefined ? [] : steps.flatMap((step, i) =>
    step.agent === undefined || step.agent.host === profile.implementer ? [] : [{
      path: `/steps/${i}/agent/host`,
      message: `step "${step.id}" runs on ${step.agent.host}, but the profile's implementer is ${profile.implementer}; name the same host, or leave profile.implementer out`
    }]
  )

/**
 * Whether `profile` asks `ratchet run` to verify, revise and complete by itself.
 *
 * @since 0.5.0
 * @category guards
 */
export const untilVerified = (profile: Profile | undefined): boolean => profile?.untilVerified === true
