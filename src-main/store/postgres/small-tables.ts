// The small, rarely written tables on Postgres: engines set through the API, named settings, re-scoring
// results (a run and its traces in one transaction). Row codecs shared with SQLite (../rescores.ts).
import type { StoredEngine } from '../engine-configs.js';
import { rescoreParams, toRecord, toTrace, traceParams, type RescoreRow, type TraceRow } from '../rescores.js';
import type { EnginesStore, RescoresStore, SettingsStore } from '../types.js';
import type { Connection } from './connection.js';
import { insertStatements } from './sql.js';

export function pgEngines(conn: Connection): EnginesStore<{ id: string }> {
  return {
    async list() {
      const r = await conn.query<{ id: string; config: string; updated_at: number }>('SELECT id, config, updated_at FROM engines ORDER BY updated_at, id');
      return r.rows.map((row): StoredEngine<{ id: string }> => ({ id: row.id, config: JSON.parse(row.config) as { id: string }, updatedAt: row.updated_at }));
    },
    async upsert(config, now = Date.now()) {
      await conn.query(`INSERT INTO engines (id, config, updated_at) VALUES ($1, $2, $3)
        ON CONFLICT (id) DO UPDATE SET config = EXCLUDED.config, updated_at = EXCLUDED.updated_at`, [config.id, JSON.stringify(config), now]);
    },
    async delete(id) {
      return ((await conn.query('DELETE FROM engines WHERE id = $1', [id])).rowCount ?? 0) > 0;
    },
  };
}

export function pgSettings(conn: Connection): SettingsStore {
  return {
    async get<T>(key: string) {
      const row = (await conn.query<{ value: string }>('SELECT value FROM settings WHERE key = $1', [key])).rows[0];
      return row ? (JSON.parse(row.value) as T) : undefined;
    },
    async set(key, value) {
      await conn.query(`INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, $3)
        ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at`, [key, JSON.stringify(value), Date.now()]);
    },
  };
}

const RESCORE_COLUMNS = ['id', 'created_at', 'engine', 'engine_kind', 'source_engine', 'builder', 'batch_id', 'session_id', 'sessions', 'traces', 'overall', 'errors'];
const TRACE_COLUMNS = ['rescore_id', 'ord', 'trace_id', 'session_id', 'source_engine', 'replica', 'completion_ids', 'positions', 'token_ids',
  'sampled', 'rescored', 'dropped', 'summary', 'error'];

export function pgRescores(conn: Connection): RescoresStore {
  return {
    async put(run, traces) {
      await conn.transaction(async (db) => {
        for (const s of insertStatements('rescores', RESCORE_COLUMNS, [rescoreParams(run)])) await db.query(s.text, s.values);
        const rows = traces.map((t, ord) => traceParams(run.id, t, ord));
        for (const s of insertStatements('rescore_traces', TRACE_COLUMNS, rows)) await db.query(s.text, s.values);
      });
    },
    async get(id) {
      const row = (await conn.query<RescoreRow>('SELECT * FROM rescores WHERE id = $1', [id])).rows[0];
      return row ? toRecord(row) : null;
    },
    async list(f = {}) {
      // A session's results include the batch runs that scored it.
      const r = await conn.query<RescoreRow>(`SELECT * FROM rescores WHERE ($1::text IS NULL OR batch_id = $1)
        AND ($2::text IS NULL OR session_id = $2 OR id IN (SELECT rescore_id FROM rescore_traces WHERE session_id = $2))
        ORDER BY created_at DESC, id DESC LIMIT $3`, [f.batchId ?? null, f.sessionId ?? null, f.limit ?? 100]);
      return r.rows.map(toRecord);
    },
    async traces(id) {
      return (await conn.query<TraceRow>('SELECT * FROM rescore_traces WHERE rescore_id = $1 ORDER BY ord', [id])).rows.map(toTrace);
    },
    async trace(id, traceId) {
      const row = (await conn.query<TraceRow>('SELECT * FROM rescore_traces WHERE rescore_id = $1 AND trace_id = $2', [id, traceId])).rows[0];
      return row ? toTrace(row) : null;
    },
    async tracesOfSession(id, sessionId) {
      return (await conn.query<TraceRow>('SELECT * FROM rescore_traces WHERE rescore_id = $1 AND session_id = $2 ORDER BY ord', [id, sessionId])).rows.map(toTrace);
    },
  };
}
