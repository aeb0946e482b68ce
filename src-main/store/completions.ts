// Completions repository: typed reads with cached prepared statements. Writes go through the writer.
import Database from 'better-sqlite3';
import type { CompletionRecord } from '../core/types.js';
import { DeltaBases } from './delta-bases.js';
import { completionParams, rowNeedsParent, rowToCompletion, type CompletionRow, type EncodedCompletion } from './rows.js';

/** Recorded before an engine call (custody): the id and seq its completion will have. */
export interface CallIntent {
  id: string;
  sessionId: string;
  seq: number;
  dialect: CompletionRecord['dialect'];
  engineId: string;
  replica?: string;
  createdAt: number;
}

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

/** A write waiting in a writer's queue (either store's), as PendingView reads it. */
export interface QueuedWrite {
  op: { kind: string; rec?: CompletionRecord; bodyHash?: string | null };
}

/** PendingView over a writer's queue, oldest first (both writers). */
export function maxQueuedSeq(queue: readonly QueuedWrite[], sessionId: string): number | undefined {
  let max: number | undefined;
  for (const { op } of queue) {
    if (op.kind === 'completion' && op.rec!.sessionId === sessionId && (max === undefined || op.rec!.seq > max)) max = op.rec!.seq;
  }
  return max;
}

/** The newest queued record of the session with this request-body hash (both writers). */
export function findQueuedByBodyHash(queue: readonly QueuedWrite[], sessionId: string, hash: string): CompletionRecord | undefined {
  for (let i = queue.length - 1; i >= 0; i--) {
    const op = queue[i]!.op;
    if (op.kind === 'completion' && op.bodyHash === hash && op.rec!.sessionId === sessionId) return op.rec;
  }
  return undefined;
}

/** A row of call_intents (both stores). */
export interface IntentRow {
  id: string; session_id: string; seq: number; dialect: string; engine_id: string; replica: string; created_at: number;
}

/** What a call intent left over after a crash is recorded as: an `incomplete` completion without ids. */
export function lostInCrash(r: IntentRow, now: number): CompletionRecord {
  return {
    id: r.id, sessionId: r.session_id, seq: r.seq, dialect: r.dialect as CompletionRecord['dialect'], engineId: r.engine_id,
    replica: r.replica, policyVersion: 0, requestReceived: null, requestServed: null, response: null, finishReason: null,
    usage: null, timings: { queueMs: 0, ttftMs: null, totalMs: Math.max(0, now - r.created_at) }, status: 'incomplete',
    incompleteReason: 'lost-in-crash', error: 'lost-in-crash: the process ended between the engine call and its commit',
    retryOf: null, createdAt: r.created_at, promptIds: new Int32Array(0), outputIds: new Int32Array(0), outputLogprobs: new Float32Array(0),
  };
}

export class CompletionsRepo {
  private readonly insertStmt: Database.Statement;
  private readonly getStmt: Database.Statement;
  private readonly bySessionStmt: Database.Statement;
  private readonly countStmt: Database.Statement;
  private readonly maxSeqStmt: Database.Statement;
  private readonly byHashStmt: Database.Statement;
  private readonly existsStmt: Database.Statement;
  private readonly insertIntentStmt: Database.Statement;
  private readonly deleteIntentStmt: Database.Statement;
  private readonly recentWithIdsStmt: Database.Statement;
  /** Candidate parents for delta storage (delta-bases.ts). */
  private readonly bases = new DeltaBases();
  private readonly reserved = new Map<string, number>();
  /** @internal set by openStore */
  pending: PendingView | null = null;

