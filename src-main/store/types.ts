// The store as the layers above see it (DESIGN §12): one asynchronous interface, two implementations —
// SQLite (`sqlite/`, better-sqlite3, the desktop default) and Postgres (`postgres/`, node-postgres, many nodes).
// Everything above the store talks to this interface only; no SQL, no driver types leak through it.
//
// Read-modify-write happens inside the store (`sessions.modify`, `runs.modify`, `batches.modify`): the caller
// passes a pure function of the current row, the store applies it atomically (SQLite: one synchronous
// transaction after committing queued writes; Postgres: SELECT … FOR UPDATE in one transaction), so two
// nodes or two requests finishing the same session cannot drop each other's change.
import type { CompletionRecord, NewSession, SessionRecord } from '../core/types.js';
import type { BatchPatch, BatchRecord, SessionRunPatch, SessionRunRecord } from './batches.js';
import type { CallIntent, CompletionIterateFilter } from './completions.js';
import type { StoredEngine } from './engine-configs.js';
import type { RescoreListFilter, RescoreRecord, RescoreTraceRecord } from './rescores.js';
import type { SessionListFilter, SessionPatch, SessionSummary } from './sessions.js';
import type { PutCompletionOptions, WriterStats } from './writer.js';

/** What a `modify` function returns: a patch to apply, or a refusal carried back to the caller unchanged. */
export type Modification<P, R> = { patch: P } | { refuse: R };
/** The outcome of `modify`: the updated record, the caller's refusal, or `null` when no row has that id. */
export type Modified<T, R> = { record: T } | { refused: R } | null;

export interface SessionsStore {
  get(id: string): Promise<SessionRecord | null>;
  getSummary(id: string): Promise<SessionSummary | null>;
  /** Indexed lookup on sha256(key) confirmed in constant time; null for an unknown or empty key. */
  getByKey(key: string): Promise<SessionRecord | null>;
  /** Newest first, with completion count and token totals. */
  list(filter?: SessionListFilter): Promise<SessionSummary[]>;
  count(filter?: Pick<SessionListFilter, 'batchId' | 'status'>): Promise<number>;
  /** Atomic read-modify-write of one session (queued writes committed first). `fn` must be pure and synchronous. */
  modify<R>(id: string, fn: (current: SessionRecord) => Modification<SessionPatch, R>): Promise<Modified<SessionRecord, R>>;
  /**
   * Every `active` batch session becomes `interrupted` — only those owned by `nodeId` when given (a dead node's
   * sessions on a shared store), else all (the one desktop process restarting). Returns how many changed.
   */
  markBatchSessionsInterrupted(opts?: { now?: number; nodeId?: string }): Promise<number>;
}

export interface CompletionsStore {
  get(id: string): Promise<CompletionRecord | null>;
  /** Committed completions of a session, ordered by seq. */
  listBySession(sessionId: string): Promise<CompletionRecord[]>;
  countBySession(sessionId: string): Promise<number>;
  /** Custody: the session's incomplete calls, oldest first. */
  incompleteCalls(sessionId: string): Promise<Array<{ completionId: string; reason: string | null; error: string | null }>>;
  /** Allocates a seq for the session's next call: never handed out twice for one session. */
  reserveSeq(sessionId: string): Promise<number>;
  /** Latest record of the session with this request-body hash (queued writes included), or null. */
  findByBodyHash(sessionId: string, hash: string): Promise<CompletionRecord | null>;
  /** Streams completions ordered by session, then seq, in constant memory. */
  iterateAll(filter?: CompletionIterateFilter): AsyncIterable<CompletionRecord>;
  /**
   * Custody at start-up (or when a node is found dead): every call intent left behind — only `nodeId`'s when
   * given — becomes an `incomplete` completion (`lost-in-crash`). Returns the calls recovered.
   */
  recoverDanglingIntents(opts?: { now?: number; nodeId?: string }): Promise<Array<{ id: string; sessionId: string }>>;
  /** The session ended: per-session caches (delta bases, seq reservations) may go. */
  forgetSession(sessionId: string): void;
}

