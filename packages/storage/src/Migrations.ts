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
 * PostgreSQL's append in one round trip (ADR 0021): `ratchet_append(plan)` takes a plan the client
 * decided and folded against the state it remembers for the branch, and lands it only if that
 * state is still the stored one. Under the LSN counter row's lock (the lock every writer takes
 * first), it checks that the operation id is new, that the branch is at the expected version, that
 * the lease row is the one the client fenced against and that the rows the client took for absent
 * are absent; any mismatch returns NULL having written nothing, and the client runs the full
 * transaction instead. Positions in the plan are relative to the batch's first LSN; the summary
 * text arrives as the halves around its `lastLsn`; a row that keeps a stored LSN carries it instead.
 * Returns the batch's first LSN.
 */
const appendFunction = `CREATE OR REPLACE FUNCTION ratchet_append(plan TEXT) RETURNS BIGINT LANGUAGE plpgsql AS $body$
DECLARE
  p JSONB := plan::jsonb;
  v_s TEXT := p->>'stream';
  v_b TEXT := p->>'branch';
  v_expected BIGINT := (p->>'expected')::bigint;
  v_n BIGINT := jsonb_array_length(p->'events');
  v_counter BIGINT;
  v_first BIGINT;
  v_now BIGINT;
BEGIN
  SELECT value INTO v_counter FROM ratchet_lsn WHERE id = 1 FOR UPDATE;
  IF EXISTS (SELECT 1 FROM ratchet_operations WHERE operation_id = p->>'operation') THEN RETURN NULL; END IF;
  IF NOT EXISTS (SELECT 1 FROM ratchet_branches WHERE stream_id = v_s AND branch = v_b AND version = v_expected) THEN
    RETURN NULL;
  END IF;
  IF jsonb_typeof(p->'lease') = 'null' THEN
    IF EXISTS (SELECT 1 FROM ratchet_leases WHERE project_id = p->>'project' AND stream_id = v_s) THEN RETURN NULL; END IF;
  ELSIF NOT EXISTS (
    SELECT 1 FROM ratchet_leases WHERE project_id = p->>'project' AND stream_id = v_s
      AND epoch = (p->'lease'->>'epoch')::bigint AND held = (p->'lease'->>'held')::int
  ) THEN
    RETURN NULL;
  END IF;
  IF EXISTS (
    SELECT 1 FROM jsonb_array_elements_text(p->'absentIntents') AS a(intent_id)
      JOIN ratchet_intents i ON i.stream_id = v_s AND i.branch = v_b AND i.intent_id = a.intent_id
  ) OR EXISTS (
    SELECT 1 FROM jsonb_to_recordset(p->'absentAttempts') AS a(run_id TEXT, step_id TEXT, attempt INTEGER)
      JOIN ratchet_attempts t ON t.stream_id = v_s AND t.branch = v_b AND t.run_id = a.run_id AND t.step_id = a.step_id
        AND t.attempt = a.attempt
  ) THEN
    RETURN NULL;
  END IF;
  v_first := v_counter + 1;
  UPDATE ratchet_lsn SET value = v_counter + v_n WHERE id = 1;
  v_now := (extract(epoch from clock_timestamp()) * 1000)::bigint;
  UPDATE ratchet_branches SET version = v_expected + v_n, last_lsn = v_counter + v_n WHERE stream_id = v_s AND branch = v_b;
  INSERT INTO ratchet_events (lsn, stream_id, branch, version, type, type_version, payload, epoch, operation_id, recorded_at)
    SELECT v_first + e.ord - 1, v_s, v_b, v_expected + e.ord, e.value->>'type', (e.value->>'typeVersion')::int,
      e.value->>'payload', (p->>'epoch')::bigint, p->>'operation', v_now
    FROM jsonb_array_elements(p->'events') WITH ORDINALITY AS e(value, ord);
  INSERT INTO ratchet_operations (operation_id, stream_id, branch, request_digest, version, first_lsn, last_lsn)
    VALUES (p->>'operation', v_s, v_b, p->>'digest', v_expected + v_n, v_first, v_counter + v_n);
  IF jsonb_typeof(p->'summary') = 'object' THEN
    INSERT INTO ratchet_task_summaries (stream_id, branch, project_id, version, last_lsn, state, summary)
      VALUES (v_s, v_b, p->>'project', (p->'summary'->>'version')::bigint, v_first + (p->'summary'->>'at')::bigint,
        p->'summary'->>'state',
        (p->'summary'->>'head') || (v_first + (p->'summary'->>'at')::bigint)::text || (p->'summary'->>'tail'))
      ON CONFLICT (stream_id, branch) DO UPDATE SET project_id = excluded.project_id, version = excluded.version,
        last_lsn = excluded.last_lsn, state = excluded.state, summary = excluded.summary;
  END IF;
  INSERT INTO ratchet_attempts (stream_id, branch, run_id, step_id, attempt, state, turn, updated_lsn)
    SELECT v_s, v_b, a.run_id, a.step_id, a.attempt, a.state, a.turn, COALESCE(v_first + a.at, a.updated_lsn)
    FROM jsonb_to_recordset(p->'attempts')
      AS a(run_id TEXT, step_id TEXT, attempt INTEGER, state TEXT, turn TEXT, updated_lsn BIGINT, at BIGINT)
    ON CONFLICT (stream_id, branch, run_id, step_id, attempt) DO UPDATE SET state = excluded.state,
      turn = excluded.turn, updated_lsn = excluded.updated_lsn;
  INSERT INTO ratchet_intents (stream_id, branch, intent_id, run_id, step_id, attempt, state, outcome, updated_lsn)
    SELECT v_s, v_b, i.intent_id, i.run_id, i.step_id, i.attempt, i.state, i.outcome,
      COALESCE(v_first + i.at, i.updated_lsn)
    FROM jsonb_to_recordset(p->'intents')
      AS i(intent_id TEXT, run_id TEXT, step_id TEXT, attempt INTEGER, state TEXT, outcome TEXT, updated_lsn BIGINT, at BIGINT)
    ON CONFLICT (stream_id, branch, intent_id) DO UPDATE SET run_id = excluded.run_id, step_id = excluded.step_id,
      attempt = excluded.attempt, state = excluded.state, outcome = excluded.outcome,
      updated_lsn = excluded.updated_lsn;
  INSERT INTO ratchet_checkpoints (stream_id, branch, lsn, kind, run_id)
    SELECT v_s, v_b, v_first + c.at, c.kind, c.run_id
    FROM jsonb_to_recordset(p->'checkpoints') AS c(kind TEXT, run_id TEXT, at BIGINT);
  RETURN v_first;
END
$body$`

