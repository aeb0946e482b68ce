// Sessions repository: typed, prepared statements cached on construction.
import { createHash, timingSafeEqual } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { NewSession, SessionRecord, SessionStatus } from '../core/types.js';
import { rowToSession, type SessionRow } from './rows.js';

/** Fields a session update may change (id, key and createdAt are immutable). */
export type SessionPatch = Partial<
  Pick<SessionRecord, 'engineId' | 'harness' | 'taskId' | 'batchId' | 'metadata' | 'status' | 'reward' | 'finishedAt'>
>;

export interface SessionListFilter {
  limit?: number;
  offset?: number;
  batchId?: string;
  status?: SessionStatus;
}

/** A session with its completion aggregates (list rows, getSummary). */
export interface SessionSummary extends SessionRecord {
  completionCount: number;
  promptTokens: number;
  outputTokens: number;
  /** promptTokens + outputTokens over all the session's completions. */
  totalTokens: number;
  /** Custody (DESIGN §9): 'incomplete' when any of its calls was lost or captured malformed. */
  custody: 'complete' | 'incomplete';
  incompleteCount: number;
}

const PATCH_FIELDS: ReadonlyArray<[keyof SessionPatch, string]> = [
  ['engineId', 'engine_id'],
  ['harness', 'harness'],
  ['taskId', 'task_id'],
  ['batchId', 'batch_id'],
  ['metadata', 'metadata'],
  ['status', 'status'],
  ['reward', 'reward'],
  ['finishedAt', 'finished_at'],
];

export function hashKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/** Session columns plus completion count and token totals (also read by batch-slices.ts). */
export const SUMMARY_COLUMNS = `s.*,
  (SELECT COUNT(*) FROM completions c WHERE c.session_id = s.id) AS completion_count,
  (SELECT COALESCE(SUM(n_prompt), 0) FROM completions c WHERE c.session_id = s.id) AS prompt_tokens,
  (SELECT COALESCE(SUM(n_output), 0) FROM completions c WHERE c.session_id = s.id) AS output_tokens,
  (SELECT COUNT(*) FROM completions c WHERE c.session_id = s.id AND c.status = 'incomplete') AS incomplete_count`;

export type SummaryRow = SessionRow & { completion_count: number; prompt_tokens: number; output_tokens: number; incomplete_count: number };

export function rowToSummary(r: SummaryRow): SessionSummary {
  return {
    ...rowToSession(r),
    completionCount: r.completion_count,
    promptTokens: r.prompt_tokens,
    outputTokens: r.output_tokens,
    totalTokens: r.prompt_tokens + r.output_tokens,
    custody: r.incomplete_count > 0 ? 'incomplete' : 'complete',
    incompleteCount: r.incomplete_count,
  };
}

export class SessionsRepo {
  private readonly insertStmt: Database.Statement;
  private readonly getStmt: Database.Statement;
  private readonly getSummaryStmt: Database.Statement;
  private readonly byKeyStmt: Database.Statement;
  private readonly listStmt: Database.Statement;
  private readonly countStmt: Database.Statement;
  private readonly updateStmt: Database.Statement;
  private readonly interruptStmt: Database.Statement;

  constructor(private readonly db: Database.Database) {
    this.insertStmt = db.prepare(`INSERT INTO sessions
      (id, key_hash, engine_id, harness, task_id, batch_id, metadata, status, reward, created_at, finished_at)
      VALUES (@id, @key_hash, @engine_id, @harness, @task_id, @batch_id, @metadata, @status, @reward, @created_at, @finished_at)`);
    this.getStmt = db.prepare('SELECT * FROM sessions WHERE id = ?');
    this.getSummaryStmt = db.prepare(`SELECT ${SUMMARY_COLUMNS} FROM sessions s WHERE s.id = ?`);
    this.byKeyStmt = db.prepare('SELECT * FROM sessions WHERE key_hash = ?');
    const where = `(@batch_id IS NULL OR s.batch_id = @batch_id) AND (@status IS NULL OR s.status = @status)`;
    this.listStmt = db.prepare(
      `SELECT ${SUMMARY_COLUMNS} FROM sessions s WHERE ${where} ORDER BY s.created_at DESC, s.id DESC LIMIT @limit OFFSET @offset`,
    );
    this.countStmt = db.prepare(`SELECT COUNT(*) AS n FROM sessions s WHERE ${where}`);
    this.updateStmt = db.prepare(
      `UPDATE sessions SET ${PATCH_FIELDS.map(([, col]) => `${col} = CASE WHEN @has_${col} THEN @${col} ELSE ${col} END`).join(', ')}
       WHERE id = @id`,
    );
    this.interruptStmt = db.prepare(
      `UPDATE sessions SET status = 'interrupted', finished_at = COALESCE(finished_at, @now) WHERE status = 'active' AND batch_id IS NOT NULL`,
    );
  }

