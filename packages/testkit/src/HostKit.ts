/**
 * The host adapter test kit: what every adapter must pass, whoever writes it. Register it in the
 * adapter's own test file with the adapter, its directory of payload fixtures (the host's
 * documented payloads, one JSON file per event variant, named `<Event>.<variant>.json`) and what
 * the fixtures that matter must decode to:
 *
 * ```ts
 * HostKit.suite("my-host adapter", {
 *   adapter: MyHost.adapter,
 *   fixtures: new URL("./fixtures", import.meta.url).pathname,
 *   expected: { "PreToolUse.Edit.json": "ToolCallRequested:Write", "Stop.first.json": "StopRequested" },
 *   toolEvents: ["PreToolUse", "PermissionRequest"]
 * })
 * ```
 *
 * The checks:
 * - **decodes every fixture**, to the event (and action) written in `expected` where one is, with
 *   the session's host being the adapter's name;
 * - **round-trips decisions**: an Allow prints nothing and exits 0 for every event; a Deny (and an
 *   Ask: asked where the host can ask, denied where it cannot) of a tool call, and a Deny of a
 *   stop, answers with the reason the guard gave;
 * - **fails closed where it must**: a failure on a tool event, or on a payload whose event could
 *   not be read, is never the silent allow and carries the problem; a failure on any other event
 *   never exits 2 (which blocks in the hosts we know);
 * - **survives malformed input**: empty, non-JSON, truncated fixtures, hostile values, payloads
 *   over the size limit and random text all decode or fail with the adapter's typed error naming a
 *   field — never a throw or a defect;
 * - **reads the host's record without failing**, for an adapter that reads one at a stop
 *   (`callEndedInTurn`): a record that is missing, relative, a directory or empty tells nothing,
 *   and a record of arbitrary text answers, never fails (a turn record never changes an answer).
 *
 * @since 0.1.0
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as fc from "effect/FastCheck"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

// The kit describes an adapter by its shape (that of `@ratchet/host`'s `HostAdapter`) rather than
// importing the SDK: the test kit sits below every package in the build graph, and the SDK's own
// dependencies use the kit in their tests.

/**
 * What the kit needs of a decoded event.
 *
 * @since 0.1.0
 * @category models
 */
export interface KitEvent {
  readonly _tag: string
  readonly session: { readonly host: string }
  readonly call?: { readonly action: { readonly _tag: string } }
}

/**
 * A guard decision, as `@ratchet/host`'s `Guard.Decision`.
 *
 * @since 0.1.0
 * @category models
 */
export type KitDecision =
  | { readonly _tag: "Allow" }
  | { readonly _tag: "Deny"; readonly reason: string; readonly fix: string }
  | { readonly _tag: "Ask"; readonly reason: string }

/**
 * An adapter's answer.
 *
 * @since 0.1.0
 * @category models
 */
export interface KitReply {
  readonly stdout: string
  readonly stderr: string
  readonly exitCode: number
}

/**
 * A host adapter, by the shape of `@ratchet/host`'s `HostAdapter`.
 *
 * @since 0.1.0
 * @category models
 */
export interface KitAdapter<E extends KitEvent = KitEvent> {
  readonly name: string
  readonly canAsk: boolean
  readonly decode: (raw: string) => Effect.Effect<E, { readonly _tag: string; readonly host: string; readonly field: string; readonly message: string }>
  readonly reply: (event: E, decision: KitDecision) => KitReply
  readonly failure: (event: string | null, problem: string) => KitReply
  /** Whether the host's record of the session shows a call's end no hook reported (optional). */
  readonly callEndedInTurn?: (transcript: string) => Effect.Effect<boolean>
}

/**
 * The largest payload hosts send that adapters read (`@ratchet/host`'s `maxPayloadBytes`).
 *
 * @since 0.1.0
 * @category constants
 */
export const maxPayloadBytes = 16 * 1024 * 1024

/**
 * @since 0.1.0
 * @category models
 */
export interface Options<E extends KitEvent = KitEvent> {
  readonly adapter: KitAdapter<E>
  /** The directory of payload fixtures (`*.json`). */
  readonly fixtures: string
  /** Fixture file → `Tag` or `Tag:Action` (e.g. `ToolCallRequested:Write`); others may decode to anything. */
  readonly expected: Readonly<Record<string, string>>
  /** The host's event names on which a failure must block (its tool-call gates). */
  readonly toolEvents: ReadonlyArray<string>
  /** Random payloads tried per fuzzing property (default 500). */
  readonly runs?: number
}

const summary = (event: KitEvent): string => (event.call !== undefined ? `${event._tag}:${event.call.action._tag}` : event._tag)

const silent: KitReply = { stdout: "", stderr: "", exitCode: 0 }

/** The decode, run to its exit: a throw or a defect is a failure of the kit's promise, not a value. */
const decodeExit = <E extends KitEvent>(adapter: KitAdapter<E>, raw: string) => Effect.runSyncExit(Effect.either(adapter.decode(raw)))

