/**
 * The adapter generator, run as a process against a scratch copy of the files it reads and edits:
 * it writes the package wired to the host kit and places it in the layer table and the packaging
 * expectations; it refuses a bad name or an existing package and then writes nothing.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"

const repository = path.resolve(import.meta.dirname, "../..")
const script = path.join(repository, "tools", "new-host-adapter.mjs")
const scratch: Array<string> = []
afterAll(() => {
  for (const directory of scratch) fs.rmSync(directory, { recursive: true, force: true })
})

/** A scratch repository holding only what the generator reads and edits. */
const scratchRoot = (): string => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-generator-"))
  scratch.push(root)
  for (const file of ["tools/eslint/layers.js", "tools/pack-expectations.json", "packages/host-claude-code/package.json", "packages/host-claude-code/LICENSE", "packages/host-claude-code/tsconfig.json", "packages/host-claude-code/tsconfig.build.json", "packages/host-claude-code/vitest.config.ts"]) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true })
    fs.copyFileSync(path.join(repository, file), path.join(root, file))
  }
  return root
}

const generate = (root: string, ...args: ReadonlyArray<string>) => spawnSync(process.execPath, [script, ...args, "--root", root], { encoding: "utf8" })

describe("tools/new-host-adapter.mjs", () => {
  it("writes the package wired to the host kit and places it in the layer table", () => {
    const root = scratchRoot()
    const result = generate(root, "my-agent", "--title", "My Agent")
    expect(result.status, result.stderr).toBe(0)
    const directory = path.join(root, "packages", "host-my-agent")
    const files = fs.readdirSync(directory, { recursive: true }).map(String).sort()
    expect(files).toEqual(expect.arrayContaining(["LICENSE", "README.md", "pack-smoke.mjs", "package.json", "src/MyAgent.ts", "src/index.ts", "test/HostKit.test.ts", "test/fixtures/PreToolUse.Edit.json", "tsconfig.json"]))
    const manifest = JSON.parse(fs.readFileSync(path.join(directory, "package.json"), "utf8"))
    expect(manifest).toMatchObject({ name: "@ratchet/host-my-agent", dependencies: { "@ratchet/host": "0.0.0" }, scripts: { "pack-check": "node ../../tools/pack-check.mjs packages/host-my-agent" } })
    // The sibling's manifest is the template: what names the package's own place must not be the sibling's.
    expect(manifest).toMatchObject({
      repository: { type: "git", url: "git+https://github.com/ratchet-dev/ratchet.git", directory: "packages/host-my-agent" },
      homepage: "https://github.com/ratchet-dev/ratchet/tree/main/packages/host-my-agent#readme",
      license: "MIT"
    })
    expect(manifest.keywords).toContain("my-agent")
    expect(manifest.keywords).not.toContain("claude-code")
    expect(fs.readFileSync(path.join(directory, "LICENSE"), "utf8")).toContain("MIT License")
    expect(fs.readFileSync(path.join(directory, "README.md"), "utf8")).not.toMatch(/\]\((?!https:\/\/)/)
    expect(fs.readFileSync(path.join(directory, "test", "HostKit.test.ts"), "utf8")).toContain("HostKit.suite(\"my-agent adapter: the host kit\"")
    expect(fs.readFileSync(path.join(directory, "src", "MyAgent.ts"), "utf8")).toContain("export const name = \"my-agent\"")
    for (const fixture of fs.readdirSync(path.join(directory, "test", "fixtures"))) {
      expect(JSON.parse(fs.readFileSync(path.join(directory, "test", "fixtures", fixture), "utf8")).hook_event_name).toBe(fixture.split(".")[0])
    }
    expect(fs.readFileSync(path.join(root, "tools", "eslint", "layers.js"), "utf8")).toMatch(/\["@ratchet\/host-claude-code"[^\]]*"@ratchet\/host-my-agent"\]/)
    expect(JSON.parse(fs.readFileSync(path.join(root, "tools", "pack-expectations.json"), "utf8"))["@ratchet/host-my-agent"]).toEqual({ runtimeDependencies: ["@ratchet/host", "effect"] })
  })

  it("refuses a bad name or an existing package, writing nothing", () => {
    const root = scratchRoot()
    const before = fs.readFileSync(path.join(root, "tools", "eslint", "layers.js"), "utf8")
    for (const name of ["My-Agent", "1agent", "agent--x", "../escape", "a/b", ""]) {
      const result = generate(root, name)
      expect(result.status, name).toBe(2)
      expect(result.stderr).toContain("new-host-adapter:")
    }
    expect(generate(root).status).toBe(2)
    const again = generate(root, "claude-code")
    expect(again.status).toBe(2)
    expect(again.stderr).toContain("already exists")
    expect(fs.readdirSync(path.join(root, "packages")).sort()).toEqual(["host-claude-code"])
    expect(fs.readFileSync(path.join(root, "tools", "eslint", "layers.js"), "utf8")).toBe(before)
  })
})
