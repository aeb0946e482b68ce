// Completions on Postgres: the reads of ../completions.ts over the same delta-encoded rows (shared codecs:
// completionParams, rowToCompletion, DeltaBases), seq reservation, retry lookup that sees queued writes, a
// cursor-streamed export, and crash recovery of call intents scoped to a node.
import type { CompletionRecord } from '../../core/types.js';
import { decodeInOrder, lostInCrash, type CompletionIterateFilter, type IntentRow, type PendingView } from '../completions.js';
import { DeltaBases } from '../delta-bases.js';
import { completionParams, rowNeedsParent, rowToCompletion, type CompletionRow, type EncodedCompletion } from '../rows.js';
import type { CompletionsStore } from '../types.js';
import type { Connection, Queryable } from './connection.js';
import { COMPLETION_COLUMNS, fromPgCompletion, insertStatements, toPgCompletion } from './sql.js';

/** Rows an export cursor fetches per round trip. */
const CURSOR_ROWS = 256;

const missing = (childId: string, id: string) => new Error(`completion ${childId} is stored against ${id}, which is missing`);

/** One record and the chain of parents it is stored against, fetched in one query and decoded oldest first. */
async function getRecord(db: Queryable, id: string): Promise<CompletionRecord | null> {
  const rows = (await db.query(`WITH RECURSIVE chain AS (
      SELECT c.*, 0 AS depth FROM completions c WHERE c.id = $1
      UNION ALL SELECT p.*, chain.depth + 1 FROM completions p JOIN chain ON p.id = chain.parent_id
    ) SELECT * FROM chain ORDER BY depth`, [id])).rows.map(fromPgCompletion);
  if (rows.length === 0) return null;
  let rec: CompletionRecord | null = null;
  for (let i = rows.length - 1; i >= 0; i--) {
    const parent = rec;
    rec = rowToCompletion(rows[i]!, (pid) => {
      if (!parent) throw missing(rows[i]!.id, pid);
      return parent;
    });
  }
  return rec;
}

/**
 * The records of parents that rows need and that are not decoded before them: rows come parents first within a
 * session, so only a parent a filter left out (or one of an earlier chunk's session, not in `known`) is read here.
 */
async function outsideParents(db: Queryable, rows: CompletionRow[], known = new Set<string>(), session = rows[0]?.session_id): Promise<Map<string, CompletionRecord>> {
  const out = new Map<string, CompletionRecord>();
  for (const r of rows) {
    if (r.session_id !== session) {
      session = r.session_id;
      known = new Set();
    }
    if (rowNeedsParent(r) && !known.has(r.parent_id!) && !out.has(r.parent_id!)) {
      const p = await getRecord(db, r.parent_id!);
      if (!p) throw missing(r.id, r.parent_id!);
      out.set(p.id, p);
    }
    known.add(r.id);
  }
  return out;
}

/** A copy the caller cannot change any more (puts are encoded when their group is written). */
export function snapshot(rec: CompletionRecord): CompletionRecord {
  return { ...rec, promptIds: rec.promptIds.slice(), outputIds: rec.outputIds.slice(), outputLogprobs: rec.outputLogprobs.slice() };
}

export class PgCompletions implements CompletionsStore {
  /** Candidate parents for delta storage (../delta-bases.ts). */
  private readonly bases = new DeltaBases();
  private readonly reserved = new Map<string, number>();
  /** Set by openPostgresStore: the writer's queued and in-flight writes. */
  pending: PendingView | null = null;

  constructor(private readonly conn: Connection) {}

  get(id: string): Promise<CompletionRecord | null> {
    return getRecord(this.conn, id);
  }

  async listBySession(sessionId: string): Promise<CompletionRecord[]> {
    const rows = (await this.conn.query('SELECT * FROM completions WHERE session_id = $1 ORDER BY seq, created_at, id', [sessionId])).rows.map(fromPgCompletion);
    const outside = await outsideParents(this.conn, rows);
    return decodeInOrder(rows, (id) => outside.get(id) ?? null);
  }

  async countBySession(sessionId: string): Promise<number> {
    return (await this.conn.query<{ n: number }>('SELECT COUNT(*) AS n FROM completions WHERE session_id = $1', [sessionId])).rows[0]!.n;
  }

  async incompleteCalls(sessionId: string) {
    const r = await this.conn.query<{ completionId: string; reason: string | null; error: string | null }>(
      `SELECT id AS "completionId", incomplete_reason AS reason, error FROM completions
       WHERE session_id = $1 AND status = 'incomplete' ORDER BY seq, created_at, id`, [sessionId]);
    return r.rows;
  }

  /**
   * Monotonic per session within this process: a session is written only by the node that owns it, so the
   * committed MAX(seq), the writer's queue and this process's reservations are everything there is.
   */
  async reserveSeq(sessionId: string): Promise<number> {
    let seq = this.reserved.get(sessionId);
    if (seq === undefined) {
      const m = (await this.conn.query<{ m: number | null }>('SELECT MAX(seq) AS m FROM completions WHERE session_id = $1', [sessionId])).rows[0]!.m;
      let max = m ?? -1;
      const p = this.pending?.maxPendingSeq(sessionId);
      if (p !== undefined && p > max) max = p;
      // Another reservation for the session may have finished while this one waited for the query.
      const r = this.reserved.get(sessionId);
      if (r !== undefined && r - 1 > max) max = r - 1;
      seq = max + 1;
      if (this.reserved.size >= 100_000) this.reserved.clear();
    }
    this.reserved.set(sessionId, seq + 1);
    return seq;
  }

