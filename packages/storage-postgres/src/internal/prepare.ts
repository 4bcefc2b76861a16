/**
 * The PostgreSQL store's options checked and made ready to connect (`PostgresStore.layer`): the
 * schema's name, the pool's size, the URL (never echoed: it may carry a password) with the schema
 * and the idle-in-transaction limit in its startup options, and the claims' own session URL.
 *
 * @internal
 */
import * as ConfigError from "effect/ConfigError"
import * as Either from "effect/Either"
import * as Redacted from "effect/Redacted"
import type { Options } from "../PostgresStore.js"

const expectedUrl = "postgres://user:password@host:5432/database"
export const defaultSchema = "public"
const defaultMaxConnections = 10

export interface Prepared {
  readonly url: Redacted.Redacted<string>
  readonly schema: string
  readonly maxConnections: number
  /** The claims' own URL, or null when they use `url`'s pool. */
  readonly sessionUrl: Redacted.Redacted<string> | null
}

const schemaPattern = /^[a-z_][a-z0-9_]{0,62}$/

const invalid = (path: string, message: string): ConfigError.ConfigError => ConfigError.InvalidData([path], message)

/**
 * Checks the URL without ever echoing it (it may carry a password) and adds the schema to the
 * connection's startup `options`, where PostgreSQL applies it before the first statement.
 */
const prepareUrl = (
  raw: string,
  schema: string,
  path: string
): Either.Either<Redacted.Redacted<string>, ConfigError.ConfigError> => {
  const problem = (why: string) =>
    Either.left(invalid(path, `${path} ${why}; expected a PostgreSQL URL of the form ${expectedUrl}`))
  let url: URL
  try {
    url = new URL(raw.trim())
  } catch {
    return problem("is not a URL")
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") {
    return problem(`has the scheme "${url.protocol.slice(0, 20)}" instead of postgres:`)
  }
  if (url.hostname === "" && !url.searchParams.has("host")) {
    return problem("names no host")
  }
  const options = url.searchParams.get("options")
  // A Ratchet process frozen inside a write transaction (SIGSTOP, a debugger) would otherwise hold
  // the LSN counter's row lock, and with it every writer of the store, for as long as it stays
  // frozen; the server ends such a session after this long, well inside a lease's default grace.
  url.searchParams.set(
    "options",
    `${options === null ? "" : `${options} `}-c search_path=${schema} -c idle_in_transaction_session_timeout=${idleInTransactionTimeoutMs}`
  )
  return Either.right(Redacted.make(url.toString()))
}

/** How long a session may sit idle inside a transaction before the server ends it (milliseconds). */
const idleInTransactionTimeoutMs = 15_000

export const prepare = (options: Options, urlPath: string, schemaPath: string, sessionPath = "sessionUrl"): Either.Either<Prepared, ConfigError.ConfigError> => {
  const schema = options.schema ?? defaultSchema
  if (!schemaPattern.test(schema)) {
    return Either.left(
      invalid(
        schemaPath,
        `${schemaPath} must be a lowercase PostgreSQL identifier: a-z, 0-9 and _, not starting with a digit, at most 63 characters`
      )
    )
  }
  const maxConnections = options.maxConnections ?? defaultMaxConnections
  if (!Number.isSafeInteger(maxConnections) || maxConnections < 1) {
    return Either.left(invalid("maxConnections", "maxConnections must be a positive integer"))
  }
  const raw = Redacted.isRedacted(options.url) ? Redacted.value(options.url) : options.url
  const session = options.sessionUrl === undefined ? "" : Redacted.isRedacted(options.sessionUrl) ? Redacted.value(options.sessionUrl) : options.sessionUrl
  return Either.flatMap(prepareUrl(raw, schema, urlPath), (url): Either.Either<Prepared, ConfigError.ConfigError> =>
    session === ""
      ? Either.right({ url, schema, maxConnections, sessionUrl: null })
      : Either.map(prepareUrl(session, schema, sessionPath), (sessionUrl) => ({ url, schema, maxConnections, sessionUrl })))
}
