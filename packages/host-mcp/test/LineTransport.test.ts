/**
 * The id of an oversized JSON-RPC message, read from its first and last bytes: only where it can
 * only be the outermost object's member, never an "id" inside the params or inside a string.
 */
import { describe, expect, it } from "vitest"
import { recoverId } from "../src/internal/lineTransport.js"

const split = (line: string) => recoverId(line.slice(0, 4096), line.slice(-4096))
const big = "z".repeat(20_000)

describe("recoverId", () => {
  it("reads the id first or last in the outermost object", () => {
    expect(split(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "m", params: { big } }))).toBe(7)
    expect(split(JSON.stringify({ id: "a\"b", method: "m", params: { big } }))).toBe("a\"b")
    expect(split(`${JSON.stringify({ method: "m", params: { big }, jsonrpc: "2.0", id: -3 })}\r`)).toBe(-3)
  })

  it("is null when the id is not the outermost object's, or not an id at all", () => {
    expect(split(JSON.stringify({ method: "m", params: { big, id: 5 } }))).toBeNull()
    expect(split(JSON.stringify({ method: "m", params: { text: `${big}","id":5}` } }))).toBeNull()
    expect(split(JSON.stringify({ method: "m", params: { big }, id: 1.5 }))).toBeNull()
    expect(split(JSON.stringify({ method: "m", params: { big }, id: null }))).toBeNull()
    expect(split(big)).toBeNull()
  })
})
