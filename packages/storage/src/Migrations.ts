/**
 * The store's schema, per dialect, as numbered migrations with a recorded version.
 *
 * Opening a store runs {@link run} inside one write transaction (SQLite: `BEGIN IMMEDIATE`;
 * PostgreSQL: a transaction-scoped advisory lock), so two processes opening a fresh store at once
 * both succeed: the second waits, then finds the migrations applied. A store whose recorded
 * version is newer than {@link latestVersion} is refused with a `SchemaTooNew` storage error
 * *before* anything is written.
 *
 * Payloads are stored as JSON text in both dialects, so the bytes we wrote are the bytes we
 * decode; integers that can exceed 2^31 are 64-bit.
 *
 * @since 0.1.0
 */
/**
 * The SQL dialects the store speaks.
 *
 * @since 0.1.0
 * @category models
 */
export type Dialect = "sqlite" | "pg"

/**
 * @since 0.1.0
 * @category models
 */
export interface Migration {
  readonly version: number
  readonly name: string
  readonly statements: Readonly<Record<Dialect, ReadonlyArray<string>>>
  /**
   * True when the shape of the task summary changed: after the statements, every branch's summary
   * is folded again from its events (decoded, so older event versions are upcast) and rewritten,
   * in the same transaction. The log is the authority; a summary is only ever its fold.
   */
  readonly refoldSummaries?: boolean
}

/** The JSON of a turn with every flag false, as `JSON.stringify(Turn.initial)` writes it. */
const initialTurn = `{"waitingForFirstChunk":false,"toolRejected":false,"toolUsed":false,"toolFailed":false,"streamReadComplete":false}`

/**
 * Every migration, in order. Never edit a released one; add the next.
 *
 * @since 0.1.0
 * @category models
 */
