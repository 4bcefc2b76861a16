/**
 * `ratchet ui --trace-url` / `RATCHET_TRACE_URL`: which addresses the run page may link traces to,
 * from a table written by hand (accepted and refused), each refusal naming its source.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { traceUrlOf } from "../../src/UiCommand.js"

const run = (option: unknown, variable: string | undefined) => Effect.runSync(Effect.either(traceUrlOf(option, variable)))

describe("traceUrlOf", () => {
  it.each([
    ["a Jaeger address", "http://localhost:16686/trace/{traceId}"],
    ["an https viewer with the id in its query", "https://ui.honeycomb.io/team/trace?trace_id={traceId}"],
    ["the id twice", "http://tempo.local/{traceId}#{traceId}"],
    ["a percent-encoded space", "http://a/my%20trace/{traceId}"],
    ["an IPv6 host and port", "http://[::1]:16686/trace/{traceId}"]
  ])("takes %s from the flag", (_, value) => {
    expect(run(value, undefined)).toEqual(Either.right(value))
  })

  it("takes the variable when the flag is not given, and the flag over the variable", () => {
    expect(run(undefined, "http://a/{traceId}")).toEqual(Either.right("http://a/{traceId}"))
    expect(run("http://flag/{traceId}", "http://variable/{traceId}")).toEqual(Either.right("http://flag/{traceId}"))
  })

  it("has none when neither is given, or the variable is empty", () => {
    expect(run(undefined, undefined)).toEqual(Either.right(null))
    expect(run(undefined, "")).toEqual(Either.right(null))
  })

  it.each([
    ["no {traceId}", "http://localhost:16686/trace/", "has no {traceId}"],
    ["a javascript: address", "javascript:alert('{traceId}')", "javascript: address"],
    ["a data: address", "data:text/html,{traceId}", "data: address"],
    ["a file: address", "file:///etc/{traceId}", "file: address"],
    ["a host and port without a scheme", "localhost:16686/{traceId}", "localhost: address"],
    ["a broken address", "http://[::1/{traceId}", "is not a URL"],
    ["a relative path", "/trace/{traceId}", "is not a URL"],
    ["an empty flag", "", "has no {traceId}"],
    ["a template of 3 kB", `http://a/{traceId}${"x".repeat(3000)}`, "at most 2048"],
    ["another name in braces", "http://a/{trace_id}", "has no {traceId}"],
    ["a leading space", " http://localhost:16686/trace/{traceId}", "space or control character at position 1"],
    ["a trailing newline", "http://localhost:16686/trace/{traceId}\n", "at position 39"],
    ["a tab inside", "http://local\thost:16686/trace/{traceId}", "at position 13"],
    ["a space in the path", "http://a/my trace/{traceId}", "percent-encode it"],
    ["a DEL character", "http://a/\u007f/{traceId}", "at position 10"],
    ["a user and password", "http://ana:secret@localhost:16686/trace/{traceId}", "user name or password"],
    ["a user alone", "https://ana@viewer.example/{traceId}", "user name or password"],
    ["the id as the host", "http://{traceId}/trace", "in the host or port"],
    ["the id in a subdomain", "https://{traceId}.viewer.example/trace", "in the host or port"],
    ["the id as the port", "http://localhost:1{traceId}/trace", "in the host or port"]
  ])("refuses %s, naming the flag", (_, value, reason) => {
    const result = run(value, undefined)
    expect(Either.isLeft(result)).toBe(true)
    if (Either.isLeft(result)) {
      expect(result.left.field).toBe("--trace-url")
      expect(result.left.message).toContain(reason)
      expect(result.left.message).toContain("http://localhost:16686/trace/{traceId}")
    }
  })

  it("takes an address of exactly 2048 characters and refuses one of 2049", () => {
    const base = "http://a/{traceId}"
    const at = (length: number) => `${base}${"x".repeat(length - base.length)}`
    expect(run(at(2048), undefined)).toEqual(Either.right(at(2048)))
    expect(Either.isLeft(run(at(2049), undefined))).toBe(true)
  })

  it("names the variable when the address came from it", () => {
    const result = run(undefined, "ftp://a/{traceId}")
    expect(Either.isLeft(result) && result.left.field).toBe("RATCHET_TRACE_URL")
  })
})