  /** Synchronous insert (outside the writer). Throws on a duplicate id or key. */
  create(rec: NewSession): NewSession {
    this.insertRaw(rec);
    return rec;
  }

  get(id: string): SessionRecord | null {
    const row = this.getStmt.get(id) as SessionRow | undefined;
    return row ? rowToSession(row) : null;
  }

  getSummary(id: string): SessionSummary | null {
    const row = this.getSummaryStmt.get(id) as SummaryRow | undefined;
    return row ? rowToSummary(row) : null;
  }

  /** Indexed lookup on sha256(key), confirmed by a constant-time comparison of the digests. */
  getByKey(key: string): SessionRecord | null {
    if (typeof key !== 'string' || key.length === 0) return null;
    const digest = hashKey(key);
    const row = this.byKeyStmt.get(digest) as SessionRow | undefined;
    if (!row || row.key_hash.length !== digest.length || !timingSafeEqual(row.key_hash, digest)) return null;
    return rowToSession(row);
  }

  /** Newest first, with completion count and token totals. */
  list(filter: SessionListFilter = {}): SessionSummary[] {
    const rows = this.listStmt.all({
      batch_id: filter.batchId ?? null,
      status: filter.status ?? null,
      limit: filter.limit ?? -1,
      offset: filter.offset ?? 0,
    }) as SummaryRow[];
    return rows.map(rowToSummary);
  }

  count(filter: Pick<SessionListFilter, 'batchId' | 'status'> = {}): number {
    return (this.countStmt.get({ batch_id: filter.batchId ?? null, status: filter.status ?? null }) as { n: number }).n;
  }

  /** Synchronous update (outside the writer). Returns the updated record, or null for an unknown id. */
  update(id: string, patch: SessionPatch): SessionRecord | null {
    if (this.updateRaw(id, patch) === 0) return null;
    return this.get(id);
  }

  /**
   * At startup: every `active` session of a batch becomes `interrupted` (its agent was a child of the process
   * that died). Manual and trainer sessions stay `active`: their agents run elsewhere and may carry on.
   * Returns how many changed.
   */
  markBatchSessionsInterrupted(now: number = Date.now()): number {
    return this.interruptStmt.run({ now }).changes;
  }

  // ---- used by the writer inside its transaction ----

  /** @internal */
  insertRaw(rec: NewSession): void {
    this.insertStmt.run(sessionParams(rec));
  }

  /** @internal Params pre-encoded with sessionParams. */
  insertEncoded(params: Record<string, unknown>): void {
    this.insertStmt.run(params);
  }

  /** @internal Params pre-encoded with patchParams; returns rows changed. */
  updateEncoded(params: Record<string, unknown>): number {
    return this.updateStmt.run(params).changes;
  }

  /** @internal Returns the number of rows changed (0 = unknown id). */
  updateRaw(id: string, patch: SessionPatch): number {
    return this.updateStmt.run(patchParams(id, patch)).changes;
  }
}

export function sessionParams(rec: NewSession): Record<string, unknown> {
  if (typeof rec.key !== 'string' || rec.key.length === 0) throw new TypeError(`session ${rec.id}: key is required`);
  return {
    id: rec.id,
    key_hash: hashKey(rec.key),
    engine_id: rec.engineId ?? null,
    harness: rec.harness ?? null,
    task_id: rec.taskId ?? null,
    batch_id: rec.batchId ?? null,
    metadata: JSON.stringify(rec.metadata ?? {}),
    status: rec.status,
    reward: rec.reward ?? null,
    created_at: rec.createdAt,
    finished_at: rec.finishedAt ?? null,
  };
}

export function patchParams(id: string, patch: SessionPatch): Record<string, unknown> {
  const p: Record<string, unknown> = { id };
  for (const [field, col] of PATCH_FIELDS) {
    const has = Object.prototype.hasOwnProperty.call(patch, field) && patch[field] !== undefined;
    p[`has_${col}`] = has ? 1 : 0;
    let v: unknown = has ? patch[field] : null;
    if (field === 'metadata' && has) v = JSON.stringify(v ?? {});
    p[col] = v ?? null;
  }
  return p;
}
