// The Postgres writer: the same contract as ../writer.ts (group commit; a put resolves only after the COMMIT that
// holds it; a bad write rejects alone) over one pooled connection at a time. A group is written as a few
// multi-row statements (sessions, intents, completions, intent removals) and the session updates, in ONE
// transaction; when that fails, each write is tried again in its own transaction. A server that cannot be
// reached, or a lock held elsewhere past lock_timeout, keeps the writes queued and retried on a timer; those
// waiting longer than `unavailableAfterMs` reject with StoreUnavailableError.
import type { CompletionRecord, NewSession } from '../../core/types.js';
import { findQueuedByBodyHash, maxQueuedSeq, type CallIntent, type PendingView } from '../completions.js';
import type { EncodedCompletion } from '../rows.js';
import { sessionParams, type SessionPatch } from '../sessions.js';
import type { StoreWriterApi } from '../types.js';
import { StoreUnavailableError, type PutCompletionOptions, type WriterOptions, type WriterStats } from '../writer.js';
import type { Connection, Queryable } from './connection.js';
import { snapshot, type PgCompletions } from './completions.js';
import { updateSessionRow } from './sessions.js';
import { COMPLETION_COLUMNS, insertStatements, toPgCompletion } from './sql.js';

type Op =
  | { kind: 'completion'; rec: CompletionRecord; bodyHash: string | null }
  | { kind: 'intent'; intent: CallIntent }
  | { kind: 'intentDone'; id: string }
  | { kind: 'session'; params: Record<string, unknown> }
  | { kind: 'sessionUpdate'; id: string; patch: SessionPatch };

interface Item {
  op: Op;
  /** Encoded when its group is first written (kept for a retry on its own). */
  enc?: EncodedCompletion;
  queuedAt: number;
  resolve: () => void;
  reject: (e: unknown) => void;
  /** Settles (never rejects) when the item is committed or rejected: what flush() waits for. */
  settled: Promise<void>;
}

const SESSION_COLUMNS = ['id', 'key_hash', 'engine_id', 'harness', 'task_id', 'batch_id', 'metadata', 'status', 'reward', 'created_at', 'finished_at', 'node_id'];
const INTENT_COLUMNS = ['id', 'session_id', 'seq', 'dialect', 'engine_id', 'replica', 'created_at', 'node_id'];
const RETRY_FIRST_MS = 20;
const RETRY_MAX_MS = 500;

export class PgWriter implements StoreWriterApi, PendingView {
  private queue: Item[] = [];
  /** The group being written now (still visible to seq allocation and retry detection). */
  private inflight: Item[] = [];
  private running = false;
  private scheduled: NodeJS.Immediate | null = null;
  private retry: NodeJS.Timeout | null = null;
  private retryDelayMs = RETRY_FIRST_MS;
  private closed = false;
  private readonly maxBatch: number;
  private readonly unavailableAfterMs: number;
  readonly stats: WriterStats = { transactions: 0, writes: 0, failed: 0, fallbacks: 0, lockedRetries: 0 };
  /** A lock held elsewhere (a modify() in progress, an operator's LOCK TABLE) holds writes at most this long per try. */
  private readonly txOpts: { lockTimeoutMs: number };

  constructor(
    private readonly conn: Connection,
    private readonly completions: PgCompletions,
    private readonly nodeId: string | null,
    opts: WriterOptions = {},
  ) {
    this.maxBatch = Math.max(1, opts.maxBatch ?? 256);
    this.unavailableAfterMs = Math.max(0, opts.unavailableAfterMs ?? 2000);
    this.txOpts = { lockTimeoutMs: Math.max(100, this.unavailableAfterMs) };
  }

