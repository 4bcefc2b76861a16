/**
 * Packaging smoke test for `@ratchet/memory`. `tools/pack-check.mjs` runs it inside an empty
 * project that installed the packed tarball (with `@ratchet/storage`'s and `@ratchet/kernel`'s
 * beside it and the `effect` peer), so it sees exactly what a user sees: the entry point resolves
 * to the built `dist/`, and the lessons service runs over the in-memory lesson store: a proposal
 * is a candidate, and a query finds no verified lesson. Prints one line; exits non-zero on the
 * first thing that is wrong.
 */
import { Lessons } from "@ratchet/memory"
import { MemoryLessonStore } from "@ratchet/storage"
import * as Effect from "effect/Effect"

/** @param {string} problem */
const fail = (problem) => {
  console.error(`@ratchet/memory smoke: ${problem}`)
  process.exit(1)
}

const entry = import.meta.resolve("@ratchet/memory")
if (!entry.endsWith("/dist/index.js")) fail(`the entry point resolves to ${entry}, not dist/index.js`)

const lessons = Lessons.make(MemoryLessonStore.make())
const body = { scope: { projectId: "p-1" }, trigger: "changing the report", actualRule: "the header row is counted" }
const view = await Effect.runPromise(lessons.propose({ actor: { kind: "agent", id: "smoke" }, lessonId: "L-1", body }))
if (view.status !== "candidate") fail(`a proposal should be a candidate, got ${view.status}`)
const found = await Effect.runPromise(lessons.query({ projectId: "p-1", paths: [], taskType: null, text: "report" }))
if (found.length !== 0) fail(`a query should find no verified lesson, got ${JSON.stringify(found)}`)
console.log("@ratchet/memory smoke: ok")