  constructor(
    private readonly db: Database.Database,
    private readonly openReader: () => Database.Database,
  ) {
    this.insertStmt = db.prepare(`INSERT INTO completions
      (id, session_id, seq, dialect, engine_id, replica, policy_version, request_received, request_served, response,
       finish_reason, usage, queue_ms, ttft_ms, total_ms, status, error, retry_of, created_at, body_hash,
       n_prompt, n_output, incomplete_reason, parent_id, prompt_base, prompt_ids, output_ids, output_logprobs)
      VALUES (@id, @session_id, @seq, @dialect, @engine_id, @replica, @policy_version, @request_received, @request_served,
       @response, @finish_reason, @usage, @queue_ms, @ttft_ms, @total_ms, @status, @error, @retry_of, @created_at,
       @body_hash, @n_prompt, @n_output, @incomplete_reason, @parent_id, @prompt_base, @prompt_ids, @output_ids, @output_logprobs)`);
    this.insertIntentStmt = db.prepare(`INSERT OR REPLACE INTO call_intents (id, session_id, seq, dialect, engine_id, replica, created_at)
      VALUES (@id, @session_id, @seq, @dialect, @engine_id, @replica, @created_at)`);
    this.deleteIntentStmt = db.prepare('DELETE FROM call_intents WHERE id = ?');
    this.getStmt = db.prepare('SELECT * FROM completions WHERE id = ?');
    this.bySessionStmt = db.prepare('SELECT * FROM completions WHERE session_id = ? ORDER BY seq, created_at, id');
    this.countStmt = db.prepare('SELECT COUNT(*) AS n FROM completions WHERE session_id = ?');
    this.maxSeqStmt = db.prepare('SELECT MAX(seq) AS m FROM completions WHERE session_id = ?');
    this.byHashStmt = db.prepare(
      'SELECT * FROM completions WHERE session_id = ? AND body_hash = ? ORDER BY seq DESC, created_at DESC LIMIT 1',
    );
    this.existsStmt = db.prepare('SELECT 1 FROM completions WHERE id = ?').pluck();
    this.recentWithIdsStmt = db.prepare(
      'SELECT id FROM completions WHERE session_id = ? AND n_prompt > 0 ORDER BY seq DESC, created_at DESC LIMIT 3',
    ).pluck();
  }

  get(id: string): CompletionRecord | null {
    return decodeChain(this.getStmt, id);
  }

  /** Committed completions of a session, ordered by seq. */
  listBySession(sessionId: string): CompletionRecord[] {
    return decodeInOrder(this.bySessionStmt.all(sessionId) as CompletionRow[], (id) => decodeChain(this.getStmt, id));
  }

