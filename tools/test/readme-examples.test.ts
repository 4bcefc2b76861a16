/**
 * The packages' READMEs are what npm shows: every `ts` example in them is type-checked against the
 * packages' exports (through the `@ratchet/source` condition, so no build is needed), and every
 * link is absolute, because a relative link breaks on npm's page.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"

const repository = path.resolve(import.meta.dirname, "../..")
const packagesDir = path.join(repository, "packages")
const packageDirs = fs.readdirSync(packagesDir).filter((dir) => fs.existsSync(path.join(packagesDir, dir, "package.json")))
const readmes = packageDirs.map((dir) => path.join(packagesDir, dir, "README.md")).filter((file) => fs.existsSync(file))

interface Example {
  /** A virtual file beside the README, so imports resolve as they would from the package. */
  readonly file: string
  readonly readme: string
  /** The README line of the example's first line of code. */
  readonly line: number
  readonly code: string
}

/** Every ```ts block of `readme`. */
const examplesOf = (readme: string): ReadonlyArray<Example> => {
  const lines = fs.readFileSync(readme, "utf8").split("\n")
  const examples: Array<Example> = []
  for (let index = 0; index < lines.length; index++) {
    if (!/^```(ts|typescript)\s*$/.test(lines[index] ?? "")) continue
    const end = lines.findIndex((line, at) => at > index && line.startsWith("```"))
    if (end === -1) throw new Error(`${readme}:${index + 1}: an unclosed code block`)
    examples.push({
      file: path.join(path.dirname(readme), `README.example-${examples.length + 1}.ts`),
      readme,
      line: index + 2,
      code: lines.slice(index + 1, end).join("\n")
    })
    index = end
  }
  return examples
}

/**
 * The type errors of `examples`, compiled in a child process (`readme-typecheck.mjs`): a compile
 * of tens of seconds inside the vitest worker kept it from answering its runner under load.
 */
const typeErrors = (examples: ReadonlyArray<Example>): Promise<ReadonlyArray<string>> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(import.meta.dirname, "readme-typecheck.mjs")], { stdio: ["pipe", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("error", reject)
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`the README type-check exited ${code}: ${stderr.slice(-2000)}`))
      resolve(JSON.parse(stdout) as ReadonlyArray<string>)
    })
    child.stdin.end(JSON.stringify({ repository, examples }))
  })

describe("the packages' READMEs", () => {
  it("exist, one per package, each with an install line and an example", () => {
    const missing = packageDirs.filter((dir) => !fs.existsSync(path.join(packagesDir, dir, "README.md")))
    expect(missing).toEqual([])
    for (const readme of readmes) {
      const text = fs.readFileSync(readme, "utf8")
      expect(text, readme).toMatch(/```sh\nnpm install /)
      expect(examplesOf(readme).length, readme).toBeGreaterThan(0)
    }
  })

  it("link only to absolute URLs, which work on npm as on GitHub", () => {
    const relative = readmes.flatMap((readme) =>
      fs
        .readFileSync(readme, "utf8")
        .split("\n")
        .flatMap((line, index) =>
          [...line.matchAll(/\]\(([^)\s]+)\)/g)]
            .map((match) => match[1] ?? "")
            .filter((target) => !/^(https:\/\/|mailto:|#)/.test(target))
            .map((target) => `${path.relative(repository, readme)}:${index + 1}: ${target}`)
        )
    )
    expect(relative).toEqual([])
  })

  it("hold examples that type-check against the packages' exports", async () => {
    expect(await typeErrors(readmes.flatMap(examplesOf))).toEqual([])
  }, 600_000)

  it("would report an example that does not type-check, at its README line", async () => {
    const readme = path.join(packagesDir, "kernel", "README.md")
    const errors = await typeErrors([
      { file: path.join(packagesDir, "kernel", "README.example-broken.ts"), readme, line: 10, code: `import { Digest } from "@ratchet/kernel"\n\nDigest.noSuchFunction()\n` }
    ])
    expect(errors).toEqual([expect.stringMatching(/^packages\/kernel\/README\.md:12: .*noSuchFunction/)])
  }, 600_000)
})
