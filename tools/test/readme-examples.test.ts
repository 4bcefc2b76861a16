/**
 * The packages' READMEs are what npm shows: every `ts` example in them is type-checked against the
 * packages' exports (through the `@ratchet/source` condition, so no build is needed), and every
 * link is absolute, because a relative link breaks on npm's page.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import ts from "typescript"
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

/** The repository's compiler options, loosened only where an excerpt is not a whole program. */
const compilerOptions = (): ts.CompilerOptions => {
  const base = ts.getParsedCommandLineOfConfigFile(path.join(repository, "tsconfig.base.json"), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"))
    }
  })
  if (base === undefined) throw new Error("tsconfig.base.json could not be read")
  // An example may import a module to show it exists, or define a function it does not call.
  return { ...base.options, noEmit: true, noUnusedLocals: false, noUnusedParameters: false, types: ["node"] }
}

const typeErrors = (examples: ReadonlyArray<Example>): ReadonlyArray<string> => {
  const byFile = new Map(examples.map((example) => [example.file, example]))
  const options = compilerOptions()
  const host = ts.createCompilerHost(options)
  const getSourceFile = host.getSourceFile.bind(host)
  host.getSourceFile = (fileName, language, onError, fresh) => {
    const example = byFile.get(path.resolve(fileName))
    return example === undefined ? getSourceFile(fileName, language, onError, fresh) : ts.createSourceFile(fileName, example.code, language, true)
  }
  const fileExists = host.fileExists.bind(host)
  host.fileExists = (fileName) => byFile.has(path.resolve(fileName)) || fileExists(fileName)
  const program = ts.createProgram({ rootNames: [...byFile.keys()], options, host })
  return examples.flatMap((example) => {
    const source = program.getSourceFile(example.file)
    if (source === undefined) return [`${path.relative(repository, example.readme)}:${example.line}: the example was not compiled`]
    return [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)].map((diagnostic) => {
      const at = diagnostic.start === undefined ? 0 : source.getLineAndCharacterOfPosition(diagnostic.start).line
      return `${path.relative(repository, example.readme)}:${example.line + at}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, " ")}`
    })
  })
}

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

  it("hold examples that type-check against the packages' exports", () => {
    expect(typeErrors(readmes.flatMap(examplesOf))).toEqual([])
  }, 120_000)

  it("would report an example that does not type-check, at its README line", () => {
    const readme = path.join(packagesDir, "kernel", "README.md")
    const errors = typeErrors([
      { file: path.join(packagesDir, "kernel", "README.example-broken.ts"), readme, line: 10, code: `import { Digest } from "@ratchet/kernel"\n\nDigest.noSuchFunction()\n` }
    ])
    expect(errors).toEqual([expect.stringMatching(/^packages\/kernel\/README\.md:12: .*noSuchFunction/)])
  }, 120_000)
})