export const migrations: ReadonlyArray<Migration> = [
  {
    version: 1,
    name: "event log, branches, operations and read models",
    statements: {
      sqlite: [
        `CREATE TABLE ratchet_lsn (id INTEGER PRIMARY KEY CHECK (id = 1), value INTEGER NOT NULL)`,
        `INSERT INTO ratchet_lsn (id, value) VALUES (1, 0)`,
        `CREATE TABLE ratchet_streams (
          stream_id TEXT PRIMARY KEY,
          project_id TEXT NOT NULL,
          created_at INTEGER NOT NULL
        )`,
        `CREATE TABLE ratchet_branches (
          stream_id TEXT NOT NULL REFERENCES ratchet_streams (stream_id),
          branch TEXT NOT NULL,
          parent TEXT,
          fork_lsn INTEGER,
          version INTEGER NOT NULL,
          last_lsn INTEGER NOT NULL,
          created_at INTEGER NOT NULL,
          PRIMARY KEY (stream_id, branch)
        )`,
        `CREATE TABLE ratchet_events (
          lsn INTEGER PRIMARY KEY,
          stream_id TEXT NOT NULL,
          branch TEXT NOT NULL,
          version INTEGER NOT NULL,
          type TEXT NOT NULL,
          type_version INTEGER NOT NULL,
          payload TEXT NOT NULL,
          epoch INTEGER,
          operation_id TEXT NOT NULL,
          recorded_at INTEGER NOT NULL,
          UNIQUE (stream_id, branch, version)
        )`,
        `CREATE INDEX ratchet_events_stream ON ratchet_events (stream_id, branch, lsn)`,
        `CREATE TABLE ratchet_operations (
          operation_id TEXT PRIMARY KEY,
          stream_id TEXT NOT NULL,
          branch TEXT NOT NULL,
          request_digest TEXT NOT NULL,
          version INTEGER NOT NULL,
          first_lsn INTEGER NOT NULL,
          last_lsn INTEGER NOT NULL
        )`,
        `CREATE TABLE ratchet_task_summaries (
          stream_id TEXT NOT NULL,
          branch TEXT NOT NULL,
          project_id TEXT NOT NULL,
          version INTEGER NOT NULL,
          last_lsn INTEGER NOT NULL,
          state TEXT NOT NULL,
          summary TEXT NOT NULL,
          PRIMARY KEY (stream_id, branch)
        )`,
        `CREATE TABLE ratchet_attempts (
          stream_id TEXT NOT NULL,
          branch TEXT NOT NULL,
          run_id TEXT NOT NULL,
          step_id TEXT NOT NULL,
          attempt INTEGER NOT NULL,
          state TEXT NOT NULL,
          updated_lsn INTEGER NOT NULL,
          PRIMARY KEY (stream_id, branch, run_id, step_id, attempt)
        )`,
        `CREATE TABLE ratchet_intents (
          stream_id TEXT NOT NULL,
          branch TEXT NOT NULL,
          intent_id TEXT NOT NULL,
          run_id TEXT NOT NULL,
          step_id TEXT NOT NULL,
          attempt INTEGER NOT NULL,
          state TEXT NOT NULL,
          outcome TEXT,
          updated_lsn INTEGER NOT NULL,
          PRIMARY KEY (stream_id, branch, intent_id)
        )`,
        `CREATE INDEX ratchet_intents_open ON ratchet_intents (state)`,
        `CREATE TABLE ratchet_checkpoints (
          stream_id TEXT NOT NULL,
          branch TEXT NOT NULL,
          lsn INTEGER NOT NULL,
          kind TEXT NOT NULL,
          run_id TEXT,
          PRIMARY KEY (stream_id, branch, lsn)
        )`,
        `CREATE TABLE ratchet_leases (
          project_id TEXT NOT NULL,
          stream_id TEXT NOT NULL,
          epoch INTEGER NOT NULL,
          held INTEGER NOT NULL,
          owner TEXT NOT NULL,
          acquired_at INTEGER NOT NULL,
          heartbeat_at INTEGER NOT NULL,
          grace_ms INTEGER NOT NULL,
          updated_lsn INTEGER NOT NULL,
          PRIMARY KEY (project_id, stream_id)
        )`,
        `CREATE TABLE ratchet_blobs (digest TEXT PRIMARY KEY, size INTEGER NOT NULL, bytes BLOB NOT NULL)`
      ],
      pg: [
        `CREATE TABLE ratchet_lsn (id INTEGER PRIMARY KEY CHECK (id = 1), value BIGINT NOT NULL)`,
        `INSERT INTO ratchet_lsn (id, value) VALUES (1, 0)`,
        `CREATE TABLE ratchet_streams (
          stream_id TEXT PRIMARY KEY,
          project_id TEXT NOT NULL,
          created_at BIGINT NOT NULL
        )`,
        `CREATE TABLE ratchet_branches (
          stream_id TEXT NOT NULL REFERENCES ratchet_streams (stream_id),
          branch TEXT NOT NULL,
          parent TEXT,
          fork_lsn BIGINT,
          version BIGINT NOT NULL,
          last_lsn BIGINT NOT NULL,
          created_at BIGINT NOT NULL,
          PRIMARY KEY (stream_id, branch)
        )`,
        `CREATE TABLE ratchet_events (
          lsn BIGINT PRIMARY KEY,
          stream_id TEXT NOT NULL,
          branch TEXT NOT NULL,
          version BIGINT NOT NULL,
          type TEXT NOT NULL,
          type_version INTEGER NOT NULL,
          payload TEXT NOT NULL,
          epoch BIGINT,
          operation_id TEXT NOT NULL,
          recorded_at BIGINT NOT NULL,
          UNIQUE (stream_id, branch, version)
        )`,
        `CREATE INDEX ratchet_events_stream ON ratchet_events (stream_id, branch, lsn)`,
        `CREATE TABLE ratchet_operations (
          operation_id TEXT PRIMARY KEY,
          stream_id TEXT NOT NULL,
          branch TEXT NOT NULL,
          request_digest TEXT NOT NULL,
          version BIGINT NOT NULL,
          first_lsn BIGINT NOT NULL,
          last_lsn BIGINT NOT NULL
        )`,
        `CREATE TABLE ratchet_task_summaries (
          stream_id TEXT NOT NULL,
          branch TEXT NOT NULL,
          project_id TEXT NOT NULL,
          version BIGINT NOT NULL,
          last_lsn BIGINT NOT NULL,
          state TEXT NOT NULL,
          summary TEXT NOT NULL,
          PRIMARY KEY (stream_id, branch)
        )`,
        `CREATE TABLE ratchet_attempts (
          stream_id TEXT NOT NULL,
          branch TEXT NOT NULL,
          run_id TEXT NOT NULL,
          step_id TEXT NOT NULL,
          attempt INTEGER NOT NULL,
          state TEXT NOT NULL,
          updated_lsn BIGINT NOT NULL,
          PRIMARY KEY (stream_id, branch, run_id, step_id, attempt)
        )`,
        `CREATE TABLE ratchet_intents (
          stream_id TEXT NOT NULL,
          branch TEXT NOT NULL,
          intent_id TEXT NOT NULL,
          run_id TEXT NOT NULL,
          step_id TEXT NOT NULL,
          attempt INTEGER NOT NULL,
          state TEXT NOT NULL,
          outcome TEXT,
          updated_lsn BIGINT NOT NULL,
          PRIMARY KEY (stream_id, branch, intent_id)
        )`,
        `CREATE INDEX ratchet_intents_open ON ratchet_intents (state)`,
        `CREATE TABLE ratchet_checkpoints (
          stream_id TEXT NOT NULL,
          branch TEXT NOT NULL,
          lsn BIGINT NOT NULL,
          kind TEXT NOT NULL,
          run_id TEXT,
          PRIMARY KEY (stream_id, branch, lsn)
        )`,
        `CREATE TABLE ratchet_leases (
          project_id TEXT NOT NULL,
          stream_id TEXT NOT NULL,
          epoch BIGINT NOT NULL,
          held INTEGER NOT NULL,
          owner TEXT NOT NULL,
          acquired_at BIGINT NOT NULL,
          heartbeat_at BIGINT NOT NULL,
          grace_ms BIGINT NOT NULL,
          updated_lsn BIGINT NOT NULL,
          PRIMARY KEY (project_id, stream_id)
        )`,
        `CREATE TABLE ratchet_blobs (digest TEXT PRIMARY KEY, size BIGINT NOT NULL, bytes BYTEA NOT NULL)`
      ]
    }
  },
  {
    version: 2,
    name: "the turn region of each attempt",
    statements: {
      // Attempts recorded before the column existed had no turn events: every flag false.
      sqlite: [`ALTER TABLE ratchet_attempts ADD COLUMN turn TEXT NOT NULL DEFAULT '${initialTurn}'`],
      pg: [`ALTER TABLE ratchet_attempts ADD COLUMN turn TEXT NOT NULL DEFAULT '${initialTurn}'`]
    }
  },
  {
    version: 3,
    name: "the spec's and plan's approval receipts in the task summary (signed approvals)",
    statements: { sqlite: [], pg: [] },
    // A summary now keeps the receipt behind each approval, so the run and completion gates can
    // check its signature again; summaries written before are folded again from their events.
    refoldSummaries: true
  }
]

/**
 * The schema version this build of Ratchet writes.
 *
 * @since 0.1.0
 * @category models
 */
export const latestVersion: number = migrations[migrations.length - 1]?.version ?? 0
