// The Postgres store (DESIGN §12): the asynchronous Store over one shared server, for many Rollgate nodes. Each
// node opens it with its node id; sessions and call intents it creates carry that id, so a survivor can sweep a
// dead node's rows (markBatchSessionsInterrupted / recoverDanglingIntents / runs.markUnfinishedInterrupted with
// its nodeId). Rows are encoded by the same codecs as SQLite's, so both stores hold the same bytes.
import type pg from 'pg';
import type { Store } from '../types.js';
import type { WriterOptions } from '../writer.js';
import { pgBatches, pgRuns, pgSlices, type PgBatchesStore } from './batches.js';
import { PgCompletions } from './completions.js';
import { connect } from './connection.js';
import { migratePostgres } from './schema.js';
import { pgSessions } from './sessions.js';
import { pgEngines, pgRescores, pgSettings } from './small-tables.js';
import { PgWriter } from './writer.js';

export { PG_MIGRATIONS, migratePostgres, type PgMigration } from './schema.js';
export { redactUrl, PostgresUnavailableError } from './connection.js';
export type { PgBatchesStore, BatchTransaction } from './batches.js';

export interface OpenPostgresStoreOptions extends WriterOptions {
  /** `postgres://user:password@host:port/database` (the password is never logged or shown). */
  url: string;
  /** This node's id: stamped on the sessions and call intents it creates. Omitted: NULL (a single node). */
  nodeId?: string;
  /** Pooled connections. Default 10. */
  poolSize?: number;
}

export interface PostgresStore extends Store {
  readonly kind: 'postgres';
  readonly nodeId: string | null;
  readonly batches: PgBatchesStore;
  /** The node's pool, for the cluster's own tables (nodes, LISTEN/NOTIFY, the job queue). */
  readonly pool: pg.Pool;
}

/** Connects, applies pending migrations (one node at a time), and returns the store. */
export async function openPostgresStore(opts: OpenPostgresStoreOptions): Promise<PostgresStore> {
  const conn = connect(opts);
  try {
    await migratePostgres(conn);
  } catch (e) {
    await conn.close().catch(() => undefined);
    throw e;
  }
  const nodeId = opts.nodeId ?? null;
  const completions = new PgCompletions(conn);
  const writer = new PgWriter(conn, completions, nodeId, opts);
  completions.pending = writer;
  let closing: Promise<void> | null = null;
  return {
    kind: 'postgres',
    location: conn.location,
    nodeId,
    pool: conn.pool,
    sessions: pgSessions(conn, () => writer.flush()),
    completions,
    batches: pgBatches(conn),
    runs: pgRuns(conn),
    engines: pgEngines(conn),
    settings: pgSettings(conn),
    slices: pgSlices(conn),
    rescores: pgRescores(conn),
    writer,
    close() {
      closing ??= (async () => {
        try {
          await writer.close();
        } finally {
          await conn.close();
        }
      })();
      return closing;
    },
  };
}
