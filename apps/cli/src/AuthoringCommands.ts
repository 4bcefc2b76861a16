/**
 * The commands that author a task's contract: making the project (`init`), creating the task, its
 * brief (questions, answers, the restatement, the closure), proposing the spec and the plan, the
 * read-only preflight between them, and `digest`, which prints what a spec or plan file would be
 * bound to without proposing it. Each decodes its arguments, calls one controller use case and
 * renders the written result.
 *
 * @since 0.2.0
 */
import * as ContractFile from "@ratchet/controller/ContractFile"
import * as Documents from "@ratchet/controller/Documents"
import type * as Spec from "@ratchet/kernel/Spec"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { type CommandSpec, controller, invocation, leaseEpoch, ok, resolve, str, taskArg, writtenText } from "./Command.js"

/**
 * `ratchet init`: run by the entry point, which owns the store wiring.
 *
 * @since 0.2.0
 * @category commands
 */
export const init: CommandSpec = {
  name: "init",
  usage: "ratchet init [--name <text>] [--force]",
  summary: "Make this checkout a Ratchet project and open the runtime store",
  description:
    "Run it inside a git repository (git init first for a new one; outside one it is refused, exit 2). Creates .ratchet/project.json at the top of the git work tree (commit it: its stable projectId is shared by every clone) and this checkout's workspace id, kept in the git directory (a clone or a git worktree is a new workspace, a renamed folder is not). Opens the runtime store ($RATCHET_HOME/ratchet.db, or PostgreSQL when RATCHET_DATABASE_URL is set) and applies its migrations, and records which store it is for this checkout (store.json beside the workspace id; a PostgreSQL URL without its password), so a command run here without RATCHET_HOME, such as an MCP server a client starts with few variables, finds the same store (ADR 0029). Idempotent: an existing project file is never rewritten. A store that is missing, or behind what this checkout saw it commit (a lost SQLite WAL), is refused, never created again silently; --force starts over with it as it is.",
  positionals: [],
  options: {
    name: { type: "string", valueName: "<text>", description: "The project's display name (default: the directory name)." },
    force: {
      type: "boolean",
      description:
        "Forget what this checkout saw the store commit, and open (or create) the store as it is now: for starting over on purpose after the store was lost or went back. Prints what was forgotten."
    }
  },
  examples: ["ratchet init", "ratchet init --name \"Payments service\"", "ratchet init --force"],
  needs: "standalone",
  // Run by the entry point, which owns the store wiring.
  run: () => Effect.die(new Error("init is run by the entry point"))
}

/**
 * `ratchet task create`.
 *
 * @since 0.2.0
 * @category commands
 */
export const taskCreate: CommandSpec = {
  name: "task create",
  usage: "ratchet task create --goal <text> [--slug <slug>]",
  summary: "Create a task and begin its interview",
  description:
    "Creates a task (INITIALIZING), runs the setup check and moves it to INTERVIEWING in one transaction. Prints the new task id.",
  positionals: [],
  options: {
    goal: { type: "string", required: true, valueName: "<text>", description: "What the task must achieve, in one sentence." },
    slug: { type: "string", valueName: "<slug>", description: "A short name for the task's directory under .ratchet/tasks/: 1 to 40 lowercase letters, digits and dashes (default: made from the goal)." }
  },
  examples: ["ratchet task create --goal \"Make the flaky date test deterministic\""],
  needs: "project",
  run: (parsed, env) =>
    Effect.flatMap(controller, (c) =>
      Effect.map(
        c.createTask({ goal: str(parsed, "goal"), slug: parsed.options["slug"] as string | undefined }, { actor: env.actor }),
        (written) => ok(Documents.written(written), writtenText(written, env, `Created task ${written.task.taskId}`))
      ))
}

/**
 * `ratchet brief <task> ask`.
 *
 * @since 0.2.0
 * @category commands
 */
export const briefAsk: CommandSpec = {
  name: "brief ask",
  usage: "ratchet brief <task> ask <text> [--blocking]",
  summary: "Ask a question of the brief",
  description: "Records a question (Q-1, Q-2, …). A blocking question must be answered before the brief can close.",
  positionals: [taskArg, { name: "text", description: "The question", required: true }],
  options: { blocking: { type: "boolean", description: "The brief cannot close until this is answered." }, ...leaseEpoch },
  examples: ["ratchet brief t-3f9a1c2b ask \"Which timezone do the tests run in?\" --blocking"],
  needs: "project",
  run: (parsed, env) =>
    Effect.flatMap(controller, (c) =>
      Effect.map(
        c.ask(str(parsed, "task"), { text: str(parsed, "text"), blocking: parsed.options["blocking"] === true }, invocation(parsed, env)),
        (written) => ok(Documents.written(written, { questionId: written.questionId }), writtenText(written, env, `Asked ${written.questionId}`))
      ))
}

/**
 * `ratchet brief <task> answer`.
 *
 * @since 0.2.0
 * @category commands
 */