export interface BatchesStore {
  create(rec: BatchRecord): Promise<BatchRecord>;
  get(id: string): Promise<BatchRecord | null>;
  /** Newest first. */
  list(opts?: { limit?: number; offset?: number }): Promise<BatchRecord[]>;
  update(id: string, patch: BatchPatch): Promise<BatchRecord | null>;
  modify<R>(id: string, fn: (current: BatchRecord) => Modification<BatchPatch, R>): Promise<Modified<BatchRecord, R>>;
  /** Every queued or running batch becomes `interrupted`. Returns how many changed. */
  markUnfinishedInterrupted(now?: number): Promise<number>;
}

export interface RunsStore {
  create(rec: SessionRunRecord): Promise<SessionRunRecord>;
  get(sessionId: string): Promise<SessionRunRecord | null>;
  listByBatch(batchId: string): Promise<SessionRunRecord[]>;
  /** Runs recorded as running (after a crash: candidates for a leftover-process sweep). */
  listRunning(): Promise<SessionRunRecord[]>;
  update(sessionId: string, patch: SessionRunPatch): Promise<SessionRunRecord | null>;
  /** Every `running` run becomes `interrupted` — only those of sessions owned by `nodeId` when given. */
  markUnfinishedInterrupted(opts?: { now?: number; nodeId?: string }): Promise<number>;
}

/** Parts of a batch for live views: some tasks' sessions, verdicts without captured output. */
export interface BatchSlicesStore {
  sessionsOfTasks(batchId: string, taskIds: string[]): Promise<SessionSummary[]>;
  runs(batchId: string, sessionIds?: string[]): Promise<SessionRunRecord[]>;
}

export interface EnginesStore<C extends { id: string }> {
  list(): Promise<StoredEngine<C>[]>;
  upsert(config: C, now?: number): Promise<void>;
  delete(id: string): Promise<boolean>;
}

/** Named values that survive restarts (the policy version, pause state). */
export interface SettingsStore {
  get<T>(key: string): Promise<T | undefined>;
  set(key: string, value: unknown): Promise<void>;
}

export interface RescoresStore {
  put(run: RescoreRecord, traces: RescoreTraceRecord[]): Promise<void>;
  get(id: string): Promise<RescoreRecord | null>;
  list(filter?: RescoreListFilter): Promise<RescoreRecord[]>;
  traces(id: string): Promise<RescoreTraceRecord[]>;
  trace(id: string, traceId: string): Promise<RescoreTraceRecord | null>;
  tracesOfSession(id: string, sessionId: string): Promise<RescoreTraceRecord[]>;
}

/**
 * Group commit: puts queue and resolve only after the COMMIT that holds them (acknowledge only after commit).
 * A store that cannot take writes rejects with `StoreUnavailableError` (503 + Retry-After to agents).
 */
export interface StoreWriterApi {
  readonly pending: number;
  readonly isClosed: boolean;
  readonly stats: WriterStats;
  putCompletion(rec: CompletionRecord, opts?: PutCompletionOptions): Promise<void>;
  putIntent(intent: CallIntent): Promise<void>;
  dropIntent(id: string): Promise<void>;
  putSession(rec: NewSession): Promise<void>;
  /** Rejects if no session has this id when the write is applied. */
  updateSession(id: string, patch: SessionPatch): Promise<void>;
  /** Resolves once everything queued now is committed or rejected. */
  flush(): Promise<void>;
}

export interface Store {
  /** 'sqlite' (a file in the data folder) or 'postgres' (a shared server). */
  readonly kind: 'sqlite' | 'postgres';
  /** Where it lives, for humans: the SQLite file path, or the Postgres URL without its password. */
  readonly location: string;
  readonly sessions: SessionsStore;
  readonly completions: CompletionsStore;
  readonly batches: BatchesStore;
  readonly runs: RunsStore;
  readonly engines: EnginesStore<{ id: string }>;
  readonly settings: SettingsStore;
  readonly slices: BatchSlicesStore;
  readonly rescores: RescoresStore;
  readonly writer: StoreWriterApi;
  /** Flushes the writer, then closes the connections. Idempotent. */
  close(): Promise<void>;
}