  async findByBodyHash(sessionId: string, hash: string): Promise<CompletionRecord | null> {
    const p = this.pending?.findPendingByBodyHash(sessionId, hash);
    if (p) return p;
    const row = (await this.conn.query('SELECT id FROM completions WHERE session_id = $1 AND body_hash = $2 ORDER BY seq DESC, created_at DESC LIMIT 1', [sessionId, hash])).rows[0] as { id: string } | undefined;
    // A write that committed while the query ran was queued a moment ago: look there again.
    return row ? getRecord(this.conn, row.id) : (this.pending?.findPendingByBodyHash(sessionId, hash) ?? null);
  }

  /**
   * Streams completions ordered by session, then seq, through a server-side cursor on its own connection, in
   * one read-only snapshot (writers carry on). Break out of the loop to release the connection early.
   */
  async *iterateAll(filter: CompletionIterateFilter = {}): AsyncGenerator<CompletionRecord, void, undefined> {
    const values: unknown[] = [];
    const where: string[] = [];
    const param = (v: unknown) => { values.push(v); return `$${values.length}`; };
    if (filter.batchId !== undefined) where.push(`s.batch_id = ${param(filter.batchId)}`);
    if (filter.engineId !== undefined) where.push(`c.engine_id = ${param(filter.engineId)}`);
    if (filter.sessionId !== undefined) where.push(`c.session_id = ${param(filter.sessionId)}`);
    const text = `SELECT c.* FROM completions c ${filter.batchId !== undefined ? 'JOIN sessions s ON s.id = c.session_id' : ''}
      ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY c.session_id, c.seq, c.created_at, c.id`;
    const client = await this.conn.pool.connect().catch((e: unknown) => { throw this.conn.unavailable(e); });
    let open = false;
    let broken = false;
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      open = true;
      await client.query(`DECLARE export_cursor NO SCROLL CURSOR FOR ${text}`, values);
      let session = '';
      let seen = new Map<string, CompletionRecord>();
      for (;;) {
        const rows = (await client.query(`FETCH ${CURSOR_ROWS} FROM export_cursor`)).rows.map(fromPgCompletion);
        if (rows.length === 0) break;
        const outside = await outsideParents(client, rows, new Set(seen.keys()), session);
        for (const row of rows) {
          if (row.session_id !== session) {
            session = row.session_id;
            seen = new Map();
          }
          const rec = rowToCompletion(row, (id) => {
            const p = seen.get(id) ?? outside.get(id);
            if (!p) throw missing(row.id, id);
            return p;
          });
          seen.set(rec.id, rec);
          yield rec;
        }
      }
      await client.query('COMMIT');
      open = false;
    } catch (e) {
      broken = true;
      throw this.conn.unavailable(e);
    } finally {
      // Broken out of early: end the snapshot before the connection goes back to the pool.
      if (open) await client.query('ROLLBACK').catch(() => { broken = true; });
      client.release(broken);
    }
  }

  async recoverDanglingIntents(opts: { now?: number; nodeId?: string } = {}): Promise<Array<{ id: string; sessionId: string }>> {
    const now = opts.now ?? Date.now();
    return this.conn.transaction(async (db) => {
      // Deleting claims them: a second node recovering the same dead node waits, then finds nothing left.
      const rows = (await db.query<IntentRow>(
        'DELETE FROM call_intents WHERE ($1::text IS NULL OR node_id = $1) RETURNING id, session_id, seq, dialect, engine_id, replica, created_at',
        [opts.nodeId ?? null],
      )).rows.sort((a, b) => a.created_at - b.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      const lost = rows.map((r) => toPgCompletion(completionParams(lostInCrash(r, now), null)));
      for (const s of insertStatements('completions', COMPLETION_COLUMNS, lost, 'ON CONFLICT (id) DO NOTHING')) await db.query(s.text, s.values);
      return rows.map((r) => ({ id: r.id, sessionId: r.session_id }));
    });
  }

  /** Lets go of the session's candidate parents. Its seq reservation stays: a call still in flight holds one. */
  forgetSession(sessionId: string): void {
    this.bases.forget(sessionId);
  }

  // ---- used by the writer ----

  /**
   * @internal Encodes a group's records in queue order (each against its session's best parent), first reading
   * back, in one query, the latest completions of sessions this process has not written yet.
   */
  async encodeAll(db: Queryable, recs: Array<{ rec: CompletionRecord; bodyHash: string | null }>): Promise<Array<EncodedCompletion | Error>> {
    const unknown = [...new Set(recs.map((r) => r.rec.sessionId).filter((sid) => !this.bases.has(sid)))];
    if (unknown.length) await this.seedBases(db, unknown);
    return recs.map(({ rec, bodyHash }) => {
      try {
        return this.bases.encode(rec, bodyHash);
      } catch (e) {
        return e instanceof Error ? e : new Error(String(e));
      }
    });
  }

  private async seedBases(db: Queryable, sessionIds: string[]): Promise<void> {
    const ids = (await db.query<{ id: string; session_id: string }>(`SELECT id, session_id FROM (
        SELECT id, session_id, row_number() OVER (PARTITION BY session_id ORDER BY seq DESC, created_at DESC) AS n
        FROM completions WHERE session_id = ANY($1) AND n_prompt > 0) recent WHERE n <= 3`, [sessionIds])).rows;
    for (const sid of sessionIds) {
      const recs: CompletionRecord[] = [];
      for (const r of ids) if (r.session_id === sid) { const rec = await getRecord(db, r.id); if (rec) recs.push(rec); }
      this.bases.seed(sid, recs);
    }
  }
}
