// Completions repository: typed reads with cached prepared statements. Writes go through the writer.
import Database from 'better-sqlite3';
import type { CompletionRecord } from '../core/types.js';
import { completionParams, rowToCompletion, type CompletionRow } from './rows.js';

export interface CompletionIterateFilter {
  batchId?: string;
  engineId?: string;
  sessionId?: string;
}

/** What the writer has queued but not yet committed (so seq allocation and retry detection see it). */
export interface PendingView {
  maxPendingSeq(sessionId: string): number | undefined;
  findPendingByBodyHash(sessionId: string, hash: string): CompletionRecord | undefined;
}

export class CompletionsRepo {
  private readonly insertStmt: Database.Statement;
  private readonly getStmt: Database.Statement;
  private readonly bySessionStmt: Database.Statement;
  private readonly countStmt: Database.Statement;
  private readonly maxSeqStmt: Database.Statement;
  private readonly byHashStmt: Database.Statement;
  private readonly reserved = new Map<string, number>();
  /** @internal set by openStore */
  pending: PendingView | null = null;

  constructor(
    private readonly db: Database.Database,
    private readonly openReader: () => Database.Database,
  ) {
    this.insertStmt = db.prepare(`INSERT OR REPLACE INTO completions
      (id, session_id, seq, dialect, engine_id, replica, policy_version, request_received, request_served, response,
       finish_reason, usage, queue_ms, ttft_ms, total_ms, status, error, retry_of, created_at, body_hash,
       n_prompt, n_output, prompt_ids, output_ids, output_logprobs)
      VALUES (@id, @session_id, @seq, @dialect, @engine_id, @replica, @policy_version, @request_received, @request_served,
       @response, @finish_reason, @usage, @queue_ms, @ttft_ms, @total_ms, @status, @error, @retry_of, @created_at,
       @body_hash, @n_prompt, @n_output, @prompt_ids, @output_ids, @output_logprobs)`);
    this.getStmt = db.prepare('SELECT * FROM completions WHERE id = ?');
    this.bySessionStmt = db.prepare('SELECT * FROM completions WHERE session_id = ? ORDER BY seq, created_at, id');
    this.countStmt = db.prepare('SELECT COUNT(*) AS n FROM completions WHERE session_id = ?');
    this.maxSeqStmt = db.prepare('SELECT MAX(seq) AS m FROM completions WHERE session_id = ?');
    this.byHashStmt = db.prepare(
      'SELECT * FROM completions WHERE session_id = ? AND body_hash = ? ORDER BY seq DESC, created_at DESC LIMIT 1',
    );
  }

  get(id: string): CompletionRecord | null {
    const row = this.getStmt.get(id) as CompletionRow | undefined;
    return row ? rowToCompletion(row) : null;
  }

  /** Committed completions of a session, ordered by seq. */
  listBySession(sessionId: string): CompletionRecord[] {
    return (this.bySessionStmt.all(sessionId) as CompletionRow[]).map(rowToCompletion);
  }

  countBySession(sessionId: string): number {
    return (this.countStmt.get(sessionId) as { n: number }).n;
  }

  /**
   * 1 + the highest seq committed, queued in the writer, or reserved for this session (0 for a new session).
   * Does not allocate: two concurrent requests can see the same value; use reserveSeq for allocation.
   */
  nextSeq(sessionId: string): number {
    const m = (this.maxSeqStmt.get(sessionId) as { m: number | null }).m;
    let max = m ?? -1;
    const p = this.pending?.maxPendingSeq(sessionId);
    if (p !== undefined && p > max) max = p;
    const r = this.reserved.get(sessionId);
    if (r !== undefined && r - 1 > max) max = r - 1;
    return max + 1;
  }

  /**
   * Allocates a seq (monotonic per session within this process, never handed out twice). Every record
   * this process writes got its seq here, so once a session has a reservation no query is needed.
   */
  reserveSeq(sessionId: string): number {
    const known = this.reserved.get(sessionId);
    const seq = known ?? this.nextSeq(sessionId);
    // Bounded memory: forgetting reservations only sends sessions back to the query above.
    if (known === undefined && this.reserved.size >= 100_000) this.reserved.clear();
    this.reserved.set(sessionId, seq + 1);
    return seq;
  }

  /** Latest record of the session with this request-body hash (queued writes included), or null. */
  findByBodyHash(sessionId: string, hash: string): CompletionRecord | null {
    const p = this.pending?.findPendingByBodyHash(sessionId, hash);
    if (p) return p;
    const row = this.byHashStmt.get(sessionId, hash) as CompletionRow | undefined;
    return row ? rowToCompletion(row) : null;
  }

  /**
   * Streams completions (ordered by session, then seq) with constant memory. Runs on its own read-only
   * connection, so the writer can keep committing while an export is being read. Break out of the loop
   * (or call `return()`) to release the connection early.
   */
  *iterateAll(filter: CompletionIterateFilter = {}): Generator<CompletionRecord, void, undefined> {
    const reader = this.openReader();
    try {
      const stmt = reader.prepare(`SELECT c.* FROM completions c
        ${filter.batchId !== undefined ? 'JOIN sessions s ON s.id = c.session_id' : ''}
        WHERE 1 = 1
        ${filter.batchId !== undefined ? 'AND s.batch_id = @batch_id' : ''}
        ${filter.engineId !== undefined ? 'AND c.engine_id = @engine_id' : ''}
        ${filter.sessionId !== undefined ? 'AND c.session_id = @session_id' : ''}
        ORDER BY c.session_id, c.seq, c.created_at, c.id`);
      const params: Record<string, unknown> = {};
      if (filter.batchId !== undefined) params.batch_id = filter.batchId;
      if (filter.engineId !== undefined) params.engine_id = filter.engineId;
      if (filter.sessionId !== undefined) params.session_id = filter.sessionId;
      for (const row of stmt.iterate(params) as IterableIterator<CompletionRow>) yield rowToCompletion(row);
    } finally {
      reader.close();
    }
  }

  // ---- used by the writer inside its transaction ----

  /** @internal Params are pre-encoded with completionParams at enqueue time. */
  insertEncoded(params: Record<string, unknown>): void {
    this.insertStmt.run(params);
  }

  /** @internal */
  static encode(rec: CompletionRecord, bodyHash: string | null): Record<string, unknown> {
    return completionParams(rec, bodyHash);
  }
}
