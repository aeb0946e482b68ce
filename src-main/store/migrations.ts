// Versioned schema migrations: an ordered array, applied once each, recorded in `schema_migrations`
// (and mirrored into PRAGMA user_version). Never edit a shipped step; append a new one.
import type Database from 'better-sqlite3';
import { convertToDeltas } from './delta-migration.js';
import { RESCORES_MIGRATION } from './rescores.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
  /** Data conversion run after `sql`, in the same transaction. */
  run?: (db: Database.Database) => void;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'sessions-and-completions',
    sql: `
      CREATE TABLE sessions (
        id           TEXT PRIMARY KEY,
        key          TEXT NOT NULL,
        key_hash     BLOB NOT NULL,          -- sha256(key): the indexed lookup; then timingSafeEqual on key
        engine_id    TEXT,
        harness      TEXT,
        task_id      TEXT,
        batch_id     TEXT,
        metadata     TEXT NOT NULL DEFAULT '{}',
        status       TEXT NOT NULL,
        reward       REAL,
        created_at   INTEGER NOT NULL,
        finished_at  INTEGER
      );
      CREATE UNIQUE INDEX sessions_key_hash ON sessions(key_hash);
      CREATE INDEX sessions_batch ON sessions(batch_id, created_at);
      CREATE INDEX sessions_status ON sessions(status);
      CREATE INDEX sessions_created ON sessions(created_at);

      CREATE TABLE completions (
        id                TEXT PRIMARY KEY,
        session_id        TEXT NOT NULL,
        seq               INTEGER NOT NULL,
        dialect           TEXT NOT NULL,
        engine_id         TEXT NOT NULL,
        replica           TEXT NOT NULL,
        policy_version    INTEGER NOT NULL,
        request_received  TEXT,
        request_served    TEXT,
        response          TEXT,
        finish_reason     TEXT,
        usage             TEXT,
        queue_ms          REAL NOT NULL,
        ttft_ms           REAL,
        total_ms          REAL NOT NULL,
        status            TEXT NOT NULL,
        error             TEXT,
        retry_of          TEXT,
        created_at        INTEGER NOT NULL,
        body_hash         TEXT,
        n_prompt          INTEGER NOT NULL,
        n_output          INTEGER NOT NULL,
        prompt_ids        BLOB NOT NULL,     -- little-endian Int32
        output_ids        BLOB NOT NULL,     -- little-endian Int32
        output_logprobs   BLOB NOT NULL      -- little-endian Float32
      );
      CREATE INDEX completions_session_seq ON completions(session_id, seq);
      CREATE INDEX completions_body_hash ON completions(session_id, body_hash);
      CREATE INDEX completions_engine ON completions(engine_id);
    `,
  },
  {
    version: 2,
    name: 'batches-and-session-runs',
    sql: `
      CREATE TABLE batches (
        id            TEXT PRIMARY KEY,
        status        TEXT NOT NULL,          -- queued | running | completed | cancelled | failed | interrupted
        spec          TEXT NOT NULL,          -- JSON: dataset, harness, engine, n, concurrency, timeoutMs, …
        task_ids      TEXT NOT NULL,          -- JSON array, dataset order
        error         TEXT,
        callback_url  TEXT,
        callback      TEXT,                   -- JSON: {status, attempts, lastError?, deliveredAt?}
        created_at    INTEGER NOT NULL,
        started_at    INTEGER,
        finished_at   INTEGER
      );
      CREATE INDEX batches_created ON batches(created_at);
      CREATE INDEX batches_status ON batches(status);

      -- One agent run of a rollout session: captured output (bounded) and the evaluator's verdict.
      CREATE TABLE session_runs (
        session_id    TEXT PRIMARY KEY,
        batch_id      TEXT,
        status        TEXT NOT NULL,          -- running | done | interrupted
        pid           INTEGER,
        run_token     TEXT,                   -- also in the agent's env (ROLLGATE_RUN_ID): proves a pid is ours
        work_dir      TEXT,
        outcome       TEXT,                   -- ok | agent_error | timeout | cancelled | start_error
        exit_code     INTEGER,
        signal        TEXT,
        duration_ms   INTEGER,
        stdout        TEXT,
        stderr        TEXT,
        final_answer  TEXT,
        evaluator     TEXT,                   -- JSON: {type, reward, output, error?}
        error         TEXT,
        started_at    INTEGER NOT NULL,
        finished_at   INTEGER
      );
      CREATE INDEX session_runs_batch ON session_runs(batch_id);
      CREATE INDEX session_runs_status ON session_runs(status);
    `,
  },
  {
    version: 3,
    name: 'engines',
    sql: `
      -- Engines added or edited through the control API (topology files are read at start-up instead).
      CREATE TABLE engines (
        id          TEXT PRIMARY KEY,
        config      TEXT NOT NULL,          -- JSON EngineConfig
        updated_at  INTEGER NOT NULL
      );
    `,
  },
  {
    version: 4,
    name: 'session-keys-hashed-only',
    sql: `
      -- A session key is the agent's API key: keep only its sha256, which is all the lookup needs.
      ALTER TABLE sessions DROP COLUMN key;
    `,
  },
  {
    version: 5,
    name: 'settings',
    sql: `
      -- Named values that survive restarts (JSON), e.g. the policy version.
      CREATE TABLE settings (
        key         TEXT PRIMARY KEY,
        value       TEXT NOT NULL,
        updated_at  INTEGER NOT NULL
      );
    `,
  },
  RESCORES_MIGRATION,
  {
    version: 7,
    name: 'completion-deltas',
    sql: `
      -- Delta storage (store/README.md): a row may be stored against an earlier completion of its session.
      -- prompt_ids then holds only the ids after the parent's first prompt_base tip ids, and the request
      -- columns may be tagged BLOBs (message-level deltas against the parent's, and/or deflated).
      ALTER TABLE completions ADD COLUMN parent_id TEXT;
      ALTER TABLE completions ADD COLUMN prompt_base INTEGER NOT NULL DEFAULT 0;
    `,
    run: convertToDeltas,
  },
  {
    version: 8,
    name: 'custody',
    sql: `
      -- Fail-closed custody (DESIGN §9): an intent is committed before each engine call and removed in the
      -- transaction that commits its completion; one left over at start-up was lost in a crash.
      CREATE TABLE call_intents (
        id          TEXT PRIMARY KEY,        -- the completion id the call will be recorded under
        session_id  TEXT NOT NULL,
        seq         INTEGER NOT NULL,
        dialect     TEXT NOT NULL,
        engine_id   TEXT NOT NULL,
        replica     TEXT NOT NULL DEFAULT '',
        created_at  INTEGER NOT NULL
      );
      -- status 'incomplete': why the capture cannot be trusted (lost-in-crash | missing-ids | logprob-count | engine-error-mid-stream)
      ALTER TABLE completions ADD COLUMN incomplete_reason TEXT;
      CREATE INDEX completions_incomplete ON completions(session_id) WHERE status = 'incomplete';
    `,
  },
];

/** Applies pending migrations in one IMMEDIATE transaction. Idempotent; returns the versions applied. */
export function migrate(db: Database.Database, migrations: readonly Migration[] = MIGRATIONS): number[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`);
  const applied: number[] = [];
  const run = db.transaction(() => {
    const done = new Set(
      (db.prepare('SELECT version FROM schema_migrations').all() as Array<{ version: number }>).map((r) => r.version),
    );
    const insert = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
    for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
      if (done.has(m.version)) continue;
      db.exec(m.sql);
      m.run?.(db);
      insert.run(m.version, m.name, Date.now());
      applied.push(m.version);
    }
    const max = migrations.reduce((v, m) => Math.max(v, m.version), 0);
    const current = db.pragma('user_version', { simple: true }) as number;
    if (max > current) db.pragma(`user_version = ${max | 0}`);
  });
  run.immediate();
  return applied;
}
