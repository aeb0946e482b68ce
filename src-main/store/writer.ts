// The single writer (DESIGN §9): callers queue writes; one flush commits everything queued in ONE
// transaction (group commit). A put's promise resolves only after the COMMIT that holds it, so the
// gateway acknowledges a completion to the agent only once it is durable. A failing write rejects
// its own promise only; the other queued writes still commit.
//
// The writer never waits for a lock on the event loop's thread: it commits with SQLite's busy timeout at 0,
// and when another connection holds the write lock it keeps the group queued and tries again on a timer. Writes
// that could not commit within `unavailableAfterMs` reject with StoreUnavailableError (the gateway answers 503
// with Retry-After), so an external lock on the database slows writes down without freezing every session.
import type Database from 'better-sqlite3';
import type { CompletionRecord, NewSession, SessionRecord } from '../core/types.js';
import { findQueuedByBodyHash, maxQueuedSeq, type CallIntent, type CompletionsRepo, type PendingView } from './completions.js';
import type { EncodedCompletion } from './rows.js';
import { SessionsRepo, sessionParams, patchParams, type SessionPatch } from './sessions.js';

export interface WriterOptions {
  /** Flush immediately (synchronously) once this many writes are queued. Default 256. */
  maxBatch?: number;
  /** How long a write may wait for a database locked by another connection before it is rejected. Default 2000 ms. */
  unavailableAfterMs?: number;
}

/** The database stayed locked by another connection (or process) for longer than a write may wait. */
export class StoreUnavailableError extends Error {
  readonly statusCode = 503;
  constructor(readonly retryAfterSec: number, cause: unknown) {
    super(`the store is busy (the database is locked by another process: ${(cause as Error)?.message ?? cause}); retry in ${retryAfterSec} s`);
  }
}

