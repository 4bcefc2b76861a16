/**
 * Scenarios 8 to 10: what the CLI refuses. The lifecycle's forbidden transitions, each with its
 * reason, from a table written by hand; bad input, each an exit 2 naming the field and the fix,
 * with nothing stored; a command no command line can carry, refused when its file is proposed.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import {
  approveOk,
  closeBrief,
  createTask,
  type Engine,
  engineIndependent,
  events,
  makeWorld,
  mapLimit,
  planText,
  removeWorlds,
  type Result,
  specText,
  status,
  toPlanApproved,
  toSpecReady,
  type World
} from "../harness.js"

/** One refusal: the command, the exit code and what the JSON error (or gate) must say. */
interface Row {
  readonly name: string
  readonly args: ReadonlyArray<string>
  readonly exit: number
  readonly check: (result: Result) => void
}

const refusedWith = (code: string, fragment: string) => (result: Result) => {
  expect(result.json.error).toMatchObject({ _tag: "@ratchet/kernel/TaskCommandRefused", code })
  expect(result.json.error.message).toContain(fragment)
}

const heldWith = (codes: ReadonlyArray<string>) => (result: Result) => {
  expect(result.json.error._tag).toBe("@ratchet/kernel/TaskCommandHeld")
  expect(result.json.error.gate.reasons.map((r: { code: string }) => r.code)).toEqual(codes)
}

const explained = (decision: "FORBIDDEN" | "HOLD", from: string, codes: ReadonlyArray<string> = []) => (result: Result) => {
  // A report, not an error: `ok` follows the exit code (3 for HOLD, 2 for no such transition).
  expect(result.json).toMatchObject({ ok: false, command: "gate", exitCode: decision === "HOLD" ? 3 : 2, from, to: "RUNNING", decision })
  if (decision === "FORBIDDEN") {
    expect(result.json.gate).toBeNull()
    expect(result.json.explanation).toContain(
      from === "CANCELLED" ? "CANCELLED is terminal: no transition leaves it" : `The lifecycle has no transition ${from} → RUNNING`
    )
  } else {
    expect(result.json.gate.reasons.map((r: { code: string }) => r.code)).toEqual(codes)
  }
}

const invalidWith = (tag: string, ...fragments: ReadonlyArray<string>) => (result: Result) => {
  expect(result.json.error._tag).toBe(tag)
  for (const fragment of fragments) expect(result.json.error.message).toContain(fragment)
}

/** Runs every row (a few at once: they are refusals and write nothing), each with `--json`. */
const runTable = async (world: World, rows: ReadonlyArray<Row>) => {
  const results = await mapLimit(rows, 4, (row) => world.run([...row.args, "--json"]))
  for (const [index, row] of rows.entries()) {
    const result = results[index] as Result
    expect({ row: row.name, code: result.code, stderr: result.stderr }).toMatchObject({ row: row.name, code: row.exit })
    expect(result.json.ok, row.name).toBe(row.exit === 0)
    row.check(result)
  }
}

