/**
 * The contract: the spec and the plan proposed from their files (`ContractFile`), and the
 * repository preflight recorded against the spec. Every write goes through the command handler
 * (`UseCase.command`).
 *
 * @since 0.2.0
 * @internal
 */
import * as Digest from "@ratchet/kernel/Digest"
import type * as Event from "@ratchet/kernel/Event"
import * as KernelPlan from "@ratchet/kernel/Plan"
import * as KernelSpec from "@ratchet/kernel/Spec"
import * as Task from "@ratchet/kernel/Task"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ContractFile from "../ContractFile.js"
import type * as Controller from "../Controller.js"
import * as ControllerError from "../ControllerError.js"
import * as Preflight from "../Preflight.js"
import * as UseCase from "./UseCase.js"

/**
 * The use cases of this family over the shared kit (`UseCase`).
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (kit: UseCase.Kit) => {
  const { project, summaryOf, command } = kit

  const proposeSpec: Controller.Service["proposeSpec"] = (taskId, file, invocation) =>
    Effect.gen(function*() {
      yield* summaryOf(taskId)
      const bytes = yield* ContractFile.readBounded(file)
      const document = yield* Either.match(ContractFile.decodeSpec(file, bytes), { onLeft: Effect.fail, onRight: Effect.succeed })
      const digest = KernelSpec.digest(document.semantic)
      let changed: ReadonlyArray<KernelSpec.SemanticField> = []
      const written = yield* command(taskId, invocation, (task, meta) => {
        changed = task.spec === null ? [] : KernelSpec.semanticChanges(task.spec.spec, document.semantic)
        return { _tag: "ProposeSpec", ...meta, spec: document.semantic }
      })
      return { ...written, digest, changed }
    })

  const proposePlan: Controller.Service["proposePlan"] = (taskId, file, invocation) =>
    Effect.gen(function*() {
      // An unknown task is named before the file is read.
      yield* summaryOf(taskId)
      const bytes = yield* ContractFile.readBounded(file)
      let digest: Digest.Digest | undefined
      const written = yield* command(taskId, invocation, (task, meta): Effect.Effect<
        Task.Command,
        ContractFile.ContractFileError | ControllerError.InvalidRequest
      > => {
        const spec = task.spec
        if (spec === null) {
          return Effect.fail(
            new ControllerError.InvalidRequest({
              field: "task",
              reason: `task ${taskId} has no spec yet; a plan is made for an approved spec.`,
              fix: `Propose the spec first: ratchet spec ${taskId} --file spec.md`
            })
          )
        }
        return Either.match(ContractFile.decodePlan(file, bytes, spec.spec), {
          onLeft: (error) => Effect.fail(error),
          onRight: (plan) => {
            digest = KernelPlan.digest(plan)
            return Effect.succeed<Task.Command>({ _tag: "ProposePlan", ...meta, plan })
          }
        })
      })
      // The write decided a plan (or failed): the digest was set by then.
      return { ...written, digest: digest as Digest.Digest }
    })

  const preflight: Controller.Service["preflight"] = (taskId, invocation) =>
    Effect.gen(function*() {
      let observation: Event.PreflightObservation | null = null
      const written = yield* command(taskId, invocation, (task, meta) =>
        task.spec === null
          ? Effect.succeed<Task.Command>({
            _tag: "RecordPreflight",
            ...meta,
            observation: { head: null, dirtyPaths: [], missingPaths: [], invalidScopes: [] }
          })
          : Effect.map(Preflight.inspect(project.root, task.spec.spec), (seen): Task.Command => {
            observation = seen
            return { _tag: "RecordPreflight", ...meta, observation: seen }
          }))
      return { ...written, observation: observation ?? { head: null, dirtyPaths: [], missingPaths: [], invalidScopes: [] } }
    })

  return { proposeSpec, proposePlan, preflight } satisfies Pick<Controller.Service, "proposeSpec" | "proposePlan" | "preflight">
}
