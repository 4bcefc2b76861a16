/**
 * The event catalogue: every event type round-trips through `encode` and `decode`, and decoding
 * is total. An unknown type, a newer version or a malformed body is a typed `EventDecodeError`
 * naming the type (and version) with a message that says what to do — upgrade Ratchet, or restore
 * the log from a backup — and never a throw, whatever the input: null, arrays, numbers, strings,
 * objects without `_tag`, wrong or extra fields, huge strings, prototype-pollution keys.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as fc from "fast-check"
import * as Event from "../src/Event.js"
import { agent, fakeDigest, pass, receipt, SAMPLE_EVENTS, STATES, runs, user } from "./fixtures.js"

type AnyEvent = Event.Event

const TYPES = [
  "TaskCreated",
  "InterviewBegun",
  "QuestionAsked",
  "QuestionAnswered",
  "RestatementProposed",
  "RestatementApproved",
  "BriefClosed",
  "InterviewResumed",
  "SpecProposed",
  "SpecApproved",
  "PlanMarkedStale",
  "PreflightRecorded",
  "PlanProposed",
  "PlanApproved",
  "RunStarted",
  "AttemptFailed",
  "SuccessorGranted",
  "TaskBlocked",
  "TaskUnblocked",
  "VerificationStarted",
  "TaskCompleted",
  "TaskFailed",
  "TaskReopened",
  "TaskPaused",
  "TaskResumed",
  "TaskCancelled",
  "AttemptScheduled",
  "AttemptTransitioned",
  "IntentRecorded",
  "IntentDispatched",
  "IntentResolved",
  "IntentAbandoned",
  "CheckpointRecorded",
  "LeaseAcquired",
  "LeaseTakenOver",
  "LeaseReleased",
  "CommandExited",
  "BoundaryRecorded",
  "AttemptNoted",
  "IntentSettled",
  "VerificationRecorded",
  "TurnRecorded",
  "TaskRewound",
  "ApproversEntryRecorded",
  "TraceRecorded",
  "AgentReported"
] as const

/** The types at version 2: those carrying a signed receipt or signed verdicts (written out). */
const SIGNED_TYPES = [
  "RestatementApproved",
  "SpecApproved",
  "PlanApproved",
  "TaskUnblocked",
  "TaskCompleted",
  "TaskReopened",
  "IntentSettled",
  "VerificationRecorded"
] as const

const versionOf = (type: (typeof TYPES)[number]): number => ((SIGNED_TYPES as ReadonlyArray<string>).includes(type) ? 2 : 1)

/** The stored form: encoded, then through JSON text as a store would keep it. */
const stored = (event: AnyEvent): Record<string, unknown> =>
  JSON.parse(JSON.stringify(Event.encode(event))) as Record<string, unknown>

/** The stored form of `SAMPLE_EVENTS.TaskCreated`, written out (no kernel call at collection time). */
const CREATED_JSON: Record<string, unknown> = {
  _tag: "TaskCreated",
  version: 1,
  actor: { kind: "user", id: "alice" },
  at: 1,
  taskId: "t-1",
  projectId: "p-1",
  goal: "g",
  slug: "s"
}

const decodeError = (input: unknown): Event.EventDecodeError => {
  let result: Either.Either<AnyEvent, Event.EventDecodeError>
  try {
    result = Event.decode(input)
  } catch (defect) {
    throw new Error(`decode threw: ${String(defect)}`)
  }
  if (Either.isRight(result)) throw new Error(`expected a decode error, got ${result.right._tag}`)
  expect(result.left._tag).toBe("@ratchet/kernel/EventDecodeError")
  return result.left
}

const roundTrips = (event: AnyEvent): void => {
  expect(Event.decode(stored(event))).toEqual(Either.right(event))
}

