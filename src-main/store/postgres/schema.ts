// Postgres schema as versioned migrations (its own numbering; SQLite's are in ../migrations.ts), recorded in
// `schema_migrations` and applied under a transaction-scoped advisory lock, so nodes starting together apply
// each step once. The tables and columns are SQLite's at schema 8, with Postgres types: BYTEA for token
// arrays and tagged JSON columns, BIGINT for ms timestamps, DOUBLE PRECISION for reals, TEXT COLLATE "C" for
// ids (so ORDER BY matches SQLite's byte order), plus the owning node of sessions and call intents.
import type { Connection } from './connection.js';

export interface PgMigration {
  version: number;
  name: string;
  sql: string;
}

/** Arbitrary, fixed: the advisory lock key every node takes to migrate ('rollgate' in ASCII, truncated). */
const MIGRATION_LOCK = 0x726f6c6c67617465n;

export const PG_MIGRATIONS: readonly PgMigration[] = [
  {
    version: 1,
    name: 'rollgate-schema',
    sql: `
      CREATE TABLE sessions (
        id           TEXT COLLATE "C" PRIMARY KEY,
        key_hash     BYTEA NOT NULL,                -- sha256(key); confirmed with timingSafeEqual
        engine_id    TEXT,
        harness      TEXT,
        task_id      TEXT,
        batch_id     TEXT COLLATE "C",
        metadata     TEXT NOT NULL DEFAULT '{}',
        status       TEXT NOT NULL,
        reward       DOUBLE PRECISION,
        created_at   BIGINT NOT NULL,
        finished_at  BIGINT,
        node_id      TEXT                           -- the node that created (owns) the session; NULL: none named
      );
      CREATE UNIQUE INDEX sessions_key_hash ON sessions(key_hash);
      CREATE INDEX sessions_batch ON sessions(batch_id, created_at);
      CREATE INDEX sessions_status ON sessions(status);
      CREATE INDEX sessions_created ON sessions(created_at);
      CREATE INDEX sessions_node_active ON sessions(node_id) WHERE status = 'active';

      CREATE TABLE completions (
        id                TEXT COLLATE "C" PRIMARY KEY,
        session_id        TEXT COLLATE "C" NOT NULL,
        seq               INTEGER NOT NULL,
        dialect           TEXT NOT NULL,
        engine_id         TEXT NOT NULL,
        replica           TEXT NOT NULL,
        policy_version    INTEGER NOT NULL,
        -- JSON columns: the bytes json-columns.ts produces: plain JSON text (UTF-8), or a tagged value whose
        -- first byte is 0x01/0x02/0x03 (JSON text never starts with those), see rows.ts in this folder.
        request_received  BYTEA,
        request_served    BYTEA,
        response          BYTEA,
        finish_reason     TEXT,
        usage             TEXT,
        queue_ms          DOUBLE PRECISION NOT NULL,
        ttft_ms           DOUBLE PRECISION,
        total_ms          DOUBLE PRECISION NOT NULL,
        status            TEXT NOT NULL,
        error             TEXT,
        retry_of          TEXT,
        created_at        BIGINT NOT NULL,
        body_hash         TEXT,
        n_prompt          INTEGER NOT NULL,
        n_output          INTEGER NOT NULL,
        incomplete_reason TEXT,
        parent_id         TEXT COLLATE "C",
        prompt_base       INTEGER NOT NULL DEFAULT 0,
        prompt_ids        BYTEA NOT NULL,           -- little-endian Int32
        output_ids        BYTEA NOT NULL,           -- little-endian Int32
        output_logprobs   BYTEA NOT NULL            -- little-endian Float32
      );
      CREATE INDEX completions_session_seq ON completions(session_id, seq);
      CREATE INDEX completions_body_hash ON completions(session_id, body_hash);
      CREATE INDEX completions_engine ON completions(engine_id);
      CREATE INDEX completions_incomplete ON completions(session_id) WHERE status = 'incomplete';

      CREATE TABLE call_intents (
        id          TEXT COLLATE "C" PRIMARY KEY,   -- the completion id the call will be recorded under
        session_id  TEXT COLLATE "C" NOT NULL,
        seq         INTEGER NOT NULL,
        dialect     TEXT NOT NULL,
        engine_id   TEXT NOT NULL,
        replica     TEXT NOT NULL DEFAULT '',
        created_at  BIGINT NOT NULL,
        node_id     TEXT                            -- the node making the call (the session's owner)
      );
      CREATE INDEX call_intents_node ON call_intents(node_id);

      CREATE TABLE batches (
        id            TEXT COLLATE "C" PRIMARY KEY,
        status        TEXT NOT NULL,
        spec          TEXT NOT NULL,
        task_ids      TEXT NOT NULL,
        error         TEXT,
        callback_url  TEXT,
        callback      TEXT,
        created_at    BIGINT NOT NULL,
        started_at    BIGINT,
        finished_at   BIGINT
      );
      CREATE INDEX batches_created ON batches(created_at);
      CREATE INDEX batches_status ON batches(status);

      CREATE TABLE session_runs (
        session_id    TEXT COLLATE "C" PRIMARY KEY,
        batch_id      TEXT COLLATE "C",
        status        TEXT NOT NULL,
        pid           INTEGER,
        run_token     TEXT,
        work_dir      TEXT,
        outcome       TEXT,
        exit_code     INTEGER,
        signal        TEXT,
        duration_ms   BIGINT,
        stdout        TEXT,
        stderr        TEXT,
        final_answer  TEXT,
        evaluator     TEXT,
        error         TEXT,
        started_at    BIGINT NOT NULL,
        finished_at   BIGINT
      );
      CREATE INDEX session_runs_batch ON session_runs(batch_id);
      CREATE INDEX session_runs_status ON session_runs(status);

      CREATE TABLE engines (
        id          TEXT COLLATE "C" PRIMARY KEY,
        config      TEXT NOT NULL,
        updated_at  BIGINT NOT NULL
      );

      CREATE TABLE settings (
        key         TEXT COLLATE "C" PRIMARY KEY,
        value       TEXT NOT NULL,
        updated_at  BIGINT NOT NULL
      );

      CREATE TABLE rescores (
        id             TEXT COLLATE "C" PRIMARY KEY,
        created_at     BIGINT NOT NULL,
        engine         TEXT NOT NULL,
        engine_kind    TEXT,
        source_engine  TEXT,
        builder        TEXT NOT NULL,
        batch_id       TEXT COLLATE "C",
        session_id     TEXT COLLATE "C",
        sessions       INTEGER NOT NULL,
        traces         INTEGER NOT NULL,
        overall        TEXT NOT NULL,
        errors         TEXT NOT NULL
      );
      CREATE INDEX rescores_batch ON rescores(batch_id, created_at);
      CREATE INDEX rescores_session ON rescores(session_id, created_at);

      CREATE TABLE rescore_traces (
        rescore_id     TEXT COLLATE "C" NOT NULL REFERENCES rescores(id) ON DELETE CASCADE,
        ord            INTEGER NOT NULL,
        trace_id       TEXT COLLATE "C" NOT NULL,
        session_id     TEXT COLLATE "C" NOT NULL,
        source_engine  TEXT,
        replica        TEXT,
        completion_ids TEXT NOT NULL,
        positions      BYTEA,
        token_ids      BYTEA,
        sampled        BYTEA,
        rescored       BYTEA,
        dropped        INTEGER NOT NULL DEFAULT 0,
        summary        TEXT,
        error          TEXT,
        PRIMARY KEY (rescore_id, trace_id)
      );
      CREATE INDEX rescore_traces_session ON rescore_traces(session_id);
    `,
  },
];

/** Applies pending migrations in one transaction under the advisory lock. Idempotent; returns the versions applied. */
export async function migratePostgres(conn: Connection, migrations: readonly PgMigration[] = PG_MIGRATIONS): Promise<number[]> {
  return conn.transaction(async (db) => {
    await db.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK.toString()]);
    await db.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`);
    const done = new Set((await db.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
    const applied: number[] = [];
    for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
      if (done.has(m.version)) continue;
      await db.query(m.sql);
      await db.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [m.version, m.name, Date.now()]);
      applied.push(m.version);
    }
    return applied;
  });
}
