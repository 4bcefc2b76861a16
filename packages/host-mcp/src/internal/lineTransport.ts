/**
 * The MCP stdio transport: one JSON-RPC message per line on standard input, one per line on
 * standard output, as the SDK's `StdioServerTransport` speaks it, with one difference that keeps
 * the server serving. The SDK's transport closes itself when its buffer passes 10 MiB, so a single
 * oversized message ended `ratchet mcp` (exit 0) without a word to the client. Here a line over
 * {@link maxMessageBytes} is discarded as it streams in (never held whole), answered with a
 * JSON-RPC error (`-32600`, with the request's id when the line shows it, else `null`), and the
 * next line is read as usual.
 *
 * @internal
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { ErrorCode, type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js"

/** The largest message read: the SDK's own limit (10 MiB). */
export const maxMessageBytes = 10 * 1024 * 1024

/** How much of an oversized line's start and end is kept to find its id. */
const keptBytes = 4096

/** A JSON-RPC id as JSON text: a string (bounded) or an integer. */
const idValue = String.raw`("(?:[^"\\]|\\.){0,256}"|-?\d{1,16})`
/** `"id"` as the first member of the outermost object (after `"jsonrpc"` at most). */
const idFirst = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${idValue}\s*[,}]`)
/** `"id"` as the last member of the outermost object: its closing brace ends the line. */
const idLast = new RegExp(String.raw`,\s*"id"\s*:\s*${idValue}\s*\}\s*$`)

/**
 * The id of an oversized message, from its first and last bytes, when it stands where only the
 * outermost object's member can stand; `null` otherwise (JSON-RPC's answer for an unknown id).
 */
export const recoverId = (head: string, tail: string): string | number | null => {
  const found = idFirst.exec(head) ?? idLast.exec(tail.replace(/\r$/, ""))
  if (found === null) return null
  try {
    const id: unknown = JSON.parse(found[1] as string)
    return typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id)) ? id : null
  } catch {
    return null
  }
}

/** An oversized line being skipped: its size so far, its first bytes and its last ones. */
interface Skipping {
  bytes: number
  readonly head: Buffer
  tail: Buffer
}

const lastBytes = (buffer: Buffer): Buffer => buffer.length <= keptBytes ? buffer : buffer.subarray(buffer.length - keptBytes)

/**
 * A transport over `stdin` and `stdout` (see the module comment).
 */
export class LineTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void

  private pending: Array<Buffer> = []
  private pendingBytes = 0
  private skipping: Skipping | null = null

  constructor(private readonly stdin: NodeJS.ReadableStream, private readonly stdout: NodeJS.WritableStream) {}

  private readonly onData = (chunk: Buffer | string) => {
    const data = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk
    let offset = 0
    while (offset < data.length) {
      const newline = data.indexOf(0x0a, offset)
      const piece = data.subarray(offset, newline === -1 ? data.length : newline)
      this.take(piece)
      if (newline === -1) return
      this.endOfLine()
      offset = newline + 1
    }
  }

  private readonly onStreamError = (error: Error) => this.onerror?.(error)

  private take(piece: Buffer): void {
    if (this.skipping !== null) {
      this.skipping.bytes += piece.length
      this.skipping.tail = Buffer.from(lastBytes(Buffer.concat([this.skipping.tail, lastBytes(piece)])))
      return
    }
    if (this.pendingBytes + piece.length <= maxMessageBytes) {
      this.pending.push(piece)
      this.pendingBytes += piece.length
      return
    }
    const sofar = Buffer.concat([...this.pending, piece])
    this.skipping = { bytes: sofar.length, head: Buffer.from(sofar.subarray(0, keptBytes)), tail: Buffer.from(lastBytes(sofar)) }
    this.pending = []
    this.pendingBytes = 0
  }

  private endOfLine(): void {
    const skipped = this.skipping
    if (skipped !== null) {
      this.skipping = null
      void this.refuse(skipped)
      return
    }
    const line = Buffer.concat(this.pending).toString("utf8").replace(/\r$/, "")
    this.pending = []
    this.pendingBytes = 0
    if (line.trim() === "") return
    let message: JSONRPCMessage
    try {
      message = JSONRPCMessageSchema.parse(JSON.parse(line))
    } catch (error) {
      // Not a JSON-RPC message: reported (on standard error, by the server) and skipped.
      this.onerror?.(error instanceof Error ? error : new Error(String(error)))
      return
    }
    this.onmessage?.(message)
  }

  private async refuse(skipped: Skipping): Promise<void> {
    const id = recoverId(skipped.head.toString("utf8"), skipped.tail.toString("utf8"))
    const message = `Request too large: this message is at least ${skipped.bytes} bytes, over the limit of ${maxMessageBytes} bytes (10 MiB) for one JSON-RPC message, so it was discarded unread; the server goes on. Send less in one message: put large content in a file in the workspace and pass its path (spec_propose and plan_propose take one).`
    this.onerror?.(new Error(`discarded a message of ${skipped.bytes} bytes (id ${JSON.stringify(id)}): over ${maxMessageBytes} bytes`))
    // JSON-RPC 2.0 answers a request whose id cannot be read with a null id.
    await this.send({ jsonrpc: "2.0", id, error: { code: ErrorCode.InvalidRequest, message } } as unknown as JSONRPCMessage)
  }

  start(): Promise<void> {
    this.stdin.on("data", this.onData)
    this.stdin.on("error", this.onStreamError)
    return Promise.resolve()
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.write(`${JSON.stringify(message)}\n`)) resolve()
      else this.stdout.once("drain", () => resolve())
    })
  }

  close(): Promise<void> {
    this.stdin.off("data", this.onData)
    this.stdin.off("error", this.onStreamError)
    if (this.stdin.listenerCount("data") === 0) this.stdin.pause()
    this.pending = []
    this.pendingBytes = 0
    this.skipping = null
    this.onclose?.()
    return Promise.resolve()
  }
}
