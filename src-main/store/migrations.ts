// Versioned schema migrations: an ordered array, applied once each, recorded in `schema_migrations`
// (and mirrored into PRAGMA user_version). Never edit a shipped step; append a new one.
import type Database from 'better-sqlite3';

export interface Migration {
  version: number;
  name: string;
  sql: string;
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
