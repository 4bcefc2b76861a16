/**
 * The one infrastructure error of the storage port.
 *
 * Every engine maps its native failures (SQLite result codes, PostgreSQL SQLSTATEs, file-system
 * errno values) into {@link StorageError} with a tagged {@link Reason}, so callers branch on
 * `reason._tag` and `isRetryable`, never on a driver's numeric code or on `instanceof`. Domain
 * outcomes of an append (a stale version, a stale epoch) are *not* storage errors: they live in
 * `EventStore` as their own types.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

const reason = <Tag extends string>(tag: Tag) =>
  Schema.TaggedStruct(tag, {
    /** The driver's own code, e.g. `SQLITE_BUSY`, `40001`, `ENOSPC`, kept for diagnosis. */
    code: Schema.NullOr(Schema.String),
    detail: Schema.String
  })

/**
 * The store could not be reached (a socket closed, a file could not be opened).
 *
 * @since 0.1.0
 * @category models
 */
export const Connection = reason("Connection")
/**
 * Another writer holds the lock and the busy timeout ran out (SQLITE_BUSY, lock_timeout).
 *
 * @since 0.1.0
 * @category models
 */
export const LockTimeout = reason("LockTimeout")
/**
 * Concurrent transactions could not be serialised (SQLSTATE 40001, 40P01).
 *
 * @since 0.1.0
 * @category models
 */
export const Serialization = reason("Serialization")
/**
 * A unique constraint refused a row (SQLITE_CONSTRAINT_UNIQUE / PRIMARYKEY, SQLSTATE 23505).
 *
 * @since 0.1.0
 * @category models
 */
export const UniqueViolation = reason("UniqueViolation")
/**
 * The store is read-only (SQLITE_READONLY, EROFS, EACCES, SQLSTATE 25006).
 *
 * @since 0.1.0
 * @category models
 */
export const ReadOnly = reason("ReadOnly")
/**
 * No space left (SQLITE_FULL, ENOSPC, SQLSTATE 53100).
 *
 * @since 0.1.0
 * @category models
 */
export const Full = reason("Full")
/**
 * The stored bytes are damaged: a malformed database image, a row that does not decode, a blob
 * whose content no longer matches its hash.
 *
 * @since 0.1.0
 * @category models
 */
export const Corrupt = reason("Corrupt")
/**
 * The store was written by a newer schema than this Ratchet understands.
 *
 * @since 0.1.0
 * @category models
 */
export const SchemaTooNew = reason("SchemaTooNew")
/**
 * Anything else.
 *
 * @since 0.1.0
 * @category models
 */
export const Unknown = reason("Unknown")

/**
 * @since 0.1.0
 * @category models
 */
export const Reason = Schema.Union(
  Connection,
  LockTimeout,
  Serialization,
  UniqueViolation,
  ReadOnly,
  Full,
  Corrupt,
  SchemaTooNew,
  Unknown
)

/**
 * @since 0.1.0
 * @category models
 */
export type Reason = typeof Reason.Type

/**
 * What to do about each reason, for the message a person reads.
 */
const advice = (reason: Reason): string => {
  switch (reason._tag) {
    case "Connection":
      return "Check that the store is reachable (the database server is up, RATCHET_DATABASE_URL is right, $RATCHET_HOME exists), then retry."
    case "LockTimeout":
      return "Another Ratchet process held the store longer than the busy timeout; retry, or find the process that holds it."
    case "Serialization":
      return "A concurrent writer conflicted; the operation is safe to retry."
    case "UniqueViolation":
      return "A row with this key already exists; read the current state before writing again."
    case "ReadOnly":
      return "Make the store writable by this user ($RATCHET_HOME and its ratchet.db for SQLite, e.g. chmod u+w, or point RATCHET_HOME at a writable directory; the database role's grants for PostgreSQL), then retry."
    case "Full":
      return "Free disk space (or raise the database's size limit), then retry; nothing committed earlier was lost."
    case "Corrupt":
      return "The stored data is damaged; restore the store from a backup. Events committed before the damaged one are still readable."
    case "SchemaTooNew":
      return "This store was written by a newer Ratchet; upgrade Ratchet. Nothing was written."
    case "Unknown":
      return "Run again with --verbose for the driver's error, and report it if it persists."
  }
}

/**
 * The infrastructure error of every storage operation.
 *
 * @since 0.1.0
 * @category errors
 */
export class StorageError extends Schema.TaggedError<StorageError>()("@ratchet/storage/StorageError", {
  reason: Reason,
  /** What the store was doing, e.g. `append`, `read`, `migrate`, `blob.put`. */
  operation: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {
  /**
   * Whether retrying the same operation may succeed without a person acting first.
   *
   * @since 0.1.0
   */
  get isRetryable(): boolean {
    return isRetryable(this.reason)
  }

  override get message(): string {
    const code = this.reason.code === null ? "" : ` [${this.reason.code}]`
    return `Storage ${this.operation} failed (${this.reason._tag}${code}): ${this.reason.detail}. ${advice(this.reason)}`
  }
}

/**
 * @since 0.1.0
 * @category guards
 */
export const isRetryable = (reason: Reason): boolean => {
  switch (reason._tag) {
    case "LockTimeout":
    case "Serialization":
    case "Connection":
      return true
    case "UniqueViolation":
    case "ReadOnly":
    case "Full":
    case "Corrupt":
    case "SchemaTooNew":
    case "Unknown":
      return false
  }
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  operation: string,
  reason: Reason,
  cause?: unknown
): StorageError => new StorageError(cause === undefined ? { operation, reason } : { operation, reason, cause })
