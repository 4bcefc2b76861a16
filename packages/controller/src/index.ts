/**
 * `@ratchet/controller` — the canonical command API that the `ratchet` CLI, the MCP server and the
 * host hooks transport: every use case of a task's lifecycle once, as typed commands and typed
 * results (`Controller`), with the pieces it is made of: the project file and the checkout's
 * workspace identity, the spec and plan files, the read-only repository preflight, the Markdown
 * projections, the status view, the store-wide figures an operator alerts on and the gate
 * explanation.
 *
 * @since 0.1.0
 */

/** @since 0.2.0 */
export * as ApproverCommands from "./ApproverCommands.js"
/** @since 0.2.0 */
export * as ApproverKey from "./ApproverKey.js"
/** @since 0.5.0 */
export * as ChildSandbox from "./ChildSandbox.js"
/** @since 0.1.0 */
export * as CheckoutLock from "./CheckoutLock.js"
/** @since 0.1.0 */
export * as Completion from "./Completion.js"
/** @since 0.3.0 */
export * as Colour from "./Colour.js"
/** @since 0.1.0 */
export * as ContractFile from "./ContractFile.js"
/** @since 0.1.0 */
export * as Controller from "./Controller.js"
/** @since 0.1.0 */
export * as ControllerError from "./ControllerError.js"
/** @since 0.2.0 */
export * as Documents from "./Documents.js"
/** @since 0.1.0 */
export * as Episode from "./Episode.js"
/** @since 0.1.0 */
export * as Explain from "./Explain.js"
/** @since 0.3.0 */
export * as GitDir from "./GitDir.js"
/** @since 0.5.0 */
export * as GitSettings from "./GitSettings.js"
/** @since 0.1.0 */
export * as HostSession from "./HostSession.js"
/** @since 0.1.0 */
export * as HostView from "./HostView.js"

/** @since 0.1.0 */
export * as Invoker from "./Invoker.js"
/** @since 0.1.0 */
export * as Preflight from "./Preflight.js"
/** @since 0.2.0 */
export * as ProjectApprovers from "./ProjectApprovers.js"
/** @since 0.1.0 */
export * as ProjectFile from "./ProjectFile.js"
/** @since 0.1.0 */
export * as Projection from "./Projection.js"
/** @since 0.1.0 */
export * as Stats from "./Stats.js"
/** @since 0.2.0 */
export * as StoreMark from "./StoreMark.js"
/** @since 0.1.0 */
export * as Runner from "./Runner.js"
/** @since 0.2.0 */
export * as Runnable from "./Runnable.js"
/** @since 0.1.0 */
export * as RunReport from "./RunReport.js"
/** @since 0.1.0 */
export * as RunRequest from "./RunRequest.js"
/** @since 0.1.0 */
export * as Scope from "./Scope.js"
/** @since 0.2.0 */
export * as Signed from "./Signed.js"
export * as StaleEvidence from "./StaleEvidence.js"
/** @since 0.1.0 */
export * as StepProcess from "./StepProcess.js"
/** @since 0.1.0 */
export * as StepScope from "./StepScope.js"
/** @since 0.1.0 */
export * as TaskBranch from "./TaskBranch.js"
/** @since 0.2.0 */
export * as TaskReads from "./TaskReads.js"
/** @since 0.1.0 */
export * as TaskView from "./TaskView.js"
/** @since 0.1.0 */
export * as VerificationReport from "./VerificationReport.js"
/** @since 0.1.0 */
export * as Verify from "./Verify.js"
/** @since 0.1.0 */
export * as Workspace from "./Workspace.js"
/** @since 0.1.0 */
export * as WorkTree from "./WorkTree.js"