export const refusals = (engine: Engine): void => {
  afterAll(removeWorlds)

  const anyEngine = engineIndependent(engine)

  describe("refusals", { concurrent: true, timeout: 240_000 }, () => {
    anyEngine("8. forbidden transitions are refused with their reason", async () => {
      const world = await makeWorld(engine)
      const planFile = world.file("plan.yaml", planText())
      const specFile = world.file("spec.md", specText())
      const [interviewing, specReady, planApproved, cancelled] = await Promise.all([
        createTask(world, "Task in INTERVIEWING"),
        toSpecReady(world, "Task in SPEC_READY"),
        toPlanApproved(world, "Task in PLAN_APPROVED"),
        toSpecReady(world, "Task to cancel")
      ])
      await world.ok(["cancel", cancelled, "--reason", "superseded"])
      const lengths = async () => Promise.all([interviewing, specReady, planApproved, cancelled].map(async (t) => (await events(world, t)).length))
      const before = await lengths()

      const cancelledTerminal = refusedWith("terminal_state", "a cancelled task is terminal")
      await runTable(world, [
        // INTERVIEWING
        { name: "INTERVIEWING gate --to RUNNING", args: ["gate", interviewing, "--to", "RUNNING"], exit: 2, check: explained("FORBIDDEN", "INTERVIEWING") },
        {
          name: "INTERVIEWING approve spec",
          args: ["approve", interviewing, "spec"],
          exit: 2,
          check: refusedWith("forbidden_transition", "a spec is approved from SPEC_READY")
        },
        { name: "INTERVIEWING plan", args: ["plan", interviewing, "--file", planFile], exit: 2, check: invalidWith("@ratchet/controller/InvalidRequest", "no spec yet") },
        { name: "INTERVIEWING preflight", args: ["preflight", interviewing], exit: 2, check: refusedWith("forbidden_transition", "after the spec is approved") },
        { name: "INTERVIEWING resume (not paused)", args: ["resume", interviewing], exit: 2, check: refusedWith("forbidden_transition", "only a PAUSED task resumes") },
        { name: "INTERVIEWING reopen", args: ["reopen", interviewing, "--reason", "why not"], exit: 2, check: refusedWith("forbidden_transition", "a task reopens from PREFLIGHT") },
        {
          name: "INTERVIEWING unblock",
          args: ["unblock", interviewing, "--to", "RUNNING", "--resolution", "nothing was blocked"],
          exit: 2,
          check: refusedWith("forbidden_transition", "INTERVIEWING")
        },
        // SPEC_READY
        { name: "SPEC_READY gate --to RUNNING", args: ["gate", specReady, "--to", "RUNNING"], exit: 2, check: explained("FORBIDDEN", "SPEC_READY") },
        { name: "SPEC_READY plan (spec not approved)", args: ["plan", specReady, "--file", planFile], exit: 2, check: refusedWith("forbidden_transition", "after preflight of the approved spec") },
        {
          name: "SPEC_READY approve spec off a terminal",
          args: ["approve", specReady, "spec"],
          exit: 3,
          check: heldWith(["approval_requires_terminal", "receipt_unsigned"])
        },
        { name: "SPEC_READY approve plan", args: ["approve", specReady, "plan"], exit: 2, check: refusedWith("forbidden_transition", "a plan is approved from PLAN_READY") },
        { name: "SPEC_READY brief ask", args: ["brief", specReady, "ask", "Too late?"], exit: 2, check: refusedWith("forbidden_transition", "INTERVIEWING") },
        { name: "SPEC_READY pause", args: ["pause", specReady], exit: 2, check: refusedWith("forbidden_transition", "a task pauses from INTERVIEWING or RUNNING") },
        // PLAN_APPROVED
        {
          name: "PLAN_APPROVED gate --to RUNNING",
          args: ["gate", planApproved, "--to", "RUNNING"],
          exit: 3,
          check: explained("HOLD", "PLAN_APPROVED", ["lease_required"])
        },
        { name: "PLAN_APPROVED approve plan again", args: ["approve", planApproved, "plan"], exit: 2, check: refusedWith("forbidden_transition", "a plan is approved from PLAN_READY") },
        { name: "PLAN_APPROVED resume (not paused)", args: ["resume", planApproved], exit: 2, check: refusedWith("forbidden_transition", "only a PAUSED task resumes") },
        // CANCELLED: every command that writes is refused as terminal
        { name: "CANCELLED brief ask", args: ["brief", cancelled, "ask", "Anyone?"], exit: 2, check: cancelledTerminal },
        { name: "CANCELLED brief answer", args: ["brief", cancelled, "answer", "Q-1", "yes", "--source", "user"], exit: 2, check: cancelledTerminal },
        { name: "CANCELLED brief restate", args: ["brief", cancelled, "restate", "Again."], exit: 2, check: cancelledTerminal },
        { name: "CANCELLED brief close", args: ["brief", cancelled, "close"], exit: 2, check: cancelledTerminal },
        { name: "CANCELLED spec", args: ["spec", cancelled, "--file", specFile], exit: 2, check: cancelledTerminal },
        { name: "CANCELLED plan", args: ["plan", cancelled, "--file", planFile], exit: 2, check: cancelledTerminal },
        { name: "CANCELLED approve restatement", args: ["approve", cancelled, "restatement"], exit: 2, check: cancelledTerminal },
        { name: "CANCELLED approve spec", args: ["approve", cancelled, "spec"], exit: 2, check: cancelledTerminal },
        { name: "CANCELLED approve plan", args: ["approve", cancelled, "plan"], exit: 2, check: cancelledTerminal },
        { name: "CANCELLED preflight", args: ["preflight", cancelled], exit: 2, check: cancelledTerminal },
        { name: "CANCELLED pause", args: ["pause", cancelled], exit: 2, check: cancelledTerminal },
        { name: "CANCELLED resume", args: ["resume", cancelled], exit: 2, check: cancelledTerminal },
        { name: "CANCELLED cancel", args: ["cancel", cancelled, "--reason", "twice"], exit: 2, check: cancelledTerminal },
        { name: "CANCELLED reopen", args: ["reopen", cancelled, "--reason", "try again"], exit: 2, check: cancelledTerminal },
        { name: "CANCELLED unblock", args: ["unblock", cancelled, "--to", "RUNNING", "--resolution", "x"], exit: 2, check: cancelledTerminal },
        { name: "CANCELLED lease acquire", args: ["lease", "acquire", cancelled], exit: 2, check: cancelledTerminal },
        { name: "CANCELLED gate --to RUNNING", args: ["gate", cancelled, "--to", "RUNNING"], exit: 2, check: explained("FORBIDDEN", "CANCELLED") }
      ])
      expect(await lengths()).toEqual(before)

      // on a terminal too: a refused approval asks nobody to type anything
      const typed = await world.tty(["approve", cancelled, "spec", "--json"], "00000000\n")
      expect(typed.code).toBe(2)
      expect(typed.stdout).not.toContain("Type the first")
      expect(typed.json.error.code).toBe("terminal_state")
    })

    it("9. bad input is refused with exit 2, naming the field and the fix, and nothing is stored", async () => {
      const world = await makeWorld(engine)
      const taskId = await createTask(world, "Make the flaky date test deterministic")
      await closeBrief(world, taskId)
      const logBefore = (await events(world, taskId)).length
      const storeBefore = await engine.fingerprint(world)
      const tasksBefore = fs.readdirSync(path.join(world.repo, ".ratchet", "tasks")).sort()

      const valid = specText()
      const spec = (name: string, content: string | Uint8Array) => ["spec", taskId, "--file", world.file(name, content)]
      const contract = (reason: string, ...fragments: ReadonlyArray<string>) => (result: Result) => {
        expect(result.json.error).toMatchObject({ _tag: "@ratchet/controller/ContractFileError", reason })
        for (const fragment of fragments) expect(result.json.error.message).toContain(fragment)
      }
      const usage = (field: string, ...fragments: ReadonlyArray<string>) => (result: Result) => {
        expect(result.json.error).toMatchObject({ _tag: "@ratchet/cli/UsageError", field })
        for (const fragment of fragments) expect(result.json.error.message).toContain(fragment)
      }
      const empty = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-e2e-empty-")))
      try {
        await runTable(world, [
          {
            name: "malformed front matter",
            args: spec("malformed.md", "---\ngoal: [never closed\n---\n# Body\n"),
            exit: 2,
            check: contract("syntax", "front matter does not parse", "line 3", "a spec file is a line \"---\"")
          },
          {
            name: "unknown keys, listed",
            args: spec("unknown.md", valid.replace("nonGoals:", "owner: ana\nreviewers: [bo]\nnonGoals:")),
            exit: 2,
            check: contract("schema", "/owner", "/reviewers", "is unexpected", "\"acceptanceCriteria\"", "Fix each field named above")
          },
          {
            name: "wrong type",
            args: spec("type.md", valid.replace("nonGoals:\n  - \"Rewrite the date library\"", "nonGoals: 42")),
            exit: 2,
            check: contract("schema", "/nonGoals", "42")
          },
          {
            name: "duplicate acceptance criterion ids",
            args: spec(
              "duplicate.md",
              valid.replace("execution:", "  - id: AC-001\n    outcome: The same id again\n    required: false\nexecution:")
            ),
            exit: 2,
            check: contract("schema", "/acceptanceCriteria/1/id", "duplicate acceptance criterion id AC-001")
          },
          {
            name: "over 1 MiB",
            args: spec("large.md", `${valid}\n${"x".repeat(1024 * 1024)}\n`),
            exit: 2,
            check: contract("too_large", "1 MiB", "Keep the file within 1 MiB")
          },
          {
            name: "not UTF-8",
            args: spec("latin1.md", Buffer.concat([Buffer.from(valid.slice(0, 20)), Buffer.from([0xe9, 0x0a]), Buffer.from(valid.slice(20))])),
            exit: 2,
            check: contract("not_utf8", "invalid UTF-8 at byte offset 20", "Save the file as UTF-8")
          },
          {
            name: "an approval in the file",
            args: spec("approval.md", valid.replace("nonGoals:", "approval: true\nnonGoals:")),
            exit: 2,
            check: contract("approval_in_file", "/approval", `ratchet approve <task> spec`)
          },
          {
            name: "an unknown task id",
            args: ["status", "t-00000000"],
            exit: 2,
            check: invalidWith("@ratchet/controller/TaskNotFound", "No task \"t-00000000\"", "ratchet task list")
          },
          {
            name: "a hostile task id",
            args: ["brief", "../x", "ask", "Where does this go?"],
            exit: 2,
            check: (result) => {
              expect(result.json.error).toMatchObject({ _tag: "@ratchet/controller/InvalidRequest", field: "task" })
              expect(result.json.error.message).toContain("is not a task id")
              expect(result.json.error.message).toContain("ratchet task list")
            }
          },
          { name: "an unknown option", args: ["status", taskId, "--colour"], exit: 2, check: usage("--colour", "Unknown option", "ratchet status --help") },
          { name: "a missing required option", args: ["spec", taskId], exit: 2, check: usage("--file", "is required", "ratchet spec --help") },
          {
            name: "--lease-epoch abc",
            args: ["brief", taskId, "ask", "Which timezone?", "--lease-epoch", "abc"],
            exit: 2,
            check: usage("--lease-epoch", "\"abc\" is not an integer", "ratchet brief ask --help")
          },
          {
            name: "a bad --source choice",
            args: ["brief", taskId, "answer", "Q-1", "UTC", "--source", "agent"],
            exit: 2,
            check: usage("--source", "is not one of user, code, research")
          }
        ])

        // not initialised: a directory outside any Ratchet project
        const outside = await world.run(["task", "list", "--json"], { cwd: empty })
        expect(outside.code).toBe(2)
        expect(outside.json.error._tag).toBe("@ratchet/controller/ProjectNotInitialised")
        expect(outside.json.error.message).toContain("ratchet init")
        const outsideText = await world.run(["status"], { cwd: empty })
        expect(outsideText.code).toBe(2)
        expect(outsideText.stderr).toContain("Run `ratchet init`")
        expect(fs.readdirSync(empty)).toEqual([])
      } finally {
        fs.rmSync(empty, { recursive: true, force: true })
      }

      // the human form of a usage error names the usage too
      const human = await world.run(["spec", taskId])
      expect(human.code).toBe(2)
      expect(human.stdout).toBe("")
      expect(human.stderr).toContain("--file: is required")
      expect(human.stderr).toContain("Usage: ratchet spec <task> --file <spec.md>")

      expect(await events(world, taskId)).toHaveLength(logBefore)
      expect(await engine.fingerprint(world)).toBe(storeBefore)
      expect(fs.readdirSync(path.join(world.repo, ".ratchet", "tasks")).sort()).toEqual(tasksBefore)
      expect(fs.existsSync(path.join(world.repo, ".ratchet", "x"))).toBe(false)

      // a store written by a newer Ratchet: refused, saying upgrade, and left as it was
      await engine.raiseSchemaVersion(world)
      const raised = await engine.fingerprint(world)
      for (const args of [["status", taskId], ["task", "create", "--goal", "Written by an older Ratchet"], ["init"]]) {
        const refused = await world.run([...args, "--json"])
        expect(refused.code, args.join(" ")).toBe(2)
        expect(refused.json.error).toMatchObject({ _tag: "@ratchet/storage/StorageError", reason: { _tag: "SchemaTooNew" } })
        expect(refused.json.error.message).toContain("upgrade Ratchet")
        expect(refused.json.error.message).toContain("Nothing was written")
      }
      expect(await engine.fingerprint(world)).toBe(raised)
    })

    it("10. a NUL in a command (a step's run or probe, a criterion's verify) is refused when the file is proposed, exit 2, nothing stored", async () => {
      const world = await makeWorld(engine)
      const taskId = await createTask(world, "Make the flaky date test deterministic")
      await closeBrief(world, taskId)
      const contractRefused = (result: Result, ...fragments: ReadonlyArray<string>) => {
        expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 2, stderr: "" })
        expect(result.json.error).toMatchObject({ _tag: "@ratchet/controller/ContractFileError", reason: "schema" })
        for (const fragment of fragments) expect(result.json.error.message).toContain(fragment)
      }
      const nul = "which no command line can carry"

      // A spec whose criterion verifies with a NUL in its command (YAML's "\0" escape).
      const before = await engine.fingerprint(world)
      const logBefore = (await events(world, taskId)).length
      const badSpec = specText().replace("command: node --version", String.raw`command: "node --version\0"`)
      contractRefused(await world.run(["spec", taskId, "--file", world.file("nul-spec.md", badSpec), "--json"]), "/acceptanceCriteria/0/verify/command", "criterion \"AC-001\"", nul)
      expect(await engine.fingerprint(world)).toBe(before)
      await world.ok(["spec", taskId, "--file", world.file("spec.md", specText())])
      await approveOk(world, taskId, "spec")
      await world.ok(["preflight", taskId])

      // A plan whose second step runs (and probes) a command with a NUL: both fields named.
      const plan = (second: string, probe: string) =>
        [
          planText().trimEnd(),
          "  - id: check-clock",
          "    title: Check the clock",
          "    acRefs: [AC-001]",
          "    run:",
          `      command: ${second}`,
          "    probe:",
          `      command: ${probe}`,
          ""
        ].join("\n")
      const planned = await engine.fingerprint(world)
      const stepsBefore = (await events(world, taskId)).length
      const refused = await world.run(["plan", taskId, "--file", world.file("nul-plan.yaml", plan(String.raw`"printf 'a\0b'"`, String.raw`"test -f a\0"`)), "--json"])
      contractRefused(refused, "/steps/1/run/command", "/steps/1/probe/command", "step \"check-clock\"", nul, "remove it")
      expect(refused.json.error.message).not.toContain("/steps/0/")
      expect(await engine.fingerprint(world)).toBe(planned)
      expect(await events(world, taskId)).toHaveLength(stepsBefore)
      expect(stepsBefore).toBeGreaterThan(logBefore)

      // The same plan without the NUL is accepted.
      const accepted = await world.run(["plan", taskId, "--file", world.file("plan.yaml", plan(String.raw`"printf 'a b'"`, "\"test -f a\"")), "--json"])
      expect({ code: accepted.code, stderr: accepted.stderr }).toEqual({ code: 0, stderr: "" })
      expect((await status(world, taskId)).state).toBe("PLAN_READY")
    })
  })
}