describe("the catalogue", () => {
  it("lists the 46 event types, those carrying signatures at version 2 and the rest at version 1", () => {
    expect(Object.keys(Event.catalogue)).toEqual(TYPES)
    for (const type of TYPES) expect(Event.catalogue[type], type).toBe(versionOf(type))
  })

  it("make fills in the current version of each type", () => {
    expect(
      Event.make<Extract<AnyEvent, { _tag: "TaskUnblocked" }>>({ _tag: "TaskUnblocked", actor: user, at: 3, to: "RUNNING", resolution: "r", receipt: null })
    ).toEqual({ _tag: "TaskUnblocked", version: 2, actor: user, at: 3, to: "RUNNING", resolution: "r", receipt: null })
  })

  it("the approvers stream of a project is named after it, never like a task", () => {
    expect(Event.approversStreamOf("p-1")).toBe("approvers.p-1")
  })

  it("the task states are the 15 canonical ones", () => {
    expect(Event.TaskState.literals).toEqual(STATES)
  })

  it("make fills in the current version", () => {
    expect(
      Event.make<Extract<AnyEvent, { _tag: "TaskResumed" }>>({ _tag: "TaskResumed", actor: user, at: 3, to: "RUNNING" })
    ).toEqual({ _tag: "TaskResumed", version: 1, actor: user, at: 3, to: "RUNNING" })
  })

  it("Timestamp is a non-negative integer", () => {
    const is = Schema.is(Event.Timestamp)
    expect([0, 1, 1_700_000_000_000].every(is)).toBe(true)
    expect([-1, 1.5, Number.NaN, "1"].some(is)).toBe(false)
  })
})

describe("round trips", () => {
  it.each(TYPES)("%s survives encode → JSON → decode", (type) => {
    const event = SAMPLE_EVENTS[type]
    expect(event._tag).toBe(type)
    roundTrips(event)
  })

  it("encode gives a plain JSON value", () => {
    for (const type of TYPES) {
      const encoded = Event.encode(SAMPLE_EVENTS[type])
      expect(JSON.parse(JSON.stringify(encoded)), type).toEqual(encoded)
    }
  })

  it.each(["user", "agent", "runner", "verifier", "system"] as const)("an actor of kind %s round-trips", (kind) => {
    roundTrips({ ...SAMPLE_EVENTS.InterviewBegun, actor: { kind, id: `${kind}-1` } })
  })

  it.each(["restatement", "spec", "plan", "reopen", "scope"] as const)("a receipt for a %s round-trips", (subject) => {
    roundTrips({ ...SAMPLE_EVENTS.SpecApproved, receipt: receipt(subject, fakeDigest("d")) })
  })

  it.each([
    "missing_evidence",
    "missing_dependency",
    "missing_authority",
    "decision_needed",
    "verification_failed",
    "scope_violation",
    "retry_budget_spent",
    "repeated_failure",
    "no_progress"
  ] as const)("a %s blocker round-trips, with and without evidence", (category) => {
    roundTrips({ ...SAMPLE_EVENTS.TaskBlocked, blocker: { category, owner: "agent", requiredAction: "act" } })
    roundTrips({
      ...SAMPLE_EVENTS.TaskBlocked,
      blocker: { category, owner: "system", requiredAction: "act", lastEvidence: ["ev-1"] }
    })
  })

  it.each(["PASS", "FAIL", "INDETERMINATE", "NOT_RUN"] as const)("a %s verdict round-trips", (verdict) => {
    roundTrips({ ...SAMPLE_EVENTS.TaskCompleted, verdicts: [pass("AC-001", fakeDigest("e"), { verdict })] })
  })

  it.each(["APPROVED", "REVISE", "BLOCKED", "HELD"] as const)("a verification pass concluding %s round-trips", (outcome) => {
    roundTrips({ ...SAMPLE_EVENTS.VerificationRecorded, outcome })
  })

  it.each(["", "DONE", "approved"])("a verification pass concluding %j does not decode", (outcome) => {
    expect(Either.isLeft(Event.decode({ ...stored(SAMPLE_EVENTS.VerificationRecorded), outcome }))).toBe(true)
  })

  it.each([
    "turnStarted",
    "firstChunkAwaitStarted",
    "firstChunkAwaitEnded",
    "toolRejected",
    "toolUsed",
    "toolFailed",
    "streamReadCompleted"
  ] as const)("a recorded turn event %s round-trips", (tag) => {
    roundTrips({ ...SAMPLE_EVENTS.TurnRecorded, turn: { _tag: tag } })
  })

  it.each([{ _tag: "toolused" }, { _tag: "" }, {}, null, "toolUsed", { _tag: "streamReadComplete" }])(
    "a recorded turn event %j that the kernel does not know does not decode",
    (turn) => {
      expect(Either.isLeft(Event.decode({ ...stored(SAMPLE_EVENTS.TurnRecorded), turn }))).toBe(true)
    }
  )

  it.each(["user", "code", "research"] as const)("an answer from %s round-trips", (source) => {
    roundTrips({ ...SAMPLE_EVENTS.QuestionAnswered, source, answer: "x".repeat(65_536) })
  })

  it.each(STATES)("a transition from %s round-trips", (from) => {
    roundTrips({ ...SAMPLE_EVENTS.TaskCancelled, from })
    roundTrips({ ...SAMPLE_EVENTS.TaskFailed, from })
    roundTrips({ ...SAMPLE_EVENTS.TaskBlocked, from })
  })

  it("optional fields round-trip when absent", () => {
    const { receipt: _receipt, ...reopened } = SAMPLE_EVENTS.TaskReopened
    roundTrips(reopened)
    const { reason: _reason, ...paused } = SAMPLE_EVENTS.TaskPaused
    roundTrips(paused)
    expect("receipt" in (Either.getOrThrow(Event.decode(stored(reopened))) as object)).toBe(false)
  })

  it("both sides of the pause and unblock literals round-trip", () => {
    roundTrips({ ...SAMPLE_EVENTS.TaskPaused, from: "RUNNING" })
    roundTrips({ ...SAMPLE_EVENTS.TaskResumed, to: "RUNNING" })
    roundTrips({ ...SAMPLE_EVENTS.TaskUnblocked, to: "VERIFYING" })
    roundTrips({ ...SAMPLE_EVENTS.PreflightRecorded, observation: { head: "abc", dirtyPaths: [], missingPaths: [], invalidScopes: [] } })
  })

  it("round-trips arbitrary well-formed text, actors and times", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 50 }),
        fc.constantFrom<Event.Actor["kind"]>("user", "agent", "runner", "verifier", "system"),
        fc.nat(),
        (text, kind, at) => {
          roundTrips({ ...SAMPLE_EVENTS.TaskCreated, goal: text, slug: text, actor: { kind, id: text }, at })
        }
      ),
      { numRuns: runs(200) }
    )
  })
})

