/**
 * A project for the benchmarks that run Ratchet against a prepared store: a git repository whose
 * `.ratchet/project.json` names a fixed project id (the one the prepared store's tasks belong to),
 * made a Ratchet project by the controller's own `Workspace.init`, as `ratchet init` does.
 */
import * as Workspace from "@ratchet/controller/Workspace"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { gitRepository, runOk } from "../startup/processes.js"

export const repositoryRoot = fileURLToPath(new URL("../..", import.meta.url))

/** The `ratchet` bin (it loads the bundle `apps/cli/build.mjs` writes). */
export const cliBin = path.join(repositoryRoot, "apps", "cli", "bin", "ratchet.mjs")

/** The `ratchet-runner` bin (it loads the bundle `apps/runner/build.mjs` writes). */
export const runnerBin = path.join(repositoryRoot, "apps", "runner", "bin", "ratchet-runner.mjs")

/** Builds the CLI and runner bundles from the current source. */
export const buildBundles = async (env: NodeJS.ProcessEnv, which: ReadonlyArray<"cli" | "runner">): Promise<void> => {
  for (const app of which) {
    await runOk({ file: process.execPath, args: [path.join(repositoryRoot, "apps", app, "build.mjs")], cwd: repositoryRoot, env })
  }
}

/** Writes `repo`'s `.ratchet/project.json` naming `projectId` (replacing any). */
export const writeProjectFile = (repo: string, projectId: string): void => {
  fs.mkdirSync(path.join(repo, ".ratchet"), { recursive: true })
  fs.writeFileSync(
    path.join(repo, ".ratchet", "project.json"),
    `${JSON.stringify({ schemaVersion: 1, projectId, displayName: projectId, createdAt: "2026-01-01T00:00:00.000Z" }, null, 2)}\n`
  )
}

/** A git repository at `repo`, made the Ratchet project `projectId`; returns the located project. */
export const project = async (repo: string, env: NodeJS.ProcessEnv, projectId: string): Promise<Workspace.Located> => {
  await gitRepository(repo, env, { "README.md": "# A repository for the benchmarks\n", "src/index.ts": "export {}\n" })
  writeProjectFile(repo, projectId)
  await Effect.runPromise(Workspace.make.init(repo))
  return Effect.runPromise(Workspace.make.locate(repo))
}