  get pending(): number {
    return this.queue.length + this.inflight.length;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  putCompletion(rec: CompletionRecord, opts: PutCompletionOptions = {}): Promise<void> {
    return this.enqueue(() => ({ kind: 'completion', rec: snapshot(rec), bodyHash: opts.bodyHash ?? null }));
  }

  putIntent(intent: CallIntent): Promise<void> {
    return this.enqueue(() => ({ kind: 'intent', intent: { ...intent } }));
  }

  dropIntent(id: string): Promise<void> {
    return this.enqueue(() => ({ kind: 'intentDone', id }));
  }

  putSession(rec: NewSession): Promise<void> {
    return this.enqueue(() => ({ kind: 'session', params: { ...sessionParams(rec), node_id: this.nodeId } }));
  }

  updateSession(id: string, patch: SessionPatch): Promise<void> {
    return this.enqueue(() => ({ kind: 'sessionUpdate', id, patch: { ...patch } }));
  }

  /** Resolves once everything queued now is committed or rejected. */
  async flush(): Promise<void> {
    const waiting = [...this.inflight, ...this.queue].map((i) => i.settled);
    if (this.retry === null) this.kick();
    await Promise.all(waiting);
  }

  /** Flushes, then refuses further writes (Store.close ends the pool). */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  // ---- PendingView ----

  maxPendingSeq(sessionId: string): number | undefined {
    return maxQueuedSeq([...this.inflight, ...this.queue], sessionId);
  }

  findPendingByBodyHash(sessionId: string, hash: string): CompletionRecord | undefined {
    return findQueuedByBodyHash([...this.inflight, ...this.queue], sessionId, hash);
  }

  // ---- internals ----

  private enqueue(build: () => Op): Promise<void> {
    if (this.closed) return Promise.reject(new Error('store writer is closed'));
    let op: Op;
    try {
      op = build();
    } catch (e) {
      this.stats.failed++;
      return Promise.reject(e);
    }
    let resolve!: () => void;
    let reject!: (e: unknown) => void;
    const p = new Promise<void>((res, rej) => { resolve = res; reject = rej; });
    this.queue.push({ op, queuedAt: performance.now(), resolve, reject, settled: p.then(() => undefined, () => undefined) });
    if (this.retry === null) {
      if (this.queue.length >= this.maxBatch) this.kick();
      else this.scheduled ??= setImmediate(() => this.kick());
    }
    return p;
  }

  /** Starts writing groups unless a group is being written (its end starts the next). */
  private kick(): void {
    if (this.scheduled !== null) {
      clearImmediate(this.scheduled);
      this.scheduled = null;
    }
    if (this.running || this.queue.length === 0) return;
    this.running = true;
    void this.drain().finally(() => {
      this.running = false;
      if (this.queue.length > 0 && this.retry === null) this.kick();
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0 && this.retry === null) {
      const group = this.queue;
      this.queue = [];
      this.inflight = group;
      try {
        await this.writeGroup(group);
      } finally {
        this.inflight = [];
      }
    }
  }

  private async writeGroup(group: Item[]): Promise<void> {
    const errors: unknown[] = new Array(group.length);
    try {
      await this.conn.transaction(async (db) => {
        errors.fill(undefined);
        await this.apply(db, group, errors);
      }, this.txOpts);
      this.stats.transactions++;
    } catch (e) {
      if (e instanceof StoreUnavailableError) return this.hold(group, e);
      this.stats.fallbacks++;
      errors.fill(undefined);
      for (let i = 0; i < group.length; i++) {
        try {
          await this.conn.transaction(async (db) => {
            const own: unknown[] = [undefined];
            await this.apply(db, [group[i]!], own);
            if (own[0] !== undefined) throw own[0];
          }, this.txOpts);
          this.stats.transactions++;
        } catch (one) {
          if (one instanceof StoreUnavailableError) {
            this.settle(group.slice(0, i), errors.slice(0, i));
            return this.hold(group.slice(i), one);
          }
          errors[i] = one ?? new Error('write failed');
        }
      }
    }
    this.retryDelayMs = RETRY_FIRST_MS;
    this.settle(group, errors);
  }

  /**
   * One group in one transaction. Statement errors throw (the caller retries each write alone); a write that
   * is refused without an SQL error (an update of an unknown session, a record that cannot be encoded) is
   * marked in `errors` and the rest carries on.
   */
  private async apply(db: Queryable, items: Item[], errors: unknown[]): Promise<void> {
    const completionIdx: number[] = [];
    const toEncode: number[] = [];
    items.forEach((it, i) => {
      if (it.op.kind !== 'completion') return;
      completionIdx.push(i);
      if (!it.enc) toEncode.push(i);
    });
    if (toEncode.length) {
      const encoded = await this.completions.encodeAll(db, toEncode.map((i) => items[i]!.op as Extract<Op, { kind: 'completion' }>));
      toEncode.forEach((i, k) => {
        const e = encoded[k]!;
        if (e instanceof Error) errors[i] = e;
        else items[i]!.enc = e;
      });
    }

    const sessions = items.flatMap((it) => (it.op.kind === 'session' ? [it.op.params] : []));
    for (const s of insertStatements('sessions', SESSION_COLUMNS, sessions)) await db.query(s.text, s.values);

    // Custody: an intent and the record that ends it may share a group; only the last word on each id counts.
    const intents = new Map<string, CallIntent | null>();
    items.forEach((it, i) => {
      if (it.op.kind === 'intent') intents.set(it.op.intent.id, it.op.intent);
      else if (it.op.kind === 'intentDone') intents.set(it.op.id, null);
      else if (it.op.kind === 'completion' && errors[i] === undefined) intents.set(it.op.rec.id, null);
    });
    const putIntents = [...intents.values()].filter((x): x is CallIntent => x !== null).map((x) => ({
      id: x.id, session_id: x.sessionId, seq: x.seq, dialect: x.dialect, engine_id: x.engineId, replica: x.replica ?? '',
      created_at: x.createdAt, node_id: this.nodeId,
    }));
    const replace = `ON CONFLICT (id) DO UPDATE SET ${INTENT_COLUMNS.slice(1).map((c) => `${c} = EXCLUDED.${c}`).join(', ')}`;
    for (const s of insertStatements('call_intents', INTENT_COLUMNS, putIntents, replace)) await db.query(s.text, s.values);

    const rows = await this.completionRows(db, completionIdx.filter((i) => errors[i] === undefined).map((i) => items[i]!.enc!));
    for (const s of insertStatements('completions', COMPLETION_COLUMNS, rows)) await db.query(s.text, s.values);

    const done = [...intents].filter(([, v]) => v === null).map(([id]) => id);
    if (done.length) await db.query('DELETE FROM call_intents WHERE id = ANY($1)', [done]);

    for (let i = 0; i < items.length; i++) {
      const op = items[i]!.op;
      if (op.kind === 'sessionUpdate' && (await updateSessionRow(db, op.id, op.patch)) === 0) errors[i] = new Error(`unknown session ${op.id}`);
    }
  }

  /** Params of each row; one stored against a parent that is neither committed nor in this group is written in full. */
  private async completionRows(db: Queryable, encs: EncodedCompletion[]): Promise<Array<Record<string, unknown>>> {
    const inGroup = new Set<string>();
    const outside = [...new Set(encs.map((e) => e.params.parent_id as string | null).filter((p): p is string => p !== null))];
    const committed = new Set(outside.length
      ? (await db.query<{ id: string }>('SELECT id FROM completions WHERE id = ANY($1)', [outside])).rows.map((r) => r.id)
      : []);
    return encs.map((e) => {
      const parent = e.params.parent_id as string | null;
      const params = parent === null || inGroup.has(parent) || committed.has(parent) ? e.params : e.full();
      inGroup.add(e.params.id as string);
      return toPgCompletion(params);
    });
  }

  /** The server is gone: writes that waited too long reject as unavailable, the rest wait for the next try. */
  private hold(group: Item[], cause: StoreUnavailableError): void {
    this.stats.lockedRetries++;
    const now = performance.now();
    const keep: Item[] = [];
    for (const item of group) {
      if (now - item.queuedAt < this.unavailableAfterMs) keep.push(item);
      else {
        this.stats.failed++;
        item.reject(cause);
      }
    }
    this.queue = keep.concat(this.queue);
    if (this.queue.length === 0) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      this.kick();
    }, this.retryDelayMs);
    this.retryDelayMs = Math.min(RETRY_MAX_MS, this.retryDelayMs * 2);
  }

  private settle(group: Item[], errors: unknown[]): void {
    group.forEach((item, i) => {
      if (errors[i] === undefined) {
        this.stats.writes++;
        item.resolve();
      } else {
        this.stats.failed++;
        item.reject(errors[i]);
      }
    });
  }
}