/**
 * What one decode must be: a decoded event, or the adapter's typed error naming a field.
 *
 * @since 0.1.0
 * @category checks
 */
export const decodesOrFailsTyped = <E extends KitEvent>(adapter: KitAdapter<E>, raw: string): boolean => {
  let exit: ReturnType<typeof decodeExit>
  try {
    exit = decodeExit(adapter, raw)
  } catch {
    // A decode that throws before it returns an Effect breaks the promise too.
    return false
  }
  if (Exit.isFailure(exit)) return false
  const result = exit.value
  if (Either.isRight(result)) return result.right.session.host === adapter.name
  return result.left._tag === "@ratchet/host/HostDecodeError" && result.left.host === adapter.name && result.left.field !== ""
}

/**
 * What an adapter's read of the host's record (`callEndedInTurn`) answers for `file`: its boolean,
 * or null when the read breaks the promise never to fail (a failure, a defect or a throw).
 *
 * @since 0.2.0
 * @category checks
 */
export const recordAnswer = (read: (transcript: string) => Effect.Effect<boolean>, file: string): boolean | null => {
  try {
    const exit = Effect.runSyncExit(read(file))
    return Exit.isSuccess(exit) && typeof exit.value === "boolean" ? exit.value : null
  } catch {
    return null
  }
}

/**
 * Registers the kit's checks for `options.adapter` as a vitest `describe` block named `name`.
 *
 * @since 0.1.0
 * @category testing
 */
