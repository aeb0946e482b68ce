// Sessions on Postgres: the same reads as ../sessions.ts (shared codecs: hashKey, rowToSession, rowToSummary,
// SUMMARY_COLUMNS, patchParams), read-modify-write with SELECT … FOR UPDATE, and crash recovery scoped to a node.
import { timingSafeEqual } from 'node:crypto';
import type { SessionRecord } from '../../core/types.js';
import { rowToSession, type SessionRow } from '../rows.js';
import { hashKey, patchParams, rowToSummary, SUMMARY_COLUMNS, type SessionListFilter, type SessionPatch, type SummaryRow } from '../sessions.js';
import type { Modification, Modified, SessionsStore } from '../types.js';
import type { Connection, Queryable } from './connection.js';
import { updateStatement } from './sql.js';

/** Runs one session patch (encoded by the shared patchParams); returns rows changed. */
export async function updateSessionRow(db: Queryable, id: string, patch: SessionPatch): Promise<number> {
  const stmt = updateStatement('sessions', 'id', id, patchParams(id, patch));
  if (!stmt) return (await db.query('SELECT 1 FROM sessions WHERE id = $1', [id])).rowCount ?? 0;
  return (await db.query(stmt.text, stmt.values)).rowCount ?? 0;
}

export function pgSessions(conn: Connection, flushWrites: () => Promise<void>): SessionsStore {
  const get = async (db: Queryable, id: string, lock = false): Promise<SessionRecord | null> => {
    const r = await db.query<SessionRow>(`SELECT * FROM sessions WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [id]);
    return r.rows[0] ? rowToSession(r.rows[0]) : null;
  };
  const where = '($1::text IS NULL OR s.batch_id = $1) AND ($2::text IS NULL OR s.status = $2)';
  return {
    get: (id) => get(conn, id),
    async getSummary(id) {
      const r = await conn.query<SummaryRow>(`SELECT ${SUMMARY_COLUMNS} FROM sessions s WHERE s.id = $1`, [id]);
      return r.rows[0] ? rowToSummary(r.rows[0]) : null;
    },
    async getByKey(key) {
      if (typeof key !== 'string' || key.length === 0) return null;
      const digest = hashKey(key);
      const row = (await conn.query<SessionRow>('SELECT * FROM sessions WHERE key_hash = $1', [digest])).rows[0];
      if (!row || row.key_hash.length !== digest.length || !timingSafeEqual(row.key_hash, digest)) return null;
      return rowToSession(row);
    },
    async list(filter: SessionListFilter = {}) {
      const r = await conn.query<SummaryRow>(
        `SELECT ${SUMMARY_COLUMNS} FROM sessions s WHERE ${where} ORDER BY s.created_at DESC, s.id DESC LIMIT $3 OFFSET $4`,
        [filter.batchId ?? null, filter.status ?? null, filter.limit ?? null, filter.offset ?? 0],
      );
      return r.rows.map(rowToSummary);
    },
    async count(filter = {}) {
      const r = await conn.query<{ n: number }>(`SELECT COUNT(*) AS n FROM sessions s WHERE ${where}`, [filter.batchId ?? null, filter.status ?? null]);
      return r.rows[0]!.n;
    },
    async modify<R>(id: string, fn: (current: SessionRecord) => Modification<SessionPatch, R>): Promise<Modified<SessionRecord, R>> {
      await flushWrites();
      return conn.transaction(async (db) => {
        const current = await get(db, id, true);
        if (!current) return null;
        const m = fn(current);
        if ('refuse' in m) return { refused: m.refuse };
        await updateSessionRow(db, id, m.patch);
        return { record: (await get(db, id))! };
      });
    },
    async markBatchSessionsInterrupted(opts = {}) {
      const r = await conn.query(
        `UPDATE sessions SET status = 'interrupted', finished_at = COALESCE(finished_at, $1)
         WHERE status = 'active' AND batch_id IS NOT NULL AND ($2::text IS NULL OR node_id = $2)`,
        [opts.now ?? Date.now(), opts.nodeId ?? null],
      );
      return r.rowCount ?? 0;
    },
  };
}