export const briefAnswer: CommandSpec = {
  name: "brief answer",
  usage: "ratchet brief <task> answer <questionId> <text> --source user|code|research",
  summary: "Answer a question of the brief",
  description: "Records the answer and where it came from: user (a person said so), code (read in the repository) or research (found elsewhere). Each question, answer and restatement is a new revision of the brief.",
  positionals: [taskArg, { name: "questionId", description: "The question, e.g. Q-1", required: true }, {
    name: "text",
    description: "The answer",
    required: true
  }],
  options: {
    source: { type: "string", required: true, choices: ["user", "code", "research"], valueName: "user|code|research", description: "Where the answer comes from: user, code or research." },
    ...leaseEpoch
  },
  examples: ["ratchet brief t-3f9a1c2b answer Q-1 \"UTC, set by the test runner\" --source user"],
  needs: "project",
  run: (parsed, env) =>
    Effect.flatMap(controller, (c) =>
      Effect.map(
        c.answer(
          str(parsed, "task"),
          { questionId: str(parsed, "questionId"), text: str(parsed, "text"), source: str(parsed, "source") as "user" | "code" | "research" },
          invocation(parsed, env)
        ),
        (written) => ok(Documents.written(written), writtenText(written, env, `Answered ${str(parsed, "questionId")}`))
      ))
}

/**
 * `ratchet brief <task> restate`.
 *
 * @since 0.2.0
 * @category commands
 */
export const briefRestate: CommandSpec = {
  name: "brief restate",
  usage: "ratchet brief <task> restate <sentence>",
  summary: "Restate the goal in one sentence",
  description: "Records the restatement the user then approves (ratchet approve <task> restatement). A new restatement needs a new approval.",
  positionals: [taskArg, { name: "sentence", description: "The goal restated in one sentence", required: true }],
  options: { ...leaseEpoch },
  examples: ["ratchet brief t-3f9a1c2b restate \"Freeze the clock in the date test so it passes in any timezone.\""],
  needs: "project",
  run: (parsed, env) =>
    Effect.flatMap(controller, (c) =>
      Effect.map(
        c.restate(str(parsed, "task"), str(parsed, "sentence"), invocation(parsed, env)),
        (written) => ok(Documents.written(written), writtenText(written, env, "Restated"))
      ))
}

/**
 * `ratchet brief <task> close`.
 *
 * @since 0.2.0
 * @category commands
 */
export const briefClose: CommandSpec = {
  name: "brief close",
  usage: "ratchet brief <task> close",
  summary: "Close the brief (runs the closure audit)",
  description:
    "Closes the brief when no blocking question is open and the restatement is approved by the user; otherwise HOLD (exit 3) listing what is open. The task stays INTERVIEWING until its spec is proposed.",
  positionals: [taskArg],
  options: { ...leaseEpoch },
  examples: ["ratchet brief t-3f9a1c2b close"],
  needs: "project",
  run: (parsed, env) =>
    Effect.flatMap(controller, (c) =>
      Effect.map(c.closeBrief(str(parsed, "task"), invocation(parsed, env)), (written) =>
        ok(Documents.written(written), writtenText(written, env, "Brief closed")))
    )
}

/**
 * `ratchet spec`.
 *
 * @since 0.2.0
 * @category commands
 */
export const spec: CommandSpec = {
  name: "spec",
  usage: "ratchet spec <task> --file <spec.md>",
  summary: "Propose the spec (the contract) from a Markdown file with YAML front matter",
  description:
    "The front matter holds the semantic fields (goal, nonGoals, constraints, decisions, context, acceptanceCriteria, execution, taskType), decoded strictly: unknown keys are errors. The body is editorial: changing only the body keeps the digest and changes nothing downstream. A semantic change voids the spec approval and marks the plan stale. Nothing in the file counts as approval. ratchet digest <spec.md> prints the digest without proposing it.",
  positionals: [taskArg],
  options: { file: { type: "string", required: true, valueName: "<spec.md>", complete: "file", description: "The spec file (at most 1 MiB, UTF-8)." }, ...leaseEpoch },
  examples: ["ratchet spec t-3f9a1c2b --file spec.md"],
  needs: "project",
  run: (parsed, env) =>
    Effect.flatMap(controller, (c) =>
      Effect.map(c.proposeSpec(str(parsed, "task"), resolve(env, str(parsed, "file")), invocation(parsed, env)), (written) => {
        const headline = written.events.length === 0
          ? `Spec unchanged (digest ${written.digest}): its semantic fields are the same, so nothing downstream changes`
          : `Spec proposed: ${written.digest}${written.changed.length === 0 ? "" : ` (changed: ${written.changed.join(", ")})`}`
        const stale = written.events.includes("PlanMarkedStale")
          ? "\nThe spec approval is void and the plan is stale: approve the new spec, then propose and approve a plan for it."
          : ""
        return ok(Documents.written(written, { digest: written.digest, changed: written.changed }), writtenText(written, env, headline) + stale)
      }))
}