export const suite = <E extends KitEvent>(name: string, options: Options<E>): void => {
  const { adapter } = options
  const files = fs.readdirSync(options.fixtures).filter((file) => file.endsWith(".json")).sort()
  const read = (file: string) => fs.readFileSync(path.join(options.fixtures, file), "utf8")
  const decoded = (file: string): E => {
    const result = Effect.runSync(Effect.either(adapter.decode(read(file))))
    if (Either.isLeft(result)) throw new Error(`${file} does not decode: ${result.left.message}`)
    return result.right
  }
  const runs = options.runs ?? 500

  describe(name, () => {
    describe("decodes every fixture", () => {
      it("has fixtures, and one for every expected event", () => {
        expect(files.length).toBeGreaterThan(0)
        for (const file of Object.keys(options.expected)) expect(files, `missing fixture ${file}`).toContain(file)
      })
      for (const file of files) {
        it(file, () => {
          const event = decoded(file)
          expect(event.session.host).toBe(adapter.name)
          const want = options.expected[file]
          if (want !== undefined) expect(summary(event)).toBe(want)
        })
      }
    })

    describe("round-trips decisions", () => {
      const deny: KitDecision = { _tag: "Deny", reason: "Kit reason 7f3a.", fix: "Kit fix 9c1b." }
      const ask: KitDecision = { _tag: "Ask", reason: "Kit question 4e2d?" }
      for (const file of files) {
        it(`${file}: allow is silent`, () => {
          expect(adapter.reply(decoded(file), { _tag: "Allow" })).toEqual(silent)
        })
      }
      const toolCalls = files.filter((file) => decoded(file)._tag === "ToolCallRequested")
      const stops = files.filter((file) => decoded(file)._tag === "StopRequested")
      it("has a tool-call fixture and a stop fixture", () => {
        expect(toolCalls.length).toBeGreaterThan(0)
        expect(stops.length).toBeGreaterThan(0)
      })
      for (const file of toolCalls) {
        it(`${file}: a denial answers with the reason, and so does an ask`, () => {
          const denied = adapter.reply(decoded(file), deny)
          expect(denied).not.toEqual(silent)
          expect(denied.stdout + denied.stderr).toContain("Kit reason 7f3a.")
          const asked = adapter.reply(decoded(file), ask)
          // A host that can ask may leave the question to its own prompt (silent); one that cannot must deny.
          if (!adapter.canAsk) expect(asked).not.toEqual(silent)
          const silentAsk = asked.stdout === "" && asked.stderr === "" && asked.exitCode === 0
          if (!silentAsk) expect(asked.stdout + asked.stderr).toContain("Kit question 4e2d?")
        })
      }
      for (const file of stops) {
        it(`${file}: a blocked stop answers with the reason`, () => {
          const blocked = adapter.reply(decoded(file), deny)
          expect(blocked).not.toEqual(silent)
          expect(blocked.stdout + blocked.stderr).toContain("Kit reason 7f3a.")
        })
      }
    })

    describe("fails closed where it must", () => {
      for (const event of [...options.toolEvents, null]) {
        it(`a failure on ${event ?? "an unreadable event"} blocks and says why`, () => {
          const reply = adapter.failure(event, "kit problem 5d8e")
          expect(reply).not.toEqual(silent)
          expect(reply.stdout + reply.stderr).toContain("kit problem 5d8e")
          expect(reply.stdout + reply.stderr).not.toMatch(/\n\s+at /)
        })
      }
      const others = [...new Set(files.map((file) => file.split(".")[0]!))].filter((event) => !options.toolEvents.includes(event))
      for (const event of others) {
        it(`a failure on ${event} does not block (never exit 2) and says why`, () => {
          const reply = adapter.failure(event, "kit problem 5d8e")
          expect(reply.exitCode).not.toBe(2)
          expect(reply.stdout + reply.stderr).toContain("kit problem 5d8e")
        })
      }
    })

    describe("survives malformed input", () => {
      it("empty, non-JSON, non-object, truncated and hostile payloads fail typed", () => {
        const samples = ["", " ", "null", "[]", "\"x\"", "{", "{\"hook_event_name\":", "\u0000\u0001", "{\"__proto__\":{\"x\":1}}"]
        for (const file of files) {
          const text = read(file)
          for (const cut of [1, Math.floor(text.length / 3), Math.floor(text.length / 2), text.length - 1]) samples.push(text.slice(0, cut))
        }
        for (const raw of samples) expect(decodesOrFailsTyped(adapter, raw), JSON.stringify(raw.slice(0, 60))).toBe(true)
        expect(({} as Record<string, unknown>)["x"]).toBeUndefined()
      })
      it("every field of every fixture replaced by hostile values decodes or fails typed", () => {
        const hostile: ReadonlyArray<unknown> = [null, 7, -1, true, [], {}, "", "\u001b[2J\u202e", "x".repeat(10_000), { toString: "x" }]
        for (const file of files) {
          const value = JSON.parse(read(file)) as Record<string, unknown>
          for (const key of Object.keys(value)) {
            for (const replacement of hostile) {
              expect(decodesOrFailsTyped(adapter, JSON.stringify({ ...value, [key]: replacement })), `${file}: ${key}`).toBe(true)
            }
          }
        }
      })
      it(`a payload over ${maxPayloadBytes} bytes fails typed`, () => {
        const raw = JSON.stringify({ hook_event_name: "PreToolUse", session_id: "s", cwd: "/w", padding: "x".repeat(maxPayloadBytes) })
        const exit = decodeExit(adapter, raw)
        expect(Exit.isSuccess(exit) && Either.isLeft(exit.value)).toBe(true)
      })
      it("random text and random JSON decode or fail typed", () => {
        fc.assert(fc.property(fc.oneof(fc.string({ maxLength: 400 }), fc.json({ maxDepth: 5 })), (raw) => decodesOrFailsTyped(adapter, raw)), { numRuns: runs })
      })
      it("fixtures with random values in place of their fields decode or fail typed", () => {
        const values = files.map((file) => JSON.parse(read(file)) as Record<string, unknown>)
        fc.assert(
          fc.property(fc.constantFrom(...values), fc.jsonValue(), fc.nat(), (value, replacement, pick) => {
            const keys = Object.keys(value)
            const key = keys[pick % Math.max(keys.length, 1)] ?? "x"
            return decodesOrFailsTyped(adapter, JSON.stringify({ ...value, [key]: replacement }))
          }),
          { numRuns: runs }
        )
      })
    })

    const readRecord = adapter.callEndedInTurn
    if (readRecord !== undefined) {
      describe("reads the host's record without failing", () => {
        const answer = (file: string) => recordAnswer(readRecord, file)
        it("a record that is missing, relative, a directory or empty tells nothing", () => {
          const directory = fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-kit-"))
          try {
            const empty = path.join(directory, "empty.jsonl")
            fs.writeFileSync(empty, "")
            for (const file of [path.join(directory, "missing.jsonl"), "relative/transcript.jsonl", "", directory, empty]) {
              expect(answer(file), JSON.stringify(file)).toBe(false)
            }
          } finally {
            fs.rmSync(directory, { recursive: true, force: true })
          }
        })
        it("a record of fixtures and arbitrary text answers, and never fails", () => {
          const directory = fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-kit-"))
          try {
            const file = path.join(directory, "record.jsonl")
            const samples = [...files.map((name) => `${read(name)}\n`), "\u0000\n", "{\n}\n", "[]\n[]\n"]
            for (const text of samples) {
              fs.writeFileSync(file, text)
              expect(typeof answer(file)).toBe("boolean")
            }
            fc.assert(
              fc.property(fc.array(fc.oneof(fc.string({ maxLength: 200 }), fc.json({ maxDepth: 4 })), { maxLength: 20 }), (lines) => {
                fs.writeFileSync(file, lines.map((line) => `${line}\n`).join(""))
                return typeof answer(file) === "boolean"
              }),
              { numRuns: Math.min(runs, 200) }
            )
          } finally {
            fs.rmSync(directory, { recursive: true, force: true })
          }
        })
      })
    }
  })
}
