/**
 * The run page against history: `ratchet ui`'s pages of one task of 10⁴ events (a run of about
 * 1,100 attempts, RUNNING with an open one) against the same pages of a shorter task. Target:
 * within 1.5× — a page reads its window, not the history: the task page 200 events of it, the
 * run page the run's latest 200 attempts (from their step boundaries, by index).
 *
 * Each size is the SQLite store the reads benchmark builds and keeps (reads/history.ts: the
 * kernel-decided lifecycle prefix, then the run loop's events attempt after attempt). One
 * `ratchet ui` of the bundled CLI serves each store; a round fetches the page over loopback HTTP
 * (keep-alive) as a browser would, and checks the answer is the page (200, its marker), so a page
 * that failed fast cannot pass for a fast one.
 *
 * Pairs:
 * - `ui/task-page-10^4`: `/tasks/<task>`, the gate, the revisions and the first 200 events,
 *   against the same page of a task of 10² events;
 * - `ui/run-page-10^4`: `/tasks/<task>/run`, the timeline and the attempts' table, against the
 *   run page of a task of 2·10³ events, a run of about 220 attempts: both draw 200, so the ratio
 *   is what the longer history adds.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import type { Pair, Prepared, Skipped, Suite } from "../lib/Pair.js"
import { cleanEnv } from "../startup/processes.js"
import { cachedStore, wanted } from "../reads/history.js"
import { buildBundles, cliBin, project } from "../reads/world.js"

const projectId = "bench-reads"
const sizes = [100, 2_000, 10_000] as const
type Size = (typeof sizes)[number]
const label: Record<Size, string> = { 100: "10^2", 2_000: "2x10^3", 10_000: "10^4" }
const taskIdOf = (size: Size) => `t-reads-${size}`
const pairIds = ["ui/task-page-10^4", "ui/run-page-10^4"] as const

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })

/** GET `url`: the status and the body. */
const get = (url: string): Promise<{ readonly status: number; readonly body: string }> =>
  new Promise((resolve, reject) => {
    const request = http.get(url, { agent }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }))
      response.on("error", reject)
    })
    request.on("error", reject)
  })

/** `ratchet ui --json` over the store in `home`, and the URL it printed. */
const serve = (repo: string, home: string, env: NodeJS.ProcessEnv): Promise<{ readonly child: ChildProcess; readonly url: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliBin, "ui", "--json"], { cwd: repo, env: { ...env, RATCHET_HOME: home }, stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    let err = ""
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8")
      if (out.includes("\n")) resolve({ child, url: (JSON.parse(out.split("\n")[0] as string) as { url: string }).url })
    })
    child.stderr?.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")))
    child.on("exit", (code) => reject(new Error(`ratchet ui exited ${code}: ${out}${err}`)))
  })

/** @see the module comment */
export const suite: Suite = {
  name: "The run page against history",
  prepare: async (): Promise<Prepared | Skipped> => {
    if (!wanted(pairIds)) return { _tag: "Skipped", reason: "no pair of this suite matches the filter" }
    const env = cleanEnv()
    await buildBundles(env, ["cli"])
    const facts: Record<string, string> = {}
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-bench-ui-")))
    const servers: Array<ChildProcess> = []
    const close = async () => {
      for (const child of servers) child.kill("SIGTERM")
      agent.destroy()
      fs.rmSync(root, { recursive: true, force: true })
    }
    try {
      const repo = path.join(root, "repo")
      await project(repo, env, projectId)
      const urls = new Map<Size, string>()
      for (const size of sizes) {
        // The same store the reads benchmark keeps (the same name and tasks), copied: the page only
        // reads, but the copy keeps the cached store as it was whatever a server does on open.
        const built = await cachedStore(`reads-${label[size]}`, [{ projectId, taskId: taskIdOf(size), length: size }])
        const home = path.join(root, `home-${label[size]}`)
        fs.mkdirSync(home)
        for (const name of fs.readdirSync(built.directory)) {
          if (name.startsWith("ratchet.db")) fs.copyFileSync(path.join(built.directory, name), path.join(home, name))
        }
        const served = await serve(repo, home, env)
        servers.push(served.child)
        urls.set(size, served.url)
        facts[`store ${label[size]}`] = built.builtMs === null ? "built earlier (cached)" : `built now in ${(built.builtMs / 1000).toFixed(0)} s`
      }
      const pageOf = (size: Size, which: "task" | "run") => `${urls.get(size)!}tasks/${taskIdOf(size)}${which === "run" ? "/run" : ""}`
      const marker = { task: "<h2>History", run: "id=\"timeline\"" } as const
      for (const size of sizes) {
        for (const which of ["task", "run"] as const) {
          const page = await get(pageOf(size, which))
          if (page.status !== 200 || !page.body.includes(marker[which])) {
            throw new Error(`the ${which} page of ${label[size]} answered ${page.status} without ${marker[which]}: ${page.body.slice(0, 300)}`)
          }
          facts[`${which} page ${label[size]}`] = `${(page.body.length / 1024).toFixed(0)} KiB${
            which === "run" ? `, ${page.body.match(/<rect class="attempt/g)?.length ?? 0} attempts drawn` : ""
          }`
        }
      }
      const side = (size: Size, which: "task" | "run") => async (_round: number, operations: number) => {
        for (let i = 0; i < operations; i++) {
          const page = await get(pageOf(size, which))
          if (page.status !== 200 || !page.body.includes(marker[which])) throw new Error(`the ${which} page answered ${page.status}`)
        }
      }
      const versus = { target: 1.5, targetText: "≤ 1.5×", eventsPerOperation: 1 }
      const pairs: ReadonlyArray<Pair> = [
        { id: pairIds[0], operation: "GET the task page, task of 10^4 events", ours: side(10_000, "task"), raw: side(100, "task"), operationsPerRound: 20, baseline: "10^2 events", ...versus },
        { id: pairIds[1], operation: "GET the run page, 200 of ~1,100 attempts drawn", ours: side(10_000, "run"), raw: side(2_000, "run"), operationsPerRound: 20, baseline: "2x10^3 events", ...versus }
      ]
      return { _tag: "Prepared", pairs, facts, close }
    } catch (error) {
      await close()
      throw error
    }
  }
}
