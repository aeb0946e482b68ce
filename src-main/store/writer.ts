// The single writer (DESIGN §9): callers queue writes; one flush commits everything queued in ONE
// transaction (group commit). A put's promise resolves only after the COMMIT that holds it, so the
// gateway acknowledges a completion to the agent only once it is durable. A failing write rejects
// its own promise only; the other queued writes still commit.
import type Database from 'better-sqlite3';
import type { CompletionRecord, NewSession, SessionRecord } from '../core/types.js';
import type { CompletionsRepo, PendingView } from './completions.js';
import type { EncodedCompletion } from './rows.js';
import { SessionsRepo, sessionParams, patchParams, type SessionPatch } from './sessions.js';

export interface WriterOptions {
  /** Flush immediately (synchronously) once this many writes are queued. Default 256. */
  maxBatch?: number;
}

export interface WriterStats {
  /** COMMITs that carried at least one write. */
  transactions: number;
  /** Writes committed. */
  writes: number;
  /** Writes rejected. */
  failed: number;
  /** Flushes that fell back to one transaction per write after the group transaction failed. */
  fallbacks: number;
}

export interface PutCompletionOptions {
  /** Hash of the agent's request body, for SDK-retry detection (completions.findByBodyHash). */
  bodyHash?: string | null;
}

type Op =
  | { kind: 'completion'; params: EncodedCompletion; rec: CompletionRecord; bodyHash: string | null }
  | { kind: 'session'; params: Record<string, unknown> }
  | { kind: 'sessionUpdate'; id: string; params: Record<string, unknown> };

interface Item {
  op: Op;
  resolve: () => void;
  reject: (e: unknown) => void;
}

export class StoreWriter implements PendingView {
  private queue: Item[] = [];
  private immediate: NodeJS.Immediate | null = null;
  private closed = false;
  private readonly maxBatch: number;
  private readonly runBatch: (items: Item[], errors: Array<unknown>) => void;
  private readonly runOne: (item: Item) => void;
  readonly stats: WriterStats = { transactions: 0, writes: 0, failed: 0, fallbacks: 0 };

  constructor(
    private readonly db: Database.Database,
    private readonly sessions: SessionsRepo,
    private readonly completions: CompletionsRepo,
    opts: WriterOptions = {},
  ) {
    this.maxBatch = Math.max(1, opts.maxBatch ?? 256);
    this.runBatch = db.transaction((items: Item[], errors: Array<unknown>) => {
      for (let i = 0; i < items.length; i++) {
        try {
          this.apply(items[i].op);
        } catch (e) {
          // A statement error (constraint, not-found) undoes only that statement. Anything that ended the
          // transaction (IO error, full disk) must fail the group so the caller falls back per write.
          if (!this.db.inTransaction) throw e;
          errors[i] = e ?? new Error('write failed');
        }
      }
    });
    this.runOne = db.transaction((item: Item) => this.apply(item.op));
  }

  /** Number of writes queued and not yet committed. */
  get pending(): number {
    return this.queue.length;
  }

  putCompletion(rec: CompletionRecord, opts: PutCompletionOptions = {}): Promise<void> {
    const bodyHash = opts.bodyHash ?? null;
    return this.enqueue(() => ({ kind: 'completion', params: this.completions.encode(rec, bodyHash), rec, bodyHash }));
  }

  putSession(rec: NewSession): Promise<void> {
    return this.enqueue(() => ({ kind: 'session', params: sessionParams(rec) }));
  }

  /** Rejects if no session has this id when the write is applied. */
  updateSession(id: string, patch: SessionPatch): Promise<void> {
    return this.enqueue(() => ({ kind: 'sessionUpdate', id, params: patchParams(id, patch) }));
  }

  /** Commits everything queued now; resolves once it is committed (individual failures reject their own puts). */
  flush(): Promise<void> {
    this.flushNow();
    return Promise.resolve();
  }

  /** Flushes, then refuses further writes. Does not close the database (Store.close does). */
  async close(): Promise<void> {
    this.flushNow();
    this.closed = true;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  // ---- PendingView ----

  maxPendingSeq(sessionId: string): number | undefined {
    let max: number | undefined;
    for (const { op } of this.queue) {
      if (op.kind === 'completion' && op.rec.sessionId === sessionId && (max === undefined || op.rec.seq > max)) max = op.rec.seq;
    }
    return max;
  }

  findPendingByBodyHash(sessionId: string, hash: string): CompletionRecord | undefined {
    for (let i = this.queue.length - 1; i >= 0; i--) {
      const op = this.queue[i].op;
      if (op.kind === 'completion' && op.bodyHash === hash && op.rec.sessionId === sessionId) return op.rec;
    }
    return undefined;
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
      this.queue.push({ op, resolve, reject });
      if (this.queue.length >= this.maxBatch) this.flushNow();
      else if (this.immediate === null) this.immediate = setImmediate(() => this.flushNow());
    });
  }

  private apply(op: Op): void {
    switch (op.kind) {
      case 'completion':
        this.completions.insertEncoded(op.params);
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

  private flushNow(): void {
    if (this.immediate !== null) {
      clearImmediate(this.immediate);
      this.immediate = null;
    }
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      const errors: unknown[] = new Array(batch.length);
      try {
        this.runBatch(batch, errors);
        this.stats.transactions++;
      } catch {
        // The group transaction itself failed (BEGIN/COMMIT error, IO): retry each write on its own.
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
}