describe("unknown types", () => {
  it.each(["TaskArchived", "taskcreated", "", "toString", "constructor", "__proto__", "hasOwnProperty", "valueOf"])(
    "%j is unknown_type, named in the error",
    (type) => {
      const error = decodeError({ ...stored(SAMPLE_EVENTS.InterviewBegun), _tag: type, version: 3 })
      expect(error.reason).toBe("unknown_type")
      expect(error.type).toBe(type)
      expect(error.version).toBe(3)
      expect(error.message).toBe(
        `Cannot decode event "${type}": the type is not in this kernel's catalogue. It was probably written by a newer Ratchet; upgrade Ratchet to read this log.`
      )
    }
  )
})

describe("newer versions", () => {
  it.each([2, 99])("version %i of a version-1 type is newer_version, naming type and version", (version) => {
    const error = decodeError({ ...stored(SAMPLE_EVENTS.TaskCreated), version })
    expect(error.reason).toBe("newer_version")
    expect(error.type).toBe("TaskCreated")
    expect(error.version).toBe(version)
    expect(error.detail).toBe("1")
    expect(error.message).toBe(
      `Cannot decode event "TaskCreated" version ${version}: this kernel understands up to version 1. Upgrade Ratchet to read this log.`
    )
  })

  it("is reported before the body is checked, since a newer body may differ", () => {
    const error = decodeError({ _tag: "RunStarted", version: 2, whatever: true })
    expect(error.reason).toBe("newer_version")
  })

  it.each(TYPES)("applies to %s", (type) => {
    const error = decodeError({ ...stored(SAMPLE_EVENTS[type]), version: versionOf(type) + 1 })
    expect(error.reason).toBe("newer_version")
    expect(error.detail).toBe(String(versionOf(type)))
  })
})

