/**
 * The one gate for tests that need a real PostgreSQL server.
 *
 * The server is found at `RATCHET_TEST_DATABASE_URL`, by default
 * `postgres://postgres@127.0.0.1:5432/test` (trust authentication, database `test`; see
 * DEVELOPERS.md). Whether it is reachable is decided once per test process, by opening a TCP
 * connection to its host and port, and then:
 *
 * - reachable: the tests run;
 * - unreachable and `CI=true`: the tests are registered as one failing test that says why, so a
 *   CI run without its database can never pass by skipping;
 * - unreachable otherwise: the tests are skipped, with one line on the console saying so.
 *
 * A file that needs the server wraps its tests in {@link describePostgres} (top-level `await`,
 * which vitest supports), and gives every run its own schema from {@link testSchemaName}, dropped
 * afterwards, so parallel runs and parallel files never see each other's rows.
 *
 * @since 0.1.0
 */
import { randomBytes } from "node:crypto"
import { connect } from "node:net"
import { describe, it } from "vitest"

/**
 * @since 0.1.0
 * @category models
 */
export const defaultUrl = "postgres://postgres@127.0.0.1:5432/test"

/**
 * The URL the PostgreSQL tests connect to.
 *
 * @since 0.1.0
 * @category testing
 */
export const testUrl = (): string => {
  const fromEnv = process.env["RATCHET_TEST_DATABASE_URL"]
  return fromEnv === undefined || fromEnv === "" ? defaultUrl : fromEnv
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Availability {
  readonly reachable: boolean
  /** `host:port`, for messages. */
  readonly address: string
  /** Why the server is not reachable, or `null`. */
  readonly reason: string | null
}

const addressOf = (url: string): { readonly host: string; readonly port: number } => {
  const parsed = new URL(url)
  const host = parsed.hostname === "" ? "127.0.0.1" : parsed.hostname.replace(/^\[(.*)\]$/, "$1")
  const port = parsed.port === "" ? 5432 : Number(parsed.port)
  return { host, port }
}

const probe = (host: string, port: number, timeoutMs: number): Promise<string | null> =>
  new Promise((resolve) => {
    const socket = connect({ host, port })
    const finish = (reason: string | null) => {
      socket.removeAllListeners()
      socket.destroy()
      resolve(reason)
    }
    socket.setTimeout(timeoutMs, () => finish(`no answer within ${timeoutMs} ms`))
    socket.once("connect", () => finish(null))
    socket.once("error", (error) => finish(error.message))
  })

let cached: Promise<Availability> | undefined

/**
 * Whether the test server accepts connections; probed once per process.
 *
 * @since 0.1.0
 * @category testing
 */
export const postgresAvailability = (): Promise<Availability> => {
  if (cached === undefined) {
    const { host, port } = addressOf(testUrl())
    const address = `${host}:${port}`
    cached = probe(host, port, 2_000).then((reason) => ({ reachable: reason === null, address, reason }))
  }
  return cached
}

/**
 * Whether an unreachable server fails the run instead of skipping it.
 *
 * @since 0.1.0
 * @category testing
 */
export const required = (): boolean => process.env["CI"] === "true"

let announced = false

/**
 * `describe` for tests that need PostgreSQL: runs them when the server is reachable, fails in CI
 * when it is not, skips them (with one console line) otherwise. Await it at the top of the file.
 *
 * @since 0.1.0
 * @category testing
 */
export const describePostgres = async (name: string, body: () => void): Promise<void> => {
  const availability = await postgresAvailability()
  if (availability.reachable) {
    describe(name, body)
    return
  }
  if (required()) {
    describe(name, () => {
      it("needs PostgreSQL", () => {
        throw new Error(
          `PostgreSQL not reachable on ${availability.address} (${availability.reason}), and CI=true requires it: start the server (see DEVELOPERS.md) or set RATCHET_TEST_DATABASE_URL.`
        )
      })
    })
    return
  }
  if (!announced) {
    announced = true
    console.warn(
      `PostgreSQL not reachable on ${availability.address}: skipping PostgreSQL tests (CI=true makes this a failure)`
    )
  }
  describe.skip(name, body)
}

/**
 * A fresh schema name for one test run: `ratchet_test_` and 16 random hex digits, a valid
 * unquoted PostgreSQL identifier.
 *
 * @since 0.1.0
 * @category testing
 */
export const testSchemaName = (prefix = "ratchet_test"): string => `${prefix}_${randomBytes(8).toString("hex")}`