  /** Custody: the session's incomplete calls, oldest first. */
  incompleteCalls(sessionId: string): Array<{ completionId: string; reason: string | null; error: string | null }> {
    return this.db.prepare(`SELECT id AS completionId, incomplete_reason AS reason, error FROM completions
      WHERE session_id = ? AND status = 'incomplete' ORDER BY seq, created_at, id`).all(sessionId) as Array<{ completionId: string; reason: string | null; error: string | null }>;
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
    return row ? rowToCompletion(row, (id) => mustGet(this.getStmt, id, row.id)) : null;
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
      const byId = reader.prepare('SELECT * FROM completions WHERE id = ?');
      // Parents come before their children in this order (a parent's seq is lower), so one session's
      // decoded records are enough; anything else (a filter left the parent out) is read by id.
      let session = '';
      let seen = new Map<string, CompletionRecord>();
      for (const row of stmt.iterate(params) as IterableIterator<CompletionRow>) {
        if (row.session_id !== session) {
          session = row.session_id;
          seen = new Map();
        }
        const rec = rowToCompletion(row, (id) => seen.get(id) ?? mustGet(byId, id, row.id));
        seen.set(rec.id, rec);
        yield rec;
      }
    } finally {
      reader.close();
    }
  }

  // ---- used by the writer inside its transaction ----

  /**
   * @internal Encoded at enqueue time. A row stored against a parent that did not get committed (its
   * write failed) is written in full instead.
   */
  insertEncoded(enc: EncodedCompletion): void {
    const parent = enc.params.parent_id as string | null;
    this.insertStmt.run(parent !== null && !this.existsStmt.get(parent) ? enc.full() : enc.params);
    // The call's intent goes in the same transaction as its record (custody): never both, never neither.
    this.deleteIntentStmt.run(enc.params.id);
  }

  /** @internal */
  insertIntent(intent: CallIntent): void {
    this.insertIntentStmt.run({ id: intent.id, session_id: intent.sessionId, seq: intent.seq, dialect: intent.dialect,
      engine_id: intent.engineId, replica: intent.replica ?? '', created_at: intent.createdAt });
  }

  /** @internal A call that ended without reaching an engine (refused while paused): nothing to record. */
  deleteIntent(id: string): void {
    this.deleteIntentStmt.run(id);
  }

  /**
   * At start-up, before any call: every intent left over was lost between its engine call and its commit.
   * Each becomes an `incomplete` completion (reason 'lost-in-crash', no ids), which marks its session
   * incomplete and masks the traces that depend on it. Returns the calls recovered.
   */
  recoverDanglingIntents(now: number = Date.now()): Array<{ id: string; sessionId: string }> {
    const rows = this.db.prepare('SELECT * FROM call_intents ORDER BY created_at, id').all() as IntentRow[];
    const run = this.db.transaction(() => {
      for (const r of rows) {
        if (!this.existsStmt.get(r.id)) this.insertStmt.run(completionParams(lostInCrash(r, now), null));
        this.deleteIntentStmt.run(r.id);
      }
    });
    run.immediate();
    return rows.map((r) => ({ id: r.id, sessionId: r.session_id }));
  }

  /**
   * @internal Encodes a record for the writer (snapshotting its arrays): against the session's best parent
   * (delta-bases.ts), and remembers it as a candidate parent of the session's next completions.
   */
  encode(rec: CompletionRecord, bodyHash: string | null): EncodedCompletion {
    const snap: CompletionRecord = { ...rec, promptIds: rec.promptIds.slice(), outputIds: rec.outputIds.slice(), outputLogprobs: rec.outputLogprobs.slice() };
    if (!this.bases.has(rec.sessionId)) this.seedBases(rec.sessionId);
    return this.bases.encode(snap, bodyHash);
  }

  /** The session ended: its candidate parents leave memory (read back from the database if it goes on). */
  forgetSession(sessionId: string): void {
    this.bases.forget(sessionId);
  }

  /** A session this process has not written yet: its latest committed completions become candidates. */
  private seedBases(sessionId: string): void {
    const ids = this.recentWithIdsStmt.all(sessionId) as string[];
    const recs = ids.map((id) => this.get(id)).filter((r): r is CompletionRecord => r !== null);
    this.bases.seed(sessionId, recs);
  }
}

function mustGet(stmt: Database.Statement, id: string, childId: string): CompletionRecord {
  const rec = decodeChain(stmt, id);
  if (!rec) throw new Error(`completion ${childId} is stored against ${id}, which is missing`);
  return rec;
}

/** One record by id, decoding its chain of parents (oldest first) as far as the row needs it. */
export function decodeChain(stmt: Database.Statement, id: string): CompletionRecord | null {
  const first = stmt.get(id) as CompletionRow | undefined;
  if (!first) return null;
  const rows = [first];
  for (let r = first; rowNeedsParent(r);) {
    const p = stmt.get(r.parent_id) as CompletionRow | undefined;
    if (!p) throw new Error(`completion ${r.id} is stored against ${r.parent_id}, which is missing`);
    rows.push(p);
    r = p;
  }
  let rec: CompletionRecord | null = null;
  for (let i = rows.length - 1; i >= 0; i--) {
    const parent = rec;
    rec = rowToCompletion(rows[i]!, () => parent!);
  }
  return rec;
}

/** Rows of one session in seq order; parents outside them are read with `fallback`. */
export function decodeInOrder(rows: CompletionRow[], fallback: (id: string) => CompletionRecord | null): CompletionRecord[] {
  const seen = new Map<string, CompletionRecord>();
  return rows.map((row) => {
    const rec = rowToCompletion(row, (id) => {
      const p = seen.get(id) ?? fallback(id);
      if (!p) throw new Error(`completion ${row.id} is stored against ${id}, which is missing`);
      return p;
    });
    seen.set(rec.id, rec);
    return rec;
  });
}