describe("version 1 of the signed types still reads, upcast with no signature (which never counts)", () => {
  const receiptV1 = { subject: "spec", digest: fakeDigest("a"), actor: { kind: "user", id: "alice" }, channel: "terminal", at: 7 }
  const verdictV1 = { acId: "AC-001", verdict: "PASS", evidenceRefs: ["ev-1"], specDigest: fakeDigest("a"), verifier: { kind: "user", id: "vera" }, at: 8 }
  const head = (tag: string) => ({ _tag: tag, version: 1, actor: { kind: "user", id: "alice" }, at: 9 })
  const read = (input: unknown): AnyEvent => {
    const result = Event.decode(input)
    if (Either.isLeft(result)) throw new Error(result.left.message)
    return result.right
  }

  it.each([
    { tag: "RestatementApproved", body: { digest: fakeDigest("a"), receipt: receiptV1 } },
    { tag: "SpecApproved", body: { revision: 3, digest: fakeDigest("a"), receipt: receiptV1 } },
    { tag: "PlanApproved", body: { revision: 2, digest: fakeDigest("a"), receipt: receiptV1 } },
    { tag: "IntentSettled", body: { intentId: "i-1", runId: "r-1", stepId: "s", attempt: 1, outcome: "Failed", receipt: receiptV1 } },
    { tag: "TaskReopened", body: { from: "FAILED", reason: "why", receipt: receiptV1 } }
  ])("$tag version 1: the receipt gets signature null, the rest unchanged, version 2", ({ body, tag }) => {
    expect(read({ ...head(tag), ...body })).toEqual({ ...head(tag), ...body, version: 2, receipt: { ...receiptV1, signature: null } })
  })

  it("TaskReopened version 1 without a receipt stays without one", () => {
    expect(read({ ...head("TaskReopened"), from: "RUNNING", reason: "why" })).toEqual({ ...head("TaskReopened"), from: "RUNNING", reason: "why", version: 2 })
  })

  it("TaskUnblocked version 1 had no receipt: it reads with receipt null", () => {
    expect(read({ ...head("TaskUnblocked"), to: "VERIFYING", resolution: "fixed" })).toEqual({
      ...head("TaskUnblocked"),
      to: "VERIFYING",
      resolution: "fixed",
      version: 2,
      receipt: null
    })
  })

  it.each([
    { tag: "TaskCompleted", body: { runId: "r-1", specDigest: fakeDigest("a"), planDigest: fakeDigest("b"), verdicts: [verdictV1, verdictV1] } },
    { tag: "VerificationRecorded", body: { runId: "r-1", snapshotLsn: 4, outcome: "APPROVED", verdicts: [verdictV1] } }
  ])("$tag version 1: every verdict gets signature null", ({ body, tag }) => {
    expect(read({ ...head(tag), ...body })).toEqual({
      ...head(tag),
      ...body,
      version: 2,
      verdicts: body.verdicts.map((verdict) => ({ ...verdict, signature: null }))
    })
  })

  it("a version-1 body is held to version 1's schema: a signature in it is an excess field, malformed", () => {
    const error = decodeError({ ...head("SpecApproved"), revision: 1, digest: fakeDigest("a"), receipt: { ...receiptV1, signature: null } })
    expect(error.reason).toBe("malformed")
    expect(error.version).toBe(1)
    expect(error.detail).toContain("receipt.signature")
  })

  it("a version-2 body without its signature field is malformed, naming the field", () => {
    const error = decodeError({ ...head("SpecApproved"), version: 2, revision: 1, digest: fakeDigest("a"), receipt: receiptV1 })
    expect(error.reason).toBe("malformed")
    expect(error.detail).toBe("receipt.signature: is missing")
  })

  it("a version-2 signature that is not a signature is malformed", () => {
    const error = decodeError({
      ...head("SpecApproved"),
      version: 2,
      revision: 1,
      digest: fakeDigest("a"),
      receipt: { ...receiptV1, signature: { key: "ed25519:short", value: "x" } }
    })
    expect(error.reason).toBe("malformed")
    expect(error.detail).toContain("receipt.signature.key")
  })

  it("version 0, a fractional or a negative version of a signed type is malformed, never read as version 1", () => {
    for (const version of [0, 1.5, -1]) {
      expect(decodeError({ ...head("SpecApproved"), version, revision: 1, digest: fakeDigest("a"), receipt: receiptV1 }).reason).toBe("malformed")
    }
  })
})

