/**
 * `ratchet lease …`: a task's writer lease read, taken, kept alive, given back and taken over, for
 * a writer outside the runner (a script, a host session) that writes under `--lease-epoch`.
 *
 * @since 0.2.0
 */
import * as Controller from "@ratchet/controller/Controller"
import * as Documents from "@ratchet/controller/Documents"
import * as Effect from "effect/Effect"
import { type CommandSpec, controller, ok, type Outcome, str, taskArg } from "./Command.js"
import * as Render from "./Render.js"

/**
 * `ratchet lease show|acquire|heartbeat|release|takeover`, in that order.
 *
 * @since 0.2.0
 * @category commands
 */
export const lease: ReadonlyArray<CommandSpec> = (["show", "acquire", "heartbeat", "release", "takeover"] as const).map((verb): CommandSpec => ({
  name: `lease ${verb}`,
  usage: verb === "heartbeat" || verb === "release"
    ? `ratchet lease ${verb} <task> --epoch <n>`
    : verb === "show"
    ? "ratchet lease show <task>"
    : `ratchet lease ${verb} <task> [--host <name>] [--session <ref>]`,
  summary: {
    show: "Show who holds the task's writer lease, its epoch and deadlines",
    acquire: "Take the task's writer lease (fails while another writer holds it, even expired)",
    heartbeat: "Prove the holder of the lease at --epoch is alive",
    release: "Release the lease held at --epoch",
    takeover: "Take the lease over, only strictly after its grace deadline"
  }[verb],
  description: {
    show: "Read-only. An expired lease is still held: only an explicit takeover moves it.",
    acquire:
      "Prints the epoch: pass it as --lease-epoch to every write under the lease, and run ratchet lease heartbeat at the printed interval so the grace deadline never passes. While the lease is held, a write without --lease-epoch is refused (exit 4), yours included. A lease that is held, even expired, cannot be acquired: the refusal names the holder (exit 4); see ratchet lease takeover.",
    heartbeat: "Moves the grace deadline forward. A lease that was taken over is reported lost (exit 4).",
    release: "Only the held epoch releases the lease.",
    takeover:
      "Allowed only strictly after the holder's grace deadline (last heartbeat + grace, by the store's clock) and after the last checkpoint is verified against the stream head. Bumps the epoch, so the old holder's late writes are rejected, and records who was displaced."
  }[verb],
  positionals: [taskArg],
  options: verb === "heartbeat" || verb === "release"
    ? { epoch: { type: "string", required: true, valueName: "<n>", integer: { min: 1, max: 2 ** 31 - 1 }, description: "The epoch you hold." } }
    : verb === "show"
    ? {}
    : {
      host: { type: "string", valueName: "<name>", description: "Who holds it: cli (default), runner, claude-code, codex, …" },
      session: { type: "string", valueName: "<ref>", description: "The host session's reference, if any." }
    },
  examples: verb === "heartbeat" || verb === "release" ? [`ratchet lease ${verb} t-3f9a1c2b --epoch 2`] : [`ratchet lease ${verb} t-3f9a1c2b`],
  needs: "project",
  run: (parsed, env) =>
    Effect.flatMap(controller, (c): Effect.Effect<Outcome, unknown> => {
      const taskId = str(parsed, "task")
      const identity: Controller.LeaseIdentity = {
        host: (parsed.options["host"] as string | undefined) ?? "cli",
        sessionRef: parsed.options["session"] as string | undefined,
        actor: env.actor
      }
      switch (verb) {
        case "show":
          return Effect.map(c.lease.show(taskId), (o) => ok(Documents.lease(o), `${taskId}: ${Render.lease(o, env.style)}`))
        case "acquire":
          return Effect.map(c.lease.acquire(taskId, identity), (lease) =>
            ok(Documents.lease(lease), `Acquired the lease of ${taskId} at epoch ${lease.epoch}; write with --lease-epoch ${lease.epoch}, heartbeat every ${lease.heartbeatMs} ms (grace ${lease.graceMs} ms).`))
        case "heartbeat":
          return Effect.map(c.lease.heartbeat(taskId, parsed.options["epoch"] as number), (lease) =>
            ok(Documents.lease(lease), `Heartbeat: ${taskId} epoch ${lease.epoch}, grace deadline ${new Date(lease.deadline).toISOString()}.`))
        case "release":
          return Effect.map(c.lease.release(taskId, parsed.options["epoch"] as number, env.actor), () =>
            ok(Documents.released(taskId, parsed.options["epoch"]), `Released the lease of ${taskId} (epoch ${String(parsed.options["epoch"])}).`))
        case "takeover":
          return Effect.map(c.lease.takeover(taskId, identity), (t) =>
            ok(
              Documents.takeover(t),
              `Took over the lease of ${taskId}: epoch ${t.displacedEpoch} → ${t.lease.epoch}, displaced ${Controller.describeOwner(t.displaced)}.`
            ))
      }
    })
}))
