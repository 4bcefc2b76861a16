/**
 * Lessons end to end (issue 21, ADR 0037), with the bundled CLI and a real runner: a verification
 * that fails proposes a candidate and observes it once (probationary); the same failure in a
 * second task's run verifies it, and a run failing twice the same way does not; a later task in
 * the lesson's scope gets it from `ratchet lessons query`. Three unassisted successes in scope
 * expire a probationary lesson once it is seven days old (days passed with libfaketime, which moves
 * a process's clock and its children's: Ratchet has no setting of its own that moves time), and
 * two successes, or six days, do not; an agent may not ask the evaluator. An agent proposes
 * but never pins or rejects; a person does, at a terminal with their key. Hostile lesson files are
 * refused with the field, the reason and the fix, and store nothing.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { type Engine, makeWorld, personalAct, removeWorlds, type Result, status, toPlanApproved, toSpecReady, type World } from "../harness.js"

const day = 24 * 60 * 60 * 1000

/** libfaketime, when installed (Debian's `faketime`; `.ci/run` and the README's setup install it). */
const faketime = ["/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1", "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1"].find((file) => fs.existsSync(file))

/** The environment of a command `days` days from now: every clock of the process and its children moved. */
const daysOn = (days: number): Record<string, string> => {
  if (days === 0) return {}
  if (faketime === undefined) throw new Error("libfaketime is not installed (apt-get install faketime)")
  return { LD_PRELOAD: faketime, FAKETIME: `+${days}d`, FAKETIME_DONT_FAKE_MONOTONIC: "1" }
}

/** Under CI the expiry test must run; elsewhere it is skipped with one line when libfaketime is missing. */
const withClock = faketime !== undefined || process.env["CI"] === "true"
if (!withClock) console.log("lessons e2e: the expiry test is skipped: libfaketime is not installed (apt-get install faketime)")

/** A spec whose only criterion runs `check`, scoped to `test/**`. */
const specWith = (goal: string, check: string): string =>
  [
    "---",
    `goal: ${JSON.stringify(goal)}`,
    "nonGoals:",
    `  - "Rewrite the date library"`,
    "constraints:",
    `  - "No new runtime dependencies"`,
    "context:",
    "  relevantPaths:",
    `    - "test/date.test.js"`,
    "acceptanceCriteria:",
    "  - id: AC-001",
    `    outcome: "The date test passes in every timezone"`,
    "    required: true",
    "    verify:",
    `      command: ${JSON.stringify(check)}`,
    "execution:",
    "  allowedScope:",
    `    - "test/**"`,
    "---",
    "# The date test",
    ""
  ].join("\n")

/** A plan of one step running `command`. */
const planWith = (command: string): string =>
  ["steps:", "  - id: fix-date", `    title: "Fix the date test"`, "    acRefs: [AC-001]", "    run:", `      command: ${JSON.stringify(command)}`, ""].join("\n")

/** The check that fails the same way in every task: one line on stderr, exit 1. */
const failing = "node -e \"console.error('the date test expected UTC'); process.exit(1)\""

/** `ratchet run` to VERIFYING. */
const runToVerifying = async (world: World, taskId: string, env: Record<string, string> = {}): Promise<void> => {
  const ran = await world.run(["run", taskId], { env })
  expect(ran.code, ran.stdout + ran.stderr).toBe(0)
  expect((await status(world, taskId)).state).toBe("VERIFYING")
}

/** A task whose step changes nothing and whose criterion fails: run, verified (REVISE). */
const failingTask = async (world: World, goal: string): Promise<{ readonly taskId: string; readonly verified: Result }> => {
  const taskId = await toPlanApproved(world, goal, specWith(goal, failing), planWith("node --version"))
  await runToVerifying(world, taskId)
  const verified = await world.verify(taskId)
  expect(verified.code, verified.stdout + verified.stderr).toBe(3)
  expect(verified.json.outcome).toBe("REVISE")
  return { taskId, verified }
}

/**
 * A task whose step changes `test/date.test.js` (in the lesson's scope) and whose criterion
 * passes, run, verified and driven to COMPLETED `days` days from now.
 */