describe("malformed bodies are typed errors naming the type and the field", () => {
  const created = CREATED_JSON

  const malformed = (input: unknown): Event.EventDecodeError => {
    const error = decodeError(input)
    expect(error.reason).toBe("malformed")
    expect(error.message).toContain("The stored row is damaged; restore it from a backup.")
    return error
  }

  it("a missing field", () => {
    const { goal: _goal, ...rest } = created
    const error = malformed(rest)
    expect(error.type).toBe("TaskCreated")
    expect(error.version).toBe(1)
    expect(error.detail).toBe("goal: is missing")
    expect(error.message).toBe(
      "Cannot decode event \"TaskCreated\" version 1: goal: is missing. The stored row is damaged; restore it from a backup."
    )
  })

  it("a field of the wrong type", () => {
    expect(malformed({ ...created, goal: 42 }).detail).toBe("goal: Expected string, actual 42")
  })

  it("an extra key", () => {
    expect(malformed({ ...created, extra: 1 }).detail).toMatch(/^extra: is unexpected/)
  })

  it("an empty string where a non-empty one is expected", () => {
    expect(malformed({ ...created, slug: "" }).detail).toMatch(/^slug: /)
  })

  it("a nested field, by its dotted path", () => {
    expect(malformed({ ...created, actor: { kind: "user", id: "" } }).detail).toMatch(/^actor\.id: /)
    const blocked = stored(SAMPLE_EVENTS.TaskBlocked)
    expect(malformed({ ...blocked, blocker: { ...(blocked["blocker"] as object), lastEvidence: [""] } }).detail).toMatch(
      /^blocker\.lastEvidence\.0: /
    )
  })

  it.each([
    // field, value, why it is refused
    ["traceId", "4BF92F3577B34DA6A3CE929D0E0E4736", "upper case"],
    ["traceId", "4bf92f3577b34da6a3ce929d0e0e473", "31 digits"],
    ["traceId", "4bf92f3577b34da6a3ce929d0e0e47360", "33 digits"],
    ["traceId", "00000000000000000000000000000000", "all zeros"],
    ["traceId", "4bf92f3577b34da6a3ce929d0e0e473g", "not hexadecimal"],
    ["traceId", "4bf92f3577b34da6a3ce929d0e0e4736\n", "a trailing newline"],
    ["spanId", "00f067aa0ba902b", "15 digits"],
    ["spanId", "0000000000000000", "all zeros"],
    ["spanId", 42, "a number"]
  ])("a TraceRecorded whose %s is %j (%s)", (field, value, _why) => {
    const trace = stored(SAMPLE_EVENTS.TraceRecorded)
    expect(malformed({ ...trace, [field]: value }).detail).toMatch(new RegExp(`^${field}: `))
  })

  it("a TraceRecorded with W3C ids decodes as written", () => {
    const trace = stored(SAMPLE_EVENTS.TraceRecorded)
    expect(Either.getOrThrow(Event.decode(trace))).toMatchObject({ traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7" })
  })

  it.each([
    // field, value, why it is refused
    ["host", "aider", "a host no agent step names"],
    ["costUsd", -0.01, "a negative cost"],
    ["lines", 1.5, "a fractional line count"],
    ["malformedLines", -1, "a negative count"],
    ["usage", { inputTokens: Number.POSITIVE_INFINITY, outputTokens: 1, cachedInputTokens: null, cacheCreationInputTokens: null }, "an infinite count"],
    ["result", { ok: true, subtype: "", text: null, turns: null }, "an empty subtype"],
    ["sessionId", "", "an empty session id"]
  ])("an AgentReported whose %s is %j (%s)", (field, value, _why) => {
    const reported = stored(SAMPLE_EVENTS.AgentReported)
    expect(malformed({ ...reported, [field]: value }).detail).toMatch(new RegExp(`^${field}(\\.|: |\\b)`))
  })

  it("an AgentReported of a truncated stream (no result, nothing reported) decodes as written", () => {
    const reported = { ...stored(SAMPLE_EVENTS.AgentReported), sessionId: null, model: null, usage: null, costUsd: null, result: null, reason: "the stream ended without the host's result" }
    expect(Either.getOrThrow(Event.decode(reported))).toMatchObject({ result: null, usage: null, reason: "the stream ended without the host's result" })
  })

  it("every issue at once, separated by semicolons", () => {
    const { slug: _slug, ...rest } = created
    const error = malformed({ ...rest, at: -1, extra: true })
    expect(error.detail.split("; ").map((issue) => issue.split(":")[0])).toEqual(["extra", "at", "slug"])
  })

  it.each([
    { label: "version \"1\"", version: "1", expected: null },
    { label: "version 0", version: 0, expected: 0 },
    { label: "version -1", version: -1, expected: -1 },
    { label: "version 1.5", version: 1.5, expected: 1.5 },
    { label: "version NaN", version: Number.NaN, expected: Number.NaN },
    { label: "version Infinity", version: Number.POSITIVE_INFINITY, expected: Number.POSITIVE_INFINITY },
    { label: "version null", version: null, expected: null }
  ])("$label", ({ expected, version }) => {
    const error = malformed({ ...created, version })
    expect(error.type).toBe("TaskCreated")
    expect(error.version).toEqual(expected)
    expect(error.detail).toMatch(/^version: Expected 1/)
  })

  it("a missing version", () => {
    const { version: _version, ...rest } = created
    const error = malformed(rest)
    expect(error.version).toBeNull()
    expect(error.detail).toBe("version: is missing")
    expect(error.message).toContain("Cannot decode event \"TaskCreated\" version null:")
  })

  it("a negative or fractional time", () => {
    expect(malformed({ ...created, at: -1 }).detail).toMatch(/^at: /)
    expect(malformed({ ...created, at: 1.5 }).detail).toMatch(/^at: /)
  })

  it("a 10 MB string where a bounded string is expected", () => {
    const error = malformed({ ...created, goal: "x".repeat(10 * 1024 * 1024) })
    expect(error.type).toBe("TaskCreated")
    expect(error.detail).toMatch(/^goal: Expected a string at most 4096 character\(s\) long/)
  })

  it("an answer longer than 64 KiB", () => {
    expect(malformed({ ...stored(SAMPLE_EVENTS.QuestionAnswered), answer: "x".repeat(65_537) }).detail).toMatch(/^answer: /)
  })

  it("a digest that is not a sha256 digest", () => {
    expect(malformed({ ...stored(SAMPLE_EVENTS.RunStarted), specDigest: "sha256:XYZ" }).detail).toMatch(/^specDigest: /)
  })

  it("a spec that is not a valid spec", () => {
    const proposed = stored(SAMPLE_EVENTS.SpecProposed)
    expect(malformed({ ...proposed, spec: { ...(proposed["spec"] as object), unknownField: 1 } }).detail).toMatch(
      /^spec\.unknownField: is unexpected/
    )
  })

  it("an unknown literal (actor kind, state, verdict, subject)", () => {
    expect(malformed({ ...created, actor: { kind: "robot", id: "r" } }).detail).toMatch(/^actor\.kind: /)
    expect(malformed({ ...stored(SAMPLE_EVENTS.TaskCancelled), from: "DONE" }).detail).toMatch(/^from: /)
    expect(malformed({ ...stored(SAMPLE_EVENTS.TaskResumed), to: "VERIFYING" }).detail).toMatch(/^to: /)
    const receiptOf = { ...stored(SAMPLE_EVENTS.SpecApproved) }
    expect(malformed({ ...receiptOf, receipt: { ...(receiptOf["receipt"] as object), subject: "everything" } }).detail).toMatch(
      /^receipt\.subject: /
    )
  })

  it("a symbol key is reported, not thrown on", () => {
    expect(malformed({ ...created, [Symbol("x")]: 1 }).detail).toBe(
      "Symbol(x): is unexpected, expected: \"_tag\" | \"version\" | \"actor\" | \"at\" | \"taskId\" | \"projectId\" | \"goal\" | \"slug\""
    )
  })
})

describe("prototype-pollution keys", () => {
  const pollutedText = (key: string): string =>
    JSON.stringify(stored(SAMPLE_EVENTS.TaskCreated)).replace("{", `{"${key}":{"polluted":true},`)

  it.each(["__proto__", "constructor", "prototype"])("a %s key in stored JSON is an unexpected key", (key) => {
    const input: unknown = JSON.parse(pollutedText(key))
    const error = decodeError(input)
    expect(error.reason).toBe("malformed")
    expect(error.type).toBe("TaskCreated")
    expect(error.detail).toMatch(new RegExp(`^${key}: is unexpected`))
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
  })

  it("a decoded event never carries a foreign prototype", () => {
    const input = Object.assign(Object.create({ injected: true }) as object, stored(SAMPLE_EVENTS.InterviewBegun))
    const decoded = Either.getOrThrow(Event.decode(input))
    expect((decoded as unknown as Record<string, unknown>)["injected"]).toBeUndefined()
  })
})

describe("inputs that are not events", () => {
  it.each([
    { label: "null", input: null, got: "null" },
    { label: "undefined", input: undefined, got: "undefined" },
    { label: "an array", input: [CREATED_JSON], got: "an array" },
    { label: "an empty array", input: [], got: "an array" },
    { label: "a number", input: 42, got: "number" },
    { label: "a string", input: JSON.stringify(CREATED_JSON), got: "string" },
    { label: "a boolean", input: true, got: "boolean" },
    { label: "a bigint", input: 1n, got: "bigint" },
    { label: "a function", input: () => SAMPLE_EVENTS.TaskCreated, got: "function" }
  ])("$label is not_an_object", ({ got, input }) => {
    const error = decodeError(input)
    expect(error.reason).toBe("not_an_object")
    expect(error.type).toBeNull()
    expect(error.version).toBeNull()
    expect(error.detail).toBe(`expected an object, got ${got}`)
    expect(error.message).toBe(
      `Cannot decode an event without a type: expected an object, got ${got}. The stored row is damaged; restore it from a backup or re-fold from an intact copy of the log.`
    )
  })

  it.each([
    { label: "an empty object", input: {} },
    { label: "an object without _tag", input: { version: 1, actor: user, at: 1 } },
    { label: "a numeric _tag", input: { _tag: 7, version: 1 } },
    { label: "a null _tag", input: { _tag: null } }
  ])("$label is malformed, without a type", ({ input }) => {
    const error = decodeError(input)
    expect(error.reason).toBe("malformed")
    expect(error.type).toBeNull()
    expect(error.detail).toBe("the `_tag` field is missing or not a string")
    expect(error.message).toBe(
      `Cannot decode an event without a type version ${String(error.version)}: the \`_tag\` field is missing or not a string. The stored row is damaged; restore it from a backup.`
    )
  })

  it("keeps the version of an object without _tag when it is a number", () => {
    expect(decodeError({ version: 4 }).version).toBe(4)
    expect(decodeError({ version: "4" }).version).toBeNull()
  })

  it("never throws, whatever it is given", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.anything(),
          fc.record({ _tag: fc.constantFrom(...TYPES), version: fc.anything() }, { requiredKeys: ["_tag"] }),
          fc.constantFrom(...TYPES).chain((type) =>
            fc.dictionary(fc.string(), fc.anything()).map((extra) => ({ ...stored(SAMPLE_EVENTS[type]), ...extra }))
          ),
          fc.constantFrom(...TYPES).chain((type) =>
            fc.constantFrom(...Object.keys(stored(SAMPLE_EVENTS[type]))).chain((key) =>
              fc.anything().map((value) => ({ ...stored(SAMPLE_EVENTS[type]), [key]: value }))
            )
          )
        ),
        (input) => {
          const result = Event.decode(input)
          if (Either.isLeft(result)) {
            expect(result.left.reason).toMatch(/^(not_an_object|unknown_type|newer_version|malformed)$/)
            expect(typeof result.left.message).toBe("string")
          } else {
            expect(TYPES).toContain(result.right._tag)
            expect(Event.decode(stored(result.right))).toEqual(result)
          }
        }
      ),
      { numRuns: runs(500) }
    )
  })
})

