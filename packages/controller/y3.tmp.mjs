import { parseDocument, LineCounter, Parser } from "yaml"
const opts = { uniqueKeys: true, strict: true, schema: "core", stringKeys: true, resolveKnownTags: false, logLevel: "error", prettyErrors: false, merge: false }
const cases = {
 flowdeep: () => "a: " + "[".repeat(+process.argv[3]) + "]".repeat(+process.argv[3]) + "\n",
 unclosed: () => "a: " + "[".repeat(+process.argv[3]) + "\n",
 mapdeep: () => "a: " + "{a: ".repeat(+process.argv[3]) + "1" + "}".repeat(+process.argv[3]) + "\n",
 seqinline: () => "- ".repeat(+process.argv[3]) + "x\n",
 blockmap: () => Array.from({length: +process.argv[3]}, (_, i) => " ".repeat(i) + "k:").join("\n") + "\n",
}
const src = cases[process.argv[2]]()
let t0 = Date.now()
let n = 0; for (const _ of new Parser().parse(src)) n++
console.log("cst", Date.now()-t0, "ms", n)
t0 = Date.now()
const doc = parseDocument(src, opts)
console.log("doc", Date.now()-t0, "ms", doc.errors.length, doc.errors[0]?.code, doc.errors[0]?.message)
t0 = Date.now()
try { doc.toJS({ maxAliasCount: 50 }); console.log("toJS ok", Date.now()-t0) } catch (e) { console.log("toJS threw", e.constructor.name, e.message.slice(0, 80)) }
