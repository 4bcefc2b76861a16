/**
 * `ratchet ui` in a real browser: Debian's Chromium driven by playwright-core, over stores the
 * bundled CLI made. One world holds a task with a hostile goal and step title, run to VERIFYING
 * through a failed attempt and its successor, verified by the world's approver: the task list, the
 * task page, the run timeline and the verification render; the hostile strings are text and no
 * script of theirs runs (a `window` flag they would set stays unset, and the page reports no CSP
 * violation of its own); every answer carries the CSP; a traversal attempt is 404; a write
 * elsewhere reloads the open page; a failed attempt opens on its own page; and a run page opened before `ratchet run` follows the run to
 * its end by itself. Another holds a run whose runner was SIGKILLed with its step's
 * effect dispatched: after the takeover the run page shows the Indeterminate attempt, its open
 * intent, the BLOCKED mark and the commands that settle it. A screenshot of each page goes to
 * reports/ui/.
 *
 * Without Chromium (`/usr/bin/chromium`, or RATCHET_CHROMIUM) the file skips with one line on a
 * developer machine and fails under CI=true, where `.ci/run` installs it.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { type Browser, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bin, cliRoot, type Engine, makeWorld, removeWorlds, specText, status, toPlanApproved, type World } from "../harness.js"
import { commandStep, planOf } from "./run.js"

const executable = process.env["RATCHET_CHROMIUM"] ?? "/usr/bin/chromium"
const present = fs.existsSync(executable)
const ci = process.env["CI"] === "true"
const shots = path.join(cliRoot, "reports", "ui")

const hostileGoal = "<script>window.pwned=1</script><img src=x onerror=\"window.pwned=2\"> & \"quotes\""
const hostileTitle = "<img src=x onerror=\"window.pwned=3\">"
const hostileOutput = "<script>window.pwned=5</script><img src=x onerror=\"window.pwned=6\">"

/** The page's global object as the checks see it (the test is compiled without the DOM's types). */
interface PageGlobal {
  pwned?: number
  violations?: Array<string>
  readonly document: { addEventListener: (type: string, listener: (event: { violatedDirective: string; blockedURI: string }) => void) => void }
}

/** Short leases, so a takeover is allowed a moment after the runner died. */
const leaseEnv = { RATCHET_LEASE_HEARTBEAT_MS: "100", RATCHET_LEASE_GRACE_MS: "300" }

