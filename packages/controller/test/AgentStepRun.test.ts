/**
 * A runner that has no reader for an agent step's host refuses the plan, over a real SQLite store
 * and a real git checkout (ADR 0039): `Runner.run` without `agentHosts` fails with an
 * `InvalidRequest` naming the step, before it takes the lease, and writes nothing: no run starts,
 * no step before the agent step runs, and the task stays PLAN_APPROVED. The check a transport makes
 * before starting the bundled runner in the background (`TaskReads.runnableSteps`) lets the plan
 * through, as that runner reads both hosts, and refuses it for a runner that reads only the other.
 * (The bundled runner starting the hosts is tested in `apps/runner/test/AgentStep.test.ts`.)
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type * as Event from "@ratchet/kernel/Event"
import * as LeaseManager from "@ratchet/lease/LeaseManager"
import * as EventStore from "@ratchet/storage/EventStore"
import { SqliteStore } from "@ratchet/storage-sqlite"
import * as Signing from "@ratchet/testkit/Signing"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as Controller from "../src/Controller.js"
import * as Runner from "../src/Runner.js"
import * as TaskReads from "../src/TaskReads.js"
import { tempDirFactory } from "./tempDirs.js"

const temp = tempDirFactory("ratchet-agentstep-")

const person: Event.Actor = { kind: "user", id: "ana" }
const asPerson: Controller.Invocation = { actor: person, signer: Signing.signerOf(Signing.keyOf(7), person.id) }
const runner: Event.Actor = { kind: "runner", id: "runner-1" }

const git = (root: string, ...args: ReadonlyArray<string>) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t.invalid", "-c", "commit.gpgsign=false", ...args], {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"]
  })

const checkout = () => {
  const root = temp()
  fs.writeFileSync(path.join(root, "README.md"), "# A project\n")
  git(root, "init", "-q")
  git(root, "add", "-A")
  git(root, "commit", "-q", "-m", "start")
  return root
}

const layerOf = (root: string, home: string) => {
  const store = SqliteStore.layer({ directory: home })
  const leases = LeaseManager.layer({ heartbeatMs: 60_000, graceMs: 120_000 }).pipe(Layer.provide(store))
  const project = {
    root,
    projectFile: path.join(root, ".ratchet", "project.json"),
    project: { schemaVersion: 1 as const, projectId: "prj-agentstep", displayName: "agentstep", createdAt: "2026-12-06T00:00:00.000Z" },
    workspaceId: "ws-here",
    git: true
  }
  return Layer.provideMerge(Controller.layer, Layer.mergeAll(store, leases, Layer.succeed(Controller.Project, project)))
}

const spec = [
  "---",
  "goal: Add a flag",
  "acceptanceCriteria:",
  "  - id: AC-001",
  "    outcome: The flag works",
  "    required: true",
  "    verify: { command: \"true\" }",
  "execution:",
  "  allowedScope: [\"**\"]",
  "---",
  ""
].join("\n")

const plan = [
  "steps:",
  "  - id: prepare",
  "    title: Prepare",
  "    acRefs: [AC-001]",
  "    run: { command: \"echo ready > ready.txt\" }",
  "  - id: impl",
  "    title: Implement",
  "    acRefs: [AC-001]",
  "    needs: [prepare]",
  "    agent:",
  "      host: codex",
  "      prompt: Add the flag and its test.",
  "      maxTurns: 20",
  ""
].join("\n")

describe("Runner.run with an agent step of a host it cannot read", () => {
  it.effect("refuses the plan by step before the run starts, and writes nothing", () => {
    const root = checkout()
    const home = temp()
    return Effect.gen(function*() {
      const c = yield* Controller.Controller
      const files = temp()
      yield* c.approvers.register(asPerson.signer!)
      git(root, "add", ".ratchet/approvers.json")
      git(root, "commit", "-q", "-m", "approvers")
      const taskId = (yield* c.createTask({ goal: "Add a flag" }, asPerson)).task.taskId
      const approve = (subject: "restatement" | "spec" | "plan") =>
        Effect.flatMap(c.approvalSubject(taskId, subject), (shown) => c.approve(taskId, { subject, digest: shown.digest, channel: "terminal" }, asPerson))
      yield* c.restate(taskId, "Add the flag.", asPerson)
      yield* approve("restatement")
      yield* c.closeBrief(taskId, asPerson)
      fs.writeFileSync(path.join(files, "spec.md"), spec)
      yield* c.proposeSpec(taskId, path.join(files, "spec.md"), asPerson)
      yield* approve("spec")
      yield* c.preflight(taskId, asPerson)
      fs.writeFileSync(path.join(files, "plan.yaml"), plan)
      yield* c.proposePlan(taskId, path.join(files, "plan.yaml"), asPerson)
      yield* approve("plan")

      // The check a transport makes before it starts the bundled runner (which reads both hosts)
      // lets it through, and refuses it for a runner that reads only Claude Code's stream.
      yield* TaskReads.runnableSteps(taskId)
      const early = yield* Effect.flip(TaskReads.runnableSteps(taskId, ["claude-code"]))
      expect(early._tag).toBe("@ratchet/controller/InvalidRequest")
      expect(early.message).toContain(`plan.steps[1].agent (step "impl")`)

      const store = yield* EventStore.EventStore
      const events = () => Effect.map(Stream.runCollect(store.read({ streamId: taskId })), Chunk.toReadonlyArray)
      const before = (yield* events()).length

      const refused = yield* Effect.flip(Runner.run({ taskId, takeover: false, actor: runner, home }))
      expect(refused._tag).toBe("@ratchet/controller/InvalidRequest")
      expect(refused.message).toContain(`plan.steps[1].agent (step "impl")`)
      expect(refused.message).toContain("this runner has no reader for that host's stream, so it cannot start it; nothing was run")
      expect(refused.message).toContain(`ratchet reopen ${taskId}`)

      expect((yield* events()).length).toBe(before)
      expect((yield* c.status(taskId)).state).toBe("PLAN_APPROVED")
      expect((yield* c.status(taskId)).lease.status).toBe("free")
      expect(fs.existsSync(path.join(root, "ready.txt"))).toBe(false)
    }).pipe(Effect.provide(layerOf(root, home)))
  })

  it.effect("lets a task without agent steps, or without a plan yet, through the background check", () => {
    const root = checkout()
    const home = temp()
    return Effect.gen(function*() {
      const c = yield* Controller.Controller
      const taskId = (yield* c.createTask({ goal: "Add a flag" }, asPerson)).task.taskId
      yield* TaskReads.runnableSteps(taskId)
    }).pipe(Effect.provide(layerOf(root, home)))
  })
})
