/**
 * How the runner gives an agent step's host the run's hooks (ADR 0040): what a host needs on its
 * command line so that its session runs Ratchet's hook (`ratchet hook <host>`, through the
 * fail-closed launcher by absolute path) on its tool calls. The controller sits below the host
 * adapters, so it cannot build a host's settings itself: the app that wires the runner gives one
 * {@link Install} per host it can fence (`Runner.Options.agentHooks`).
 *
 * A host with an `Install` is started only with the hooks: an `Install` that cannot give them (the
 * hook's launcher or the CLI is missing) fails the attempt before anything starts, with the
 * reason. A host without one (Codex, whose headless `exec` takes no hooks from its command line)
 * runs as ADR 0039 says: held by its own sandbox, its changes held to the scope after it ends, and
 * fenced by the project's own installed hooks when it runs them (they recognise the runner's agent
 * by its capability, `AgentFence`).
 *
 * @since 0.4.0
 */
import type * as AgentStep from "@ratchet/kernel/AgentStep"

/**
 * The arguments that give the host the run's hooks, put ahead of the host's own (ADR 0039's
 * command line), or why they cannot be given.
 *
 * @since 0.4.0
 * @category models
 */
export type Installed = { readonly _tag: "Args"; readonly args: ReadonlyArray<string> } | { readonly _tag: "Problem"; readonly problem: string }

/**
 * Gives one host its hooks.
 *
 * @since 0.4.0
 * @category models
 */
export type Install = () => Installed

/**
 * One {@link Install} per host the runner fences with the run's hooks.
 *
 * @since 0.4.0
 * @category models
 */
export type Installers = { readonly [H in AgentStep.Host]?: Install }