/** `ratchet ui --json` in the world's repository, and the URL it printed. */
const serve = async (world: World, env: NodeJS.ProcessEnv = {}): Promise<{ readonly child: ChildProcess; readonly url: string }> => {
  const child = spawn(process.execPath, [bin, "ui", "--json"], { cwd: world.repo, env: { ...world.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
  const url = await new Promise<string>((resolve, reject) => {
    let out = ""
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8")
      const line = out.split("\n")[0]
      if (out.includes("\n") && line !== undefined) resolve(JSON.parse(line).url)
    })
    child.on("exit", (code) => reject(new Error(`ratchet ui exited ${code}: ${out}`)))
  })
  return { child, url }
}

/** A task whose runner was SIGKILLed with its one step's effect dispatched, taken over: BLOCKED on an Indeterminate attempt. */
const indeterminateTask = async (world: World): Promise<string> => {
  const marker = path.join(world.root, "marker.txt")
  const plan = planOf([commandStep("effect", `echo starting; sleep 0.5; echo ran >> ${JSON.stringify(marker)}`)])
  const taskId = await toPlanApproved(world, "A runner killed mid-step", specText(), plan)
  const crashed = await world.run(["run", taskId], { env: { ...leaseEnv, RATCHET_FAULT: "child-started" } })
  expect(crashed.code, crashed.stderr).toBe(1)
  await new Promise((resolve) => setTimeout(resolve, 800))
  const recovered = await world.run(["run", taskId, "--takeover", "--json"], { env: leaseEnv })
  expect(recovered.code, recovered.stdout + recovered.stderr).toBe(3)
  expect((await status(world, taskId)).state).toBe("BLOCKED")
  return taskId
}

/** The browser scenarios on `engine`'s store. */
export const runPage = (engine: Engine): void => {
  const skipped = !present && !ci
  if (skipped) process.stderr.write(`ratchet ui browser test skipped: no Chromium at ${executable} (apt-get install chromium, or set RATCHET_CHROMIUM)\n`)
  describe.skipIf(skipped)("ratchet ui in Chromium", { timeout: 60_000 }, () => {
    let world: World
    let taskId: string
    let ui: ChildProcess
    let url: string
    let crashed: { readonly world: World; readonly taskId: string; readonly ui: ChildProcess; readonly url: string }
    let browser: Browser
    let page: Page

    beforeAll(async () => {
      if (!present) throw new Error(`CI=true needs Chromium at ${executable} (.ci/run installs it with apt-get install chromium)`)
      fs.mkdirSync(shots, { recursive: true })
      const other = (async () => {
        const made = await makeWorld(engine)
        const id = await indeterminateTask(made)
        const served = await serve(made)
        return { world: made, taskId: id, ui: served.child, url: served.url }
      })()
      world = await makeWorld(engine)
      const marker = path.join(world.root, "flaky-ran-once")
      const plan = [
        "steps:",
        "  - id: build",
        `    title: ${JSON.stringify(hostileTitle)}`,
        "    acRefs: [AC-001]",
        "    run:",
        // Output that is markup and a terminal's escape: the attempt's page shows it as text.
        `      command: ${JSON.stringify(`printf '%s\\033[31mred\\n' ${JSON.stringify(hostileOutput)}`)}`,
        "  - id: flaky",
        "    title: \"Fails once, then passes\"",
        "    acRefs: [AC-001]",
        "    needs: [build]",
        "    run:",
        `      command: ${JSON.stringify(`if [ -f '${marker}' ]; then exit 0; else touch '${marker}'; exit 1; fi`)}`,
        ""
      ].join("\n")
      taskId = await toPlanApproved(world, hostileGoal, specText(), plan)
      // Run with traces exported (to a port where nothing listens: the runner only warns), so
      // the run records its trace and the page links it into the viewer RATCHET_TRACE_URL names.
      const ran = await world.run(["run", taskId], { env: { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" } })
      expect(ran.code, ran.stdout + ran.stderr).toBe(0)
      const verified = await world.verify(taskId)
      expect(verified.code, verified.stdout + verified.stderr).toBe(0)

      const served = await serve(world, { RATCHET_TRACE_URL: "http://127.0.0.1:16686/trace/{traceId}" })
      ui = served.child
      url = served.url
      crashed = await other
      browser = await chromium.launch({ executablePath: executable, args: ["--no-sandbox", "--disable-dev-shm-usage"] })
      page = await browser.newPage()
      await page.addInitScript(() => {
        const page = globalThis as unknown as PageGlobal
        page.violations = []
        page.document.addEventListener("securitypolicyviolation", (event) => page.violations?.push(`${event.violatedDirective} ${event.blockedURI}`))
      })
    }, 240_000)

    afterAll(async () => {
      await browser?.close()
      ui?.kill("SIGTERM")
      crashed?.ui.kill("SIGTERM")
      removeWorlds()
    })

    const noScriptRan = async () => {
      expect(await page.evaluate(() => (globalThis as unknown as PageGlobal).pwned)).toBeUndefined()
      expect(await page.evaluate(() => (globalThis as unknown as PageGlobal).violations)).toEqual([])
    }

    it("prints a loopback URL on a free port", () => {
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/)
    })

    it("shows the task list with the hostile goal as text, its state, and the CSP", async () => {
      const response = await page.goto(url)
      expect(response?.status()).toBe(200)
      const headers = response?.headers() ?? {}
      expect(headers["content-security-policy"]).toContain("script-src 'self'")
      expect(headers["x-content-type-options"]).toBe("nosniff")
      const row = page.locator(`#tasks tr[data-task="${taskId}"]`)
      await expect.poll(() => row.count()).toBe(1)
      expect(await row.locator(".goal").textContent()).toBe(hostileGoal)
      expect(await row.textContent()).toContain("VERIFYING")
      expect(await page.locator("img").count()).toBe(0)
      await noScriptRan()
      await page.screenshot({ path: path.join(shots, `${engine.name}-tasks.png`), fullPage: true })
    })

    it("shows the task: its gate, approvals with who and which digest, and commands to copy", async () => {
      await page.click(`#tasks a[href="/tasks/${taskId}"]`)
      await page.waitForURL(`${url}tasks/${taskId}`)
      expect(await page.locator("h1").textContent()).toBe(hostileGoal)
      expect(await page.locator("#gate h2").textContent()).toMatch(/VERIFYING → COMPLETED: CLEAR/)
      const approvals = page.locator("#history tr.h-approval")
      expect(await approvals.count()).toBe(3)
      expect(await approvals.first().textContent()).toContain("approved by user:")
      expect(await page.locator(".cmd code").first().textContent()).toMatch(/^ratchet /)
      await noScriptRan()
      await page.screenshot({ path: path.join(shots, `${engine.name}-task.png`), fullPage: true })
    })

    it("shows the run as a timeline: a lane per step, a bar per attempt, the successor linked", async () => {
      await page.goto(`${url}tasks/${taskId}/run`)
      const bars = page.locator("#timeline rect.attempt")
      expect(await bars.count()).toBe(3)
      const states = await bars.evaluateAll((rects) => rects.map((rect) => rect.getAttribute("data-state")))
      expect(states.sort()).toEqual(["Failed", "Succeeded", "Succeeded"])
      expect(await page.locator("#timeline path.successor").count()).toBe(1)
      expect(await page.locator("#timeline title").allTextContents()).toContain(`build: ${hostileTitle}`)
      expect(await page.locator("#attempts tr[data-state=Failed]").count()).toBe(1)
      expect(await page.locator("#traces a.trace").count()).toBe(1)
      expect(await page.locator("#traces a.trace").getAttribute("href")).toMatch(/^http:\/\/127\.0\.0\.1:16686\/trace\/[0-9a-f]{32}$/)
      expect(await page.locator("img").count()).toBe(0)
      await noScriptRan()
      await page.screenshot({ path: path.join(shots, `${engine.name}-run.png`), fullPage: true })
    })

    it("opens a failed attempt from its row: the command, its exit and its intents", async () => {
      await page.click("#attempts tr[data-state=Failed] a")
      await page.waitForURL(`${url}tasks/${taskId}/run/flaky/1`)
      expect(await page.locator("#attempt").textContent()).toContain("exit 1 in")
      expect(await page.locator("#attempt code").first().textContent()).toContain("flaky-ran-once")
      expect(await page.locator("#intents tr").count()).toBe(2)
      expect((await page.request.get(`${url}tasks/${taskId}/run/flaky/9`)).status()).toBe(404)
      await noScriptRan()
      await page.screenshot({ path: path.join(shots, `${engine.name}-attempt.png`), fullPage: true })
    })

    it("shows a command's hostile output as text on its attempt's page", async () => {
      await page.goto(`${url}tasks/${taskId}/run/build/1`)
      const output = await page.locator("#output").textContent()
      expect(output).toContain(hostileOutput)
      expect(output).toContain("\\u{1b}[31mred")
      expect(await page.locator("#output script, #output img").count()).toBe(0)
      await noScriptRan()
    })

    it("shows the verification: each criterion's verdict and its evidence", async () => {
      await page.goto(`${url}tasks/${taskId}/verification`)
      const criterion = page.locator("#criteria tr[data-ac=AC-001]")
      expect(await criterion.textContent()).toContain("PASS")
      expect(await page.locator("main").textContent()).toContain("node --version")
      await noScriptRan()
      await page.screenshot({ path: path.join(shots, `${engine.name}-verification.png`), fullPage: true })
    })

    it("answers a traversal attempt and an unknown task with 404, and a POST with 405", async () => {
      for (const target of ["tasks/..%2f..%2f..%2fetc%2fpasswd", "assets/..%2f..%2fpackage.json", "tasks/t-00000000"]) {
        const response = await page.request.get(`${url}${target}`)
        expect(response.status(), target).toBe(404)
        expect(response.headers()["content-security-policy"]).toBeDefined()
      }
      expect((await page.request.post(url)).status()).toBe(405)
    })

    it("reloads by itself when the store moves", async () => {
      await page.goto(url)
      const created = await world.ok(["task", "create", "--goal", "A second task, made while the page is open", "--json"])
      const second = created.json.taskId as string
      await page.waitForSelector(`#tasks tr[data-task="${second}"]`, { timeout: 15_000 })
      await noScriptRan()
    })

    it("follows a live run: the open run page shows its attempts as the runner records them", { timeout: 180_000 }, async () => {
      const plan = planOf([commandStep("first", "sleep 1"), `${commandStep("second", "sleep 1")}\n    needs: [first]`])
      const live = await toPlanApproved(world, "A run watched live", specText(), plan)
      await page.goto(`${url}tasks/${live}/run`)
      expect(await page.locator("h1").textContent()).toBe("No run yet")
      const running = world.run(["run", live])
      // The page reloads itself as the store moves: first a bar for the running step, then both done.
      await page.waitForSelector("#timeline rect.attempt", { timeout: 30_000 })
      await page.waitForFunction(
        () => (globalThis as unknown as { document: { querySelectorAll: (q: string) => { length: number } } }).document.querySelectorAll("#timeline rect.attempt[data-state=Succeeded]").length === 2,
        undefined,
        { timeout: 30_000 }
      )
      expect((await running).code).toBe(0)
      await noScriptRan()
    })

    it("shows a SIGKILLed runner's Indeterminate attempt, its open intent, BLOCKED and the commands that settle it", async () => {
      const response = await page.goto(`${crashed.url}tasks/${crashed.taskId}/run`)
      expect(response?.status()).toBe(200)
      expect(await page.locator("#timeline rect.attempt[data-state=Indeterminate]").count()).toBe(1)
      expect(await page.locator("#timeline circle.intent-open").count()).toBe(1)
      expect(await page.locator("#timeline rect.blocked").count()).toBeGreaterThanOrEqual(1)
      const alert = page.locator("#indeterminate")
      expect(await alert.isVisible()).toBe(true)
      const commands = await alert.locator(".cmd code").allTextContents()
      expect(commands).toEqual([`ratchet unblock ${crashed.taskId} --resolve effect succeeded`, `ratchet unblock ${crashed.taskId} --resolve effect failed`])
      expect(await page.locator("#attempts tr[data-state=Indeterminate]").textContent()).toContain("dispatched, outcome unknown")
      await noScriptRan()
      await page.screenshot({ path: path.join(shots, `${engine.name}-indeterminate.png`), fullPage: true })
      await page.goto(`${crashed.url}tasks/${crashed.taskId}`)
      expect(await page.locator("#blockers").textContent()).toContain("BLOCKED")
      expect(await page.locator("#gate h2").textContent()).toContain("BLOCKED")
    })

    it("shows the task completed: COMPLETED in the list and on the task, its timeline and verification kept", async () => {
      const done = await world.run(["done", taskId, "--json"])
      expect(done.code, done.stdout + done.stderr).toBe(0)
      expect(done.json.state).toBe("COMPLETED")
      await page.goto(url)
      expect(await page.locator(`#tasks tr:has(a[href="/tasks/${taskId}"])`).textContent()).toContain("COMPLETED")
      await page.goto(`${url}tasks/${taskId}`)
      expect(await page.locator("main").textContent()).toContain("COMPLETED")
      expect(await page.locator("#history").textContent()).toContain(`COMPLETED: run ${(await status(world, taskId)).run?.runId ?? "run-"}`)
      await page.goto(`${url}tasks/${taskId}/run`)
      expect(await page.locator("#timeline rect.attempt").count()).toBe(3)
      await page.goto(`${url}tasks/${taskId}/verification`)
      expect(await page.locator("#criteria tr[data-ac=AC-001]").textContent()).toContain("PASS")
      await noScriptRan()
      await page.screenshot({ path: path.join(shots, `${engine.name}-completed.png`), fullPage: true })
    })
  })
}
