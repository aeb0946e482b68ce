// Batches, session runs and batch slices on Postgres, with the shared row codecs of ../batches.ts. A batch can be
// created together with its queued tasks in one transaction (createBatch: the cluster's job queue sends its
// jobs through the executor it is given).
import { BATCH_PATCH, batchParams, patchParams, rowToBatch, rowToRun, RUN_PATCH, runParams, type BatchPatch, type BatchRecord, type BatchRow, type RunRow, type SessionRunPatch, type SessionRunRecord } from '../batches.js';
import { ANSWER_CHARS } from '../batch-slices.js';
import { rowToSummary, SUMMARY_COLUMNS, type SummaryRow } from '../sessions.js';
import type { BatchSlicesStore, BatchesStore, Modification, Modified, RunsStore } from '../types.js';
import type { Connection, Queryable } from './connection.js';
import { insertStatements, updateStatement } from './sql.js';

/**
 * SQL inside the transaction that creates a batch: `query` as node-postgres has it (the cluster's queue takes
 * that), `executeSql` as pg-boss's `db` option wants it (`send(name, data, { db })`).
 */
export interface BatchTransaction {
  query(text: string, values?: unknown[]): Promise<{ rows: any[]; rowCount: number | null }>;
  executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

const BATCH_COLUMNS = ['id', 'status', 'spec', 'task_ids', 'error', 'callback_url', 'callback', 'created_at', 'started_at', 'finished_at'];
const RUN_COLUMNS = ['session_id', 'batch_id', 'status', 'pid', 'run_token', 'work_dir', 'outcome', 'exit_code', 'signal', 'duration_ms',
  'stdout', 'stderr', 'final_answer', 'evaluator', 'error', 'started_at', 'finished_at'];

async function insertOne(db: Queryable, table: string, columns: string[], params: Record<string, unknown>, suffix = ''): Promise<void> {
  const [s] = insertStatements(table, columns, [params], suffix);
  await db.query(s!.text, s!.values);
}

async function getBatch(db: Queryable, id: string, lock = false): Promise<BatchRecord | null> {
  const row = (await db.query<BatchRow>(`SELECT * FROM batches WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [id])).rows[0];
  return row ? rowToBatch(row) : null;
}

async function updateBatch(db: Queryable, id: string, patch: BatchPatch): Promise<BatchRecord | null> {
  const stmt = updateStatement('batches', 'id', id, patchParams(id, patch, BATCH_PATCH));
  if (stmt && ((await db.query(stmt.text, stmt.values)).rowCount ?? 0) === 0) return null;
  return getBatch(db, id);
}

export interface PgBatchesStore extends BatchesStore {
  /** Creates the batch and runs `enqueue` in the same transaction: both commit, or neither. */
  createBatch(rec: BatchRecord, enqueue: (tx: BatchTransaction) => Promise<void>): Promise<BatchRecord>;
}

export function pgBatches(conn: Connection): PgBatchesStore {
  return {
    async create(rec) {
      await insertOne(conn, 'batches', BATCH_COLUMNS, batchParams(rec));
      return rec;
    },
    createBatch(rec, enqueue) {
      return conn.transaction(async (db) => {
        await insertOne(db, 'batches', BATCH_COLUMNS, batchParams(rec));
        await enqueue({ query: (text, values) => db.query(text, values), executeSql: async (text, values) => ({ rows: (await db.query(text, values)).rows }) });
        return rec;
      });
    },
    get: (id) => getBatch(conn, id),
    async list(opts = {}) {
      const r = await conn.query<BatchRow>('SELECT * FROM batches ORDER BY created_at DESC, id DESC LIMIT $1 OFFSET $2', [opts.limit ?? null, opts.offset ?? 0]);
      return r.rows.map(rowToBatch);
    },
    update: (id, patch) => updateBatch(conn, id, patch),
    modify<R>(id: string, fn: (current: BatchRecord) => Modification<BatchPatch, R>): Promise<Modified<BatchRecord, R>> {
      return conn.transaction(async (db) => {
        const current = await getBatch(db, id, true);
        if (!current) return null;
        const m = fn(current);
        if ('refuse' in m) return { refused: m.refuse };
        return { record: (await updateBatch(db, id, m.patch))! };
      });
    },
    async markUnfinishedInterrupted(now = Date.now()) {
      const r = await conn.query(`UPDATE batches SET status = 'interrupted', finished_at = COALESCE(finished_at, $1),
        error = COALESCE(error, 'Rollgate stopped while the batch was running') WHERE status IN ('queued', 'running')`, [now]);
      return r.rowCount ?? 0;
    },
  };
}

export function pgRuns(conn: Connection): RunsStore {
  const get = async (sessionId: string) => {
    const row = (await conn.query<RunRow>('SELECT * FROM session_runs WHERE session_id = $1', [sessionId])).rows[0];
    return row ? rowToRun(row) : null;
  };
  const replace = `ON CONFLICT (session_id) DO UPDATE SET ${RUN_COLUMNS.slice(1).map((c) => `${c} = EXCLUDED.${c}`).join(', ')}`;
  return {
    async create(rec: SessionRunRecord) {
      await insertOne(conn, 'session_runs', RUN_COLUMNS, runParams(rec), replace);
      return rec;
    },
    get,
    async listByBatch(batchId) {
      return (await conn.query<RunRow>('SELECT * FROM session_runs WHERE batch_id = $1 ORDER BY started_at', [batchId])).rows.map(rowToRun);
    },
    async listRunning() {
      return (await conn.query<RunRow>(`SELECT * FROM session_runs WHERE status = 'running'`)).rows.map(rowToRun);
    },
    async update(sessionId: string, patch: SessionRunPatch) {
      const stmt = updateStatement('session_runs', 'session_id', sessionId, patchParams(sessionId, patch, RUN_PATCH));
      if (stmt && ((await conn.query(stmt.text, stmt.values)).rowCount ?? 0) === 0) return null;
      return get(sessionId);
    },
    async markUnfinishedInterrupted(opts = {}) {
      const r = await conn.query(`UPDATE session_runs SET status = 'interrupted', finished_at = COALESCE(finished_at, $1),
        error = COALESCE(error, 'Rollgate stopped while the agent was running')
        WHERE status = 'running' AND ($2::text IS NULL OR session_id IN (SELECT id FROM sessions WHERE node_id = $2))`,
      [opts.now ?? Date.now(), opts.nodeId ?? null]);
      return r.rowCount ?? 0;
    },
  };
}

export function pgSlices(conn: Connection): BatchSlicesStore {
  return {
    async sessionsOfTasks(batchId, taskIds) {
      const r = await conn.query<SummaryRow>(`SELECT ${SUMMARY_COLUMNS} FROM sessions s
        WHERE s.batch_id = $1 AND s.task_id = ANY($2::text[]) ORDER BY s.created_at`, [batchId, taskIds]);
      return r.rows.map(rowToSummary);
    },
    async runs(batchId, sessionIds) {
      // The same record as the SQLite slice: no stdout, stderr, pid or work folder; the answer cut short.
      const r = await conn.query<RunRow>(`SELECT session_id, batch_id, status, NULL AS pid, NULL AS run_token, NULL AS work_dir, outcome,
        exit_code, signal, duration_ms, NULL AS stdout, NULL AS stderr, substr(final_answer, 1, ${ANSWER_CHARS}) AS final_answer,
        evaluator, error, started_at, finished_at
        FROM session_runs WHERE batch_id = $1 AND ($2::text[] IS NULL OR session_id = ANY($2::text[]))`, [batchId, sessionIds ?? null]);
      return r.rows.map(rowToRun);
    },
  };
}
