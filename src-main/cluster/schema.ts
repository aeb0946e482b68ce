// The cluster's own tables (DESIGN §12), beside the store's: the node registry and the queue's per-sample
// ledger. The store owns its migrations; these are created here, idempotently, under an advisory lock so
// nodes starting together do not race.
import type pg from 'pg';

/** Advisory lock ids (any constant 64-bit numbers, unique to Rollgate's cluster layer). */
export const SCHEMA_LOCK = 7_315_001;
export const RECOVERY_LOCK = 7_315_002;

const STATEMENTS = [
  `CREATE TABLE IF NOT EXISTS rollgate_nodes (
    id text PRIMARY KEY,
    advertise_url text NOT NULL,
    started_at bigint NOT NULL,
    heartbeat_at bigint NOT NULL,
    status text NOT NULL,
    engines jsonb NOT NULL DEFAULT '[]',
    load jsonb NOT NULL DEFAULT '{}',
    drained boolean NOT NULL DEFAULT false
  )`,
  // One row per (batch, task, sample): who runs it now (node, attempt, pg-boss job) and whether it counted.
  // A sample counts once: only the attempt that still holds the row may mark it done.
  `CREATE TABLE IF NOT EXISTS rollgate_batch_samples (
    batch_id text NOT NULL,
    task_id text NOT NULL,
    sample_index integer NOT NULL,
    status text NOT NULL DEFAULT 'queued',
    node_id text,
    job_id text,
    attempt integer NOT NULL DEFAULT 0,
    session_id text,
    PRIMARY KEY (batch_id, task_id, sample_index)
  )`,
  `CREATE INDEX IF NOT EXISTS rollgate_batch_samples_node ON rollgate_batch_samples (node_id) WHERE status = 'running'`,
];

export async function ensureClusterSchema(db: pg.Pool): Promise<void> {
  const client = await db.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [SCHEMA_LOCK]);
    try {
      for (const sql of STATEMENTS) await client.query(sql);
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [SCHEMA_LOCK]);
    }
  } finally {
    client.release();
  }
}