describe("EventDecodeError", () => {
  it("says what to do for each reason", () => {
    const make = (reason: Event.EventDecodeError["reason"]) =>
      new Event.EventDecodeError({ reason, type: "X", version: 5, detail: "d" }).message
    expect(make("not_an_object")).toBe(
      "Cannot decode event \"X\": d. The stored row is damaged; restore it from a backup or re-fold from an intact copy of the log."
    )
    expect(make("unknown_type")).toContain("upgrade Ratchet to read this log")
    expect(make("newer_version")).toBe(
      "Cannot decode event \"X\" version 5: this kernel understands up to version d. Upgrade Ratchet to read this log."
    )
    expect(make("malformed")).toBe("Cannot decode event \"X\" version 5: d. The stored row is damaged; restore it from a backup.")
  })

  it("only takes the four documented reasons", () => {
    expect(() => new Event.EventDecodeError({ reason: "other" as "malformed", type: null, version: null, detail: "" })).toThrow()
  })
})

describe("shared value shapes", () => {
  it("Receipt accepts a person's receipt and rejects an empty channel", () => {
    const is = Schema.is(Event.Receipt)
    expect(is(receipt("spec", fakeDigest("1")))).toBe(true)
    expect(is(receipt("spec", fakeDigest("1"), { actor: agent, channel: "" }))).toBe(false)
  })

  it("Actor ids are bounded to 4096 characters", () => {
    const is = Schema.is(Event.Actor)
    expect(is({ kind: "user", id: "x".repeat(4096) })).toBe(true)
    expect(is({ kind: "user", id: "x".repeat(4097) })).toBe(false)
  })
})