const succeedingTask = async (world: World, goal: string, days: number): Promise<string> => {
  const taskId = await toPlanApproved(world, goal, specWith(goal, "node --version"), planWith(`echo '// ${goal.replace(/[^A-Za-z ]/g, "")}' >> test/date.test.js`))
  const clock = daysOn(days)
  await runToVerifying(world, taskId, clock)
  const verified = await world.verify(taskId, [], "", clock)
  expect(verified.json.outcome, verified.stdout).toBe("APPROVED")
  const done = await world.run(["done", taskId, "--json"], { env: clock })
  expect(done.code, done.stdout + done.stderr).toBe(0)
  expect(done.json.state).toBe("COMPLETED")
  return taskId
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON documents, read field by field
const lessonsOf = async (world: World): Promise<ReadonlyArray<any>> => (await world.ok(["lessons", "list", "--json"])).json.lessons
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a JSON document
const showLesson = async (world: World, id: string): Promise<any> => (await world.ok(["lessons", "show", id, "--json"])).json

/** A lesson file's text for this world's project. */
const lessonYaml = (world: World, extra: ReadonlyArray<string> = [], paths: ReadonlyArray<string> = ["test/**"]): string => {
  const projectId = (JSON.parse(fs.readFileSync(path.join(world.repo, ".ratchet", "project.json"), "utf8")) as { projectId: string }).projectId
  return [
    "scope:",
    `  projectId: ${projectId}`,
    "  paths:",
    ...paths.map((p) => `    - ${JSON.stringify(p)}`),
    "trigger: Writing a test that reads the current date",
    "actualRule: Freeze the clock and set TZ=UTC in the test, never rely on the machine's zone",
    ...extra,
    ""
  ].join("\n")
}

export const lessons = (engine: Engine): void => {
  describe(`ratchet lessons on ${engine.name}`, () => {
    afterAll(removeWorlds)

    it("the same verification failure in two tasks' runs verifies one lesson, one run failing twice does not; a later task in scope gets it", async () => {
      const world = await makeWorld(engine)
      const first = await failingTask(world, "Make the date test pass in every zone")
      // the failure proposed a candidate and observed it once: probationary
      let listed = await lessonsOf(world)
      expect(listed).toHaveLength(1)
      const id = listed[0].id as string
      expect(id).toMatch(/^fp-[0-9a-f]{16}$/)
      expect(listed[0].status).toBe("probationary")
      let shown = await showLesson(world, id)
      expect(shown.lesson.body.fingerprints).toHaveLength(1)
      expect(shown.lesson.body.scope.paths).toEqual(["test/**"])
      expect(shown.lesson.failureRuns).toEqual([first.verified.json.runId])
      expect(shown.events.map((e: { type: string }) => e.type)).toEqual(["LessonProposed", "LessonFailureObserved", "LessonTransitioned"])
      expect(fs.existsSync(path.join(world.repo, ".ratchet", "lessons"))).toBe(false)

      // the same run fails the same way again (a revision that changed nothing): still one run
      await runToVerifying(world, first.taskId)
      const again = await world.verify(first.taskId)
      expect(again.json.outcome).toBe("REVISE")
      expect(again.json.runId).toBe(first.verified.json.runId)
      listed = await lessonsOf(world)
      expect(listed.map((l) => [l.id, l.status])).toEqual([[id, "probationary"]])
      shown = await showLesson(world, id)
      expect(shown.lesson.failureRuns).toHaveLength(1)

      // nothing verified is served yet
      const later = await toSpecReady(world, "Add a test for the date parser", specWith("Add a test for the date parser", "node --version"))
      expect((await world.ok(["lessons", "query", "--task", later, "--json"])).json.lessons).toEqual([])

      // another task's run fails the same way: verified by two runs
      const second = await failingTask(world, "Stop the date test failing at midnight")
      expect(second.verified.json.runId).not.toBe(first.verified.json.runId)
      listed = await lessonsOf(world)
      expect(listed.map((l) => [l.id, l.status])).toEqual([[id, "verified"]])
      shown = await showLesson(world, id)
      const transitions = shown.events.filter((e: { type: string }) => e.type === "LessonTransitioned")
      expect(transitions).toHaveLength(2)
      expect(transitions.every((e: { actor: { kind: string; id: string } }) => e.actor.kind === "system")).toBe(true)
      expect(transitions.map((e: { change: { to: string; rule: string; ruleVersion: string } }) => [e.change.to, e.change.rule, e.change.ruleVersion])).toEqual([
        ["probationary", "observed", "ratchet-lessons/1"],
        ["verified", "two_runs", "ratchet-lessons/1"]
      ])

      // a later task in the lesson's scope is handed it
      const query = await world.ok(["lessons", "query", "--task", later, "--json"])
      expect(query.json.lessons.map((l: { id: string }) => l.id)).toEqual([id])
      expect(query.json.lessons[0].summary.length).toBeLessThanOrEqual(400)
      expect(query.json.recorded).toBe(false) // the task is not running: there is no run to help
      const text = await world.ok(["lessons", "query", "--task", later])
      expect(text.stdout).toContain(id)
      // read for a running task (from an agent's shell, or by a person who may pass it on), the
      // lesson is recorded as shown to its run, as the hooks and MCP record theirs
      const forRunning = await world.ok(["lessons", "query", "--task", second.taskId, "--json"], { env: { RATCHET_ACTOR: "agent:claude" } })
      expect(forRunning.json).toMatchObject({ taskId: second.taskId, recorded: true })
      expect(forRunning.json.lessons.map((l: { id: string }) => l.id)).toEqual([id])
      const shownBy = (await showLesson(world, id)).events.filter((e: { type: string }) => e.type === "LessonShown")
      expect(shownBy.map((e: { actor: { kind: string; id: string } }) => e.actor)).toEqual([{ kind: "system", id: "lessons-cli" }])
      // the tasks' own lifecycles were not changed by the lessons
      expect((await status(world, first.taskId)).state).toBe("BLOCKED")
      expect((await status(world, second.taskId)).state).toBe("RUNNING")
    }, 300_000)

    it.runIf(withClock)("three unassisted successes in scope expire a probationary lesson once it is seven days old; two successes, or six days, do not", async () => {
      const world = await makeWorld(engine)
      await failingTask(world, "Make the date test pass in every zone")
      const [lesson] = await lessonsOf(world)
      expect(lesson.status).toBe("probationary")
      const id = lesson.id as string

      await succeedingTask(world, "Tidy the date test", 0)
      await succeedingTask(world, "Name the cases of the date test", 6)
      let shown = await showLesson(world, id)
      expect(shown.lesson.status).toBe("probationary")
      expect(shown.lesson.successes).toHaveLength(2)

      await succeedingTask(world, "Comment the date test", 6)
      shown = await showLesson(world, id)
      // three successes, but six days: still probationary
      expect(shown.lesson.successes).toHaveLength(3)
      expect(shown.lesson.status).toBe("probationary")
      const sixDays = await world.ok(["lessons", "evaluate", "--json"], { env: daysOn(6) })
      expect(sixDays.json.changed).toEqual([])

      // No setting of Ratchet's moves its clock: the variable an earlier build honoured is nothing now.
      const backdoor = await world.ok(["lessons", "evaluate", "--json"], { env: { RATCHET_LESSONS_CLOCK_OFFSET_MS: String(8 * day) } })
      expect(backdoor.json.changed).toEqual([])
      // An agent may not ask the evaluator, whatever its clock says.
      const agent = await world.run(["lessons", "evaluate", "--json"], { env: { ...daysOn(8), RATCHET_ACTOR: "agent:claude" } })
      expect(agent.code).toBe(2)
      expect(agent.json.error.field).toBe("actor")
      expect((await showLesson(world, id)).lesson.status).toBe("probationary")

      // seven days: the evaluator expires it
      const sevenDays = await world.ok(["lessons", "evaluate", "--json"], { env: daysOn(7) })
      expect(sevenDays.json.changed).toEqual([{ id, from: "probationary", to: "expired" }])
      shown = await showLesson(world, id)
      expect(shown.lesson.status).toBe("expired")
      const expiry = shown.events.at(-1)
      expect(expiry).toMatchObject({ type: "LessonTransitioned", actor: { kind: "system" }, change: { from: "probationary", to: "expired", rule: "outlived" } })

    }, 300_000)

    it("an agent proposes but never pins or rejects; a person does, at a terminal with their key", async () => {
      const world = await makeWorld(engine)
      const agent = { RATCHET_ACTOR: "agent:claude", RATCHET_APPROVER_KEY: path.join(world.root, "no-such-key.json") }
      const file = world.file("lesson.yaml", lessonYaml(world))
      const proposed = await world.run(["lessons", "propose", "--file", file, "--id", "tz-in-tests", "--json"], { env: agent })
      expect(proposed.code, proposed.stdout + proposed.stderr).toBe(0)
      expect(proposed.json.lesson).toMatchObject({ id: "tz-in-tests", status: "candidate", proposedBy: { kind: "agent", id: "claude" } })
      expect(fs.readFileSync(path.join(world.repo, ".ratchet", "lessons", "tz-in-tests.yaml"), "utf8")).toContain("# Lesson tz-in-tests: candidate")
      const other = await world.run(["lessons", "propose", "--file", world.file("other.yaml", lessonYaml(world, ["rootCause: The CI runners are in UTC"])), "--json"], {
        env: agent
      })
      expect(other.code, other.stdout).toBe(0)
      const otherId = other.json.lesson.id as string
      expect(otherId).toMatch(/^l-[0-9a-f]{12}$/)

      // an agent, off a terminal or on one, without the person's key: refused, nothing stored
      const before = await engine.fingerprint(world)
      // naming a failure's fingerprint, even declared as a person: only an observed failure or a
      // person's signed edit ties a lesson to one (two runs failing with it would verify the text)
      const named = world.file("named.yaml", lessonYaml(world, ["fingerprints: [\"fp:exit:1:0123456789abcdef\"]"]))
      for (const actor of ["agent:claude", "user:ana"]) {
        const refused = await world.run(["lessons", "propose", "--file", named, "--id", "named", "--json"], { env: { ...agent, RATCHET_ACTOR: actor } })
        expect(refused.code, `${actor}: ${refused.stdout}`).toBe(2)
        expect(refused.json.error, actor).toMatchObject({ _tag: "@ratchet/kernel/LessonCommandRefused", code: "observed_fingerprints_only" })
        expect(refused.json.error.fix).toContain("ratchet lessons edit")
      }
      for (const verb of ["pin", "reject", "deprecate"]) {
        const refused = await world.run(["lessons", verb, "tz-in-tests", "--json"], { env: agent })
        expect(refused.code, refused.stdout).toBe(2)
        expect(refused.json.error).toMatchObject({ _tag: "@ratchet/kernel/LessonCommandRefused", code: "person_only" })
        expect(refused.json.error.fix).toContain(`ratchet lessons ${verb} tz-in-tests`)
      }
      const onTty = await world.tty(["lessons", "pin", "tz-in-tests", "--json"], "\n", agent)
      expect(onTty.json.error.code).toBe("person_only")
      // a script with no terminal, as a person: still not a control
      const script = await world.run(["lessons", "pin", "tz-in-tests", "--json"])
      expect(script.code).toBe(2)
      expect(script.json.error.code).toBe("approval_requires_terminal")
      expect(await engine.fingerprint(world)).toBe(before)

      // the person: shown the lesson and its digest, types it and the passphrase
      const pinned = await personalAct(world, ["lessons", "pin", "tz-in-tests", "--reason", "we hit this every release"])
      expect(pinned.result.code, pinned.result.stdout).toBe(0)
      expect(pinned.result.json.lesson.status).toBe("enforced")
      expect(fs.readFileSync(path.join(world.repo, ".ratchet", "lessons", "tz-in-tests.yaml"), "utf8")).toContain("# Lesson tz-in-tests: enforced")
      const rejected = await personalAct(world, ["lessons", "reject", otherId])
      expect(rejected.result.json.lesson.status).toBe("rejected")
      const shown = await showLesson(world, "tz-in-tests")
      const control = shown.events.at(-1)
      expect(control).toMatchObject({ type: "LessonControlled", actor: { kind: "user", id: "e2e-approver" } })
      // a terminal lesson moves no more
      const again = await world.tty(["lessons", "pin", otherId, "--json"], "\n")
      expect(again.json.error.code).toBe("terminal_status")

      // an edit is signed over the new text; the status is kept
      const edited = world.file("edited.yaml", lessonYaml(world, ["rootCause: The CI runners are in UTC, laptops are not"]))
      const edit = await personalAct(world, ["lessons", "edit", "tz-in-tests", "--file", edited])
      expect(edit.result.json.lesson).toMatchObject({ status: "enforced", revision: 2 })
      expect(edit.result.json.lesson.body.rootCause).toBe("The CI runners are in UTC, laptops are not")

      // superseded by another live lesson, named in the receipt; a replacement that is not live is refused before the prompt
      const third = await world.ok(["lessons", "propose", "--file", world.file("third.yaml", lessonYaml(world, ["rootCause: Set TZ in the test runner's config"])), "--json"])
      const thirdId = third.json.lesson.id as string
      const byRejected = await world.tty(["lessons", "supersede", "tz-in-tests", "--by", otherId, "--json"], "\n")
      expect(byRejected.json.error).toMatchObject({ _tag: "@ratchet/kernel/LessonCommandRefused" })
      const superseded = await personalAct(world, ["lessons", "supersede", "tz-in-tests", "--by", thirdId])
      expect(superseded.result.json.lesson).toMatchObject({ status: "superseded", supersededBy: thirdId })
    }, 300_000)

    it("hostile lesson files are refused with the field, the reason and the fix, and store nothing", async () => {
      const world = await makeWorld(engine)
      const before = await engine.fingerprint(world)
      const cases: ReadonlyArray<readonly [string, string | Uint8Array, string, string]> = [
        ["oversized.yaml", lessonYaml(world, [`rootCause: ${"x".repeat(70_000)}`]), "too_large", "64 KiB"],
        ["bad.yaml", "scope: [\n  projectId: x\n", "syntax", "line"],
        ["traversal.yaml", lessonYaml(world, [], ["../../etc/**"]), "schema", "/scope/paths/0"],
        ["absolute.yaml", lessonYaml(world, [], ["/etc/passwd"]), "schema", "/scope/paths/0"],
        ["unknown.yaml", lessonYaml(world, ["approvedBy: me"]), "schema", "/approvedBy"],
        ["status.yaml", lessonYaml(world, ["status: verified"]), "schema", "/status"],
        ["long.yaml", lessonYaml(world, [`wrongAssumption: ${"y".repeat(401)}`]), "schema", "/wrongAssumption"],
        ["bidi.yaml", lessonYaml(world, ["wrongAssumption: \"safe \\u202e txet\""]), "schema", "/wrongAssumption"],
        ["alias.yaml", "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n", "syntax", "alias"],
        ["nul.yaml", new Uint8Array([0x61, 0x3a, 0x20, 0x00, 0x0a]), "not_utf8", "NUL"]
      ]
      for (const [name, content, reason, names] of cases) {
        const refused = await world.run(["lessons", "propose", "--file", world.file(name, content), "--json"])
        expect(refused.code, `${name}: ${refused.stdout}`).toBe(2)
        expect(refused.json.error, name).toMatchObject({ _tag: "@ratchet/controller/ContractFileError", kind: reason === "not_utf8" ? "file" : "lesson", reason })
        expect(refused.json.error.message, name).toContain(names)
      }
      // another project's lesson, and a path that is no file
      const foreign = await world.run(["lessons", "propose", "--file", world.file("foreign.yaml", lessonYaml(world).replace(/projectId: .*/, "projectId: prj-other")), "--json"])
      expect(foreign.json.error).toMatchObject({ field: "scope.projectId" })
      const directory = await world.run(["lessons", "propose", "--file", world.root, "--json"])
      expect(directory.json.error.reason).toBe("not_a_file")
      // an id that would be a path
      const traversalId = await world.run(["lessons", "propose", "--file", world.file("ok.yaml", lessonYaml(world)), "--id", "../x", "--json"])
      expect(traversalId.json.error).toMatchObject({ field: "lesson" })
      expect(await engine.fingerprint(world)).toBe(before)
      expect(await lessonsOf(world)).toEqual([])
      expect(fs.existsSync(path.join(world.repo, ".ratchet", "lessons"))).toBe(false)
    }, 300_000)
  })
}
