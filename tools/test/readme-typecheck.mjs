#!/usr/bin/env node
/**
 * Type-checks README examples in a process of its own, for `readme-examples.test.ts`: a compile of
 * every example against the packages' sources takes tens of seconds of one thread, and done inside
 * a vitest worker it kept the worker from answering its runner (vitest's "Timeout calling
 * onTaskUpdate" on a loaded machine). Reads `{ repository, examples: [{ file, readme, line, code }] }`
 * as JSON on standard input; writes the errors (`<readme>:<line>: <message>`) as a JSON array.
 */
import * as path from "node:path"
import ts from "typescript"

const input = JSON.parse(await new Promise((resolve, reject) => {
  let text = ""
  process.stdin.setEncoding("utf8")
  process.stdin.on("data", (chunk) => (text += chunk))
  process.stdin.on("end", () => resolve(text))
  process.stdin.on("error", reject)
}))
/** @type {{ repository: string, examples: Array<{ file: string, readme: string, line: number, code: string }> }} */
const { examples, repository } = input

/** The repository's compiler options, loosened only where an excerpt is not a whole program. */
const compilerOptions = () => {
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

const byFile = new Map(examples.map((example) => [example.file, example]))
const options = compilerOptions()
const host = ts.createCompilerHost(options)
const getSourceFile = host.getSourceFile.bind(host)
/** @type {typeof host.getSourceFile} */
host.getSourceFile = (fileName, language, onError, fresh) => {
  const example = byFile.get(path.resolve(fileName))
  return example === undefined ? getSourceFile(fileName, language, onError, fresh) : ts.createSourceFile(fileName, example.code, language, true)
}
const fileExists = host.fileExists.bind(host)
/** @param {string} fileName */
host.fileExists = (fileName) => byFile.has(path.resolve(fileName)) || fileExists(fileName)
const program = ts.createProgram({ rootNames: [...byFile.keys()], options, host })
const errors = examples.flatMap((example) => {
  const source = program.getSourceFile(example.file)
  if (source === undefined) return [`${path.relative(repository, example.readme)}:${example.line}: the example was not compiled`]
  return [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)].map((diagnostic) => {
    const at = diagnostic.start === undefined ? 0 : source.getLineAndCharacterOfPosition(diagnostic.start).line
    return `${path.relative(repository, example.readme)}:${example.line + at}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, " ")}`
  })
})
process.stdout.write(JSON.stringify(errors))