/**
 * `ratchet plan`.
 *
 * @since 0.2.0
 * @category commands
 */
export const plan: CommandSpec = {
  name: "plan",
  usage: "ratchet plan <task> --file <plan.yaml>",
  summary: "Propose the plan from a YAML file",
  description:
    "A YAML mapping: steps, each { id, title, acRefs, run: { command } | manual: { instructions } | agent: { host: claude-code|codex, prompt, timeoutSeconds?, model?, maxTurns? }, needs, timeoutSeconds, idempotent, probe }, optional stepStates, and an optional profile { implementer: claude-code|codex (the host every agent step names), verifier: <approver id> (whose key verifies unattended), untilVerified: true|false (ratchet run verifies, revises and completes by itself) }, all part of the digest. The plan is bound to the current spec digest (leave specDigest out of the file). Every required acceptance criterion must be in some step's acRefs; an unknown criterion, step or state is an error naming it. Needs a preflight of the current spec that found nothing wrong, else HOLD (exit 3). A step's title is editorial: retitling keeps the digest.",
  positionals: [taskArg],
  options: { file: { type: "string", required: true, valueName: "<plan.yaml>", complete: "file", description: "The plan file (at most 1 MiB, UTF-8)." }, ...leaseEpoch },
  examples: ["ratchet plan t-3f9a1c2b --file plan.yaml"],
  needs: "project",
  run: (parsed, env) =>
    Effect.flatMap(controller, (c) =>
      Effect.map(c.proposePlan(str(parsed, "task"), resolve(env, str(parsed, "file")), invocation(parsed, env)), (written) =>
        ok(
          Documents.written(written, { digest: written.digest }),
          writtenText(written, env, written.events.length === 0 ? `Plan unchanged (${written.digest})` : `Plan proposed: ${written.digest}`)
        ))
    )
}

/**
 * `ratchet preflight`.
 *
 * @since 0.2.0
 * @category commands
 */
export const preflight: CommandSpec = {
  name: "preflight",
  usage: "ratchet preflight <task>",
  summary: "Inspect the repository read-only and record what is there",
  description:
    "After SPEC_APPROVED: records git HEAD, the dirty paths, whether the spec's relevantPaths exist and whether its scopes name paths that exist. A missing path or an invalid scope is recorded as a wrong assumption: proposing a plan then HOLDs (exit 3) until the contract is corrected (ratchet reopen) or a new preflight finds nothing wrong.",
  positionals: [taskArg],
  options: { ...leaseEpoch },
  examples: ["ratchet preflight t-3f9a1c2b"],
  needs: "project",
  run: (parsed, env) =>
    Effect.flatMap(controller, (c) =>
      Effect.map(c.preflight(str(parsed, "task"), invocation(parsed, env)), (written) => {
        const o = written.observation
        const facts = [
          `head ${o.head ?? "(no commit)"}; ${o.dirtyPaths.length} dirty path(s)`,
          ...o.missingPaths.map((p) => `missing: ${p}`),
          ...o.invalidScopes.map((p) => `invalid scope: ${p}`)
        ].join("\n")
        return ok(Documents.written(written, { observation: o }), `${writtenText(written, env, "Preflight recorded")}\n${facts}`)
      }))
}

/**
 * `ratchet digest`: opens no store.
 *
 * @since 0.2.0
 * @category commands
 */
export const digest: CommandSpec = {
  name: "digest",
  usage: "ratchet digest <file> [--spec <spec.md>]",
  summary: "Print the semantic digest of a spec or plan file, or the canonical digest of a JSON file",
  description:
    "spec.md → the digest of its semantic fields (the body does not count); plan.yaml → its plan digest (needs specDigest in the file or --spec); file.json → the canonical digest of its value. Opens no store.",
  positionals: [{ name: "file", description: "A .md, .yaml/.yml or .json file", required: true, complete: "file" }],
  options: { spec: { type: "string", valueName: "<spec.md>", complete: "file", description: "The spec a plan file is for, when the plan has no specDigest." } },
  examples: ["ratchet digest spec.md", "ratchet digest plan.yaml --spec spec.md"],
  needs: "standalone",
  run: (parsed, env) =>
    Effect.gen(function*() {
      const file = resolve(env, str(parsed, "file"))
      const bytes = yield* ContractFile.readBounded(file)
      const specPath = parsed.options["spec"]
      let spec: Spec.Spec | undefined
      if (typeof specPath === "string") {
        const specFile = resolve(env, specPath)
        const document = yield* Either.match(ContractFile.decodeSpec(specFile, yield* ContractFile.readBounded(specFile)), {
          onLeft: Effect.fail,
          onRight: Effect.succeed
        })
        spec = document.semantic
      }
      const result = yield* Either.match(ContractFile.digestOf(file, bytes, spec === undefined ? {} : { spec }), {
        onLeft: Effect.fail,
        onRight: Effect.succeed
      })
      return ok({ file, kind: result.kind, digest: result.digest }, result.digest)
    })
}