/**
 * The indexes `ReadModels.runFrontier` and `ReadModels.checkpoints` with a query read through: a
 * run's open attempts (a partial index, so it holds only the few open rows; its predicate is written
 * exactly as the reads write theirs, and `state` is a key column so that SQLite, which keeps no
 * statistics, prefers it to the primary key), an attempt's intents, and a run's checkpoints by
 * kind. The same text in both dialects; `IF NOT EXISTS`, so a store whose recorded version was set
 * back (as the upgrade tests do) migrates again.
 */
const runIndexes: ReadonlyArray<string> = [
  `CREATE INDEX IF NOT EXISTS ratchet_attempts_open ON ratchet_attempts (stream_id, branch, run_id, state) WHERE state IN ('Pending', 'Running')`,
  `CREATE INDEX IF NOT EXISTS ratchet_intents_attempt ON ratchet_intents (stream_id, branch, run_id, step_id, attempt)`,
  `CREATE INDEX IF NOT EXISTS ratchet_checkpoints_run ON ratchet_checkpoints (stream_id, branch, run_id, kind, lsn)`
]

/**
 * Lessons (ADR 0033): their own event table (a lesson is not a task: no branches, no lease, no
 * global LSN), their operation ids, the read model of each lesson's fold, its fingerprints for the
 * exact lookup, and the full-text index over its text. Only new tables, so nothing stored before
 * is touched; `IF NOT EXISTS`, so a store whose recorded version was set back migrates again.
 */
const lessonTables = (integer: "INTEGER" | "BIGINT"): ReadonlyArray<string> => [
  `CREATE TABLE IF NOT EXISTS ratchet_lesson_events (
    stream_id TEXT NOT NULL,
    version ${integer} NOT NULL,
    lesson_id TEXT NOT NULL,
    project_id TEXT NOT NULL,
    type TEXT NOT NULL,
    type_version INTEGER NOT NULL,
    payload TEXT NOT NULL,
    operation_id TEXT NOT NULL,
    recorded_at ${integer} NOT NULL,
    PRIMARY KEY (stream_id, version)
  )`,
  `CREATE TABLE IF NOT EXISTS ratchet_lesson_operations (
    operation_id TEXT PRIMARY KEY,
    stream_id TEXT NOT NULL,
    request_digest TEXT NOT NULL,
    first_version ${integer} NOT NULL,
    version ${integer} NOT NULL
  )`,
  `CREATE TABLE IF NOT EXISTS ratchet_lessons (
    lesson_id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL,
    status TEXT NOT NULL,
    revision INTEGER NOT NULL,
    version ${integer} NOT NULL,
    fingerprints TEXT NOT NULL,
    paths TEXT NOT NULL,
    task_types TEXT NOT NULL,
    summary TEXT NOT NULL,
    search_text TEXT NOT NULL,
    view TEXT NOT NULL,
    created_at ${integer} NOT NULL,
    changed_at ${integer} NOT NULL
  )`,
  `CREATE INDEX IF NOT EXISTS ratchet_lessons_project ON ratchet_lessons (project_id, status)`,
  `CREATE TABLE IF NOT EXISTS ratchet_lesson_fingerprints (
    fingerprint TEXT NOT NULL,
    lesson_id TEXT NOT NULL,
    PRIMARY KEY (fingerprint, lesson_id)
  )`
]

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
  },
  {
    version: 4,
    name: "the append as one statement on PostgreSQL (ADR 0021)",
    statements: { sqlite: [], pg: [appendFunction] }
  },
  {
    version: 5,
    name: "indexes for reading one run's frontier and checkpoints (recovery that grows with the run, not the history)",
    statements: {
      sqlite: runIndexes,
      pg: runIndexes
    }
  },
  {
    version: 6,
    name: "lessons: their streams, read model and full-text search (ADR 0033)",
    statements: {
      sqlite: [
        ...lessonTables("INTEGER"),
        // Kept by hand in the append's transaction (not an external-content table), so a row is
        // exactly the text the read model holds; porter stems English words as PostgreSQL does.
        `CREATE VIRTUAL TABLE IF NOT EXISTS ratchet_lessons_fts USING fts5(lesson_id UNINDEXED, search_text, tokenize = 'porter unicode61')`
      ],
      pg: [
        ...lessonTables("BIGINT"),
        `ALTER TABLE ratchet_lessons ADD COLUMN IF NOT EXISTS search tsvector
          GENERATED ALWAYS AS (to_tsvector('english', search_text)) STORED`,
        `CREATE INDEX IF NOT EXISTS ratchet_lessons_search ON ratchet_lessons USING GIN (search)`
      ]
    }
  }
]

/**
 * The schema version this build of Ratchet writes.
 *
 * @since 0.1.0
 * @category models
 */
export const latestVersion: number = migrations[migrations.length - 1]?.version ?? 0