/** SQLITE_BUSY and SQLITE_LOCKED (and their extended codes): someone else holds the lock; trying later helps. */
function isLockError(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

const RETRY_FIRST_MS = 10;
const RETRY_MAX_MS = 250;

export interface WriterStats {
  /** COMMITs that carried at least one write. */
  transactions: number;
  /** Writes committed. */
  writes: number;
  /** Writes rejected. */
  failed: number;
  /** Flushes that fell back to one transaction per write after the group transaction failed. */
  fallbacks: number;
  /** Group commits put off because another connection held the database's lock. */
  lockedRetries: number;
}

export interface PutCompletionOptions {
  /** Hash of the agent's request body, for SDK-retry detection (completions.findByBodyHash). */
  bodyHash?: string | null;
}

type Op =
  | { kind: 'completion'; params: EncodedCompletion; rec: CompletionRecord; bodyHash: string | null }
  | { kind: 'intent'; intent: CallIntent }
  | { kind: 'intentDone'; id: string }
  | { kind: 'session'; params: Record<string, unknown> }
  | { kind: 'sessionUpdate'; id: string; params: Record<string, unknown> };

interface Item {
  op: Op;
  /** performance.now() when queued: how long it has waited for a locked database. */
  queuedAt: number;
  resolve: () => void;
  reject: (e: unknown) => void;
}

export class StoreWriter implements PendingView {
  private queue: Item[] = [];
  private immediate: NodeJS.Immediate | null = null;
  /** Set while the database is locked elsewhere: the next try. */
  private retry: NodeJS.Timeout | null = null;
  private retryDelayMs = RETRY_FIRST_MS;
  /** flush() callers waiting for a queue held back by a lock. */
  private drained: Array<() => void> = [];
  private closed = false;
  private readonly maxBatch: number;
  private readonly unavailableAfterMs: number;
  private readonly runBatch: (items: Item[], errors: Array<unknown>) => void;
  private readonly runOne: (item: Item) => void;
  readonly stats: WriterStats = { transactions: 0, writes: 0, failed: 0, fallbacks: 0, lockedRetries: 0 };

  constructor(
    private readonly db: Database.Database,
    private readonly sessions: SessionsRepo,
    private readonly completions: CompletionsRepo,
    opts: WriterOptions = {},
  ) {
    this.maxBatch = Math.max(1, opts.maxBatch ?? 256);
    this.unavailableAfterMs = Math.max(0, opts.unavailableAfterMs ?? 2000);
    const group = db.transaction((items: Item[], errors: Array<unknown>) => {
      for (let i = 0; i < items.length; i++) {
        try {
          this.apply(items[i].op);
        } catch (e) {
          // A statement error (constraint, not-found) undoes only that statement. Anything that ended the
          // transaction (IO error, full disk) must fail the group so the caller falls back per write; a lock
          // held elsewhere fails the group too, which is then tried again whole.
          if (!this.db.inTransaction || isLockError(e)) throw e;
          errors[i] = e ?? new Error('write failed');
        }
      }
    });
    // IMMEDIATE: the write lock is taken at BEGIN, so a lock held elsewhere fails before any statement runs.
    this.runBatch = group.immediate;
    this.runOne = db.transaction((item: Item) => this.apply(item.op)).immediate;
  }

  /** Number of writes queued and not yet committed. */
  get pending(): number {
    return this.queue.length;
  }

  putCompletion(rec: CompletionRecord, opts: PutCompletionOptions = {}): Promise<void> {
    const bodyHash = opts.bodyHash ?? null;
    return this.enqueue(() => ({ kind: 'completion', params: this.completions.encode(rec, bodyHash), rec, bodyHash }));
  }

  /** Custody: recorded before an engine call; its completion's commit removes it (see recoverDanglingIntents). */
  putIntent(intent: CallIntent): Promise<void> {
    return this.enqueue(() => ({ kind: 'intent', intent }));
  }

  /** Custody: a call that ended without an engine call or a record (refused while paused). */
  dropIntent(id: string): Promise<void> {
    return this.enqueue(() => ({ kind: 'intentDone', id }));
  }

  putSession(rec: NewSession): Promise<void> {
    return this.enqueue(() => ({ kind: 'session', params: sessionParams(rec) }));
  }

  /** Rejects if no session has this id when the write is applied. */
  updateSession(id: string, patch: SessionPatch): Promise<void> {
    return this.enqueue(() => ({ kind: 'sessionUpdate', id, params: patchParams(id, patch) }));
  }

  /**
   * Commits everything queued now; resolves once it is committed or rejected (individual failures reject their
   * own puts). While the database is locked elsewhere that takes until the lock goes or the writes give up.
   */
  flush(): Promise<void> {
    if (this.retry === null) this.flushNow();
    if (this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.drained.push(resolve));
  }

  /**
   * Flushes, then refuses further writes. Does not close the database (Store.close does). At shutdown a last
   * commit may wait for a lock held elsewhere (the connection's busy timeout) rather than drop what is queued.
   */
  async close(): Promise<void> {
    this.closed = true;
    this.flushNow(true);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  // ---- PendingView ----

  maxPendingSeq(sessionId: string): number | undefined {
    return maxQueuedSeq(this.queue, sessionId);
  }

  findPendingByBodyHash(sessionId: string, hash: string): CompletionRecord | undefined {
    return findQueuedByBodyHash(this.queue, sessionId, hash);
  }

  // ---- internals ----

  private enqueue(build: () => Op): Promise<void> {
    if (this.closed) return Promise.reject(new Error('store writer is closed'));
    let op: Op;
    try {
      op = build(); // encodes now: token arrays are snapshotted, bad input rejects only this put
    } catch (e) {
      this.stats.failed++;
      return Promise.reject(e);
    }
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ op, queuedAt: performance.now(), resolve, reject });
      if (this.retry !== null) return; // the database is locked elsewhere: the retry timer commits it
      if (this.queue.length >= this.maxBatch) this.flushNow();
      else if (this.immediate === null) this.immediate = setImmediate(() => this.flushNow());
    });
  }

  private apply(op: Op): void {
    switch (op.kind) {
      case 'completion':
        this.completions.insertEncoded(op.params);
        return;
      case 'intent':
        this.completions.insertIntent(op.intent);
        return;
      case 'intentDone':
        this.completions.deleteIntent(op.id);
        return;
      case 'session':
        this.sessions.insertEncoded(op.params);
        return;
      case 'sessionUpdate':
        if (this.sessionsUpdate(op.params) === 0) throw new Error(`unknown session ${op.id}`);
        return;
    }
  }

  private sessionsUpdate(params: Record<string, unknown>): number {
    return this.sessions.updateEncoded(params);
  }

  /** `waitForLock`: let SQLite's busy timeout wait for a lock held elsewhere (shutdown only, never on the hot path). */
  private flushNow(waitForLock = false): void {
    if (this.immediate !== null) {
      clearImmediate(this.immediate);
      this.immediate = null;
    }
    if (this.retry !== null) {
      clearTimeout(this.retry);
      this.retry = null;
    }
    const busyTimeout = this.db.pragma('busy_timeout', { simple: true }) as number;
    if (!waitForLock) this.db.pragma('busy_timeout = 0');
    try {
      while (this.queue.length > 0) {
        const batch = this.queue;
        this.queue = [];
        const errors: unknown[] = new Array(batch.length);
        try {
          this.runBatch(batch, errors);
          this.stats.transactions++;
        } catch (e) {
          if (isLockError(e) && !waitForLock) {
            this.holdForLock(batch, e);
            return;
          }
          this.commitOneByOne(batch, errors);
        }
        this.settle(batch, errors);
      }
    } finally {
      if (!waitForLock) this.db.pragma(`busy_timeout = ${busyTimeout}`);
    }
    this.retryDelayMs = RETRY_FIRST_MS;
    for (const done of this.drained.splice(0)) done();
  }

  /** The group transaction itself failed (BEGIN/COMMIT error, IO): each write is tried on its own. */
  private commitOneByOne(batch: Item[], errors: unknown[]): void {
    this.stats.fallbacks++;
    errors.fill(undefined);
    for (let i = 0; i < batch.length; i++) {
      try {
        this.runOne(batch[i]);
        this.stats.transactions++;
      } catch (e) {
        errors[i] = e ?? new Error('write failed');
      }
    }
  }

  /**
   * Another connection holds the lock: writes that have waited too long are rejected as unavailable, the rest go
   * back to the head of the queue (order kept) and are tried again after a growing delay.
   */
  private holdForLock(batch: Item[], cause: unknown): void {
    this.stats.lockedRetries++;
    const now = performance.now();
    const keep: Item[] = [];
    for (const item of batch) {
      if (now - item.queuedAt < this.unavailableAfterMs) keep.push(item);
      else {
        this.stats.failed++;
        item.reject(new StoreUnavailableError(Math.max(1, Math.ceil(this.unavailableAfterMs / 1000)), cause));
      }
    }
    this.queue = keep.concat(this.queue);
    if (this.queue.length === 0) {
      for (const done of this.drained.splice(0)) done();
      return;
    }
    this.retry = setTimeout(() => this.flushNow(), this.retryDelayMs);
    this.retryDelayMs = Math.min(RETRY_MAX_MS, this.retryDelayMs * 2);
  }

  private settle(batch: Item[], errors: unknown[]): void {
    for (let i = 0; i < batch.length; i++) {
      if (errors[i] === undefined) {
        this.stats.writes++;
        batch[i].resolve();
      } else {
        this.stats.failed++;
        batch[i].reject(errors[i]);
      }
    }
  }
}
