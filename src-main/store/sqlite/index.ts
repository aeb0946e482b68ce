// The desktop store (DESIGN §12): the asynchronous Store over one SQLite file. better-sqlite3 is synchronous,
// so each method answers from the repositories at once; read-modify-write first commits the writer's queue,
// then reads and writes in one synchronous transaction, which nothing else can interleave with.
import type { SessionRecord } from '../../core/types.js';
import type { BatchPatch, BatchRecord } from '../batches.js';
import type { SessionPatch } from '../sessions.js';
import type { Modification, Modified, Store } from '../types.js';
import { openSqliteDatabase, type OpenStoreOptions, type SqliteDatabase } from './database.js';

export { DB_FILENAME, openSqliteDatabase, type OpenStoreOptions, type SqliteDatabase } from './database.js';

export interface SqliteStore extends Store {
  readonly kind: 'sqlite';
  /** Absolute path of the SQLite file. */
  readonly path: string;
  /** The synchronous database underneath (SQLite-only tests and tools: schema fixtures, raw SQL). */
  readonly raw: SqliteDatabase;
}

function applyModification<T, P, R>(
  raw: SqliteDatabase,
  read: () => T | null,
  write: (patch: P) => void,
  fn: (current: T) => Modification<P, R>,
): Modified<T, R> {
  return raw.db.transaction((): Modified<T, R> => {
    const current = read();
    if (!current) return null;
    const m = fn(current);
    if ('refuse' in m) return { refused: m.refuse };
    write(m.patch);
    return { record: read()! };
  }).immediate();
}

export function openStore(opts: OpenStoreOptions): SqliteStore {
  const raw = openSqliteDatabase(opts);
  const { sessions, completions, batches, runs, engines, settings, slices, rescores, writer } = raw;
  return {
    kind: 'sqlite',
    location: raw.path,
    path: raw.path,
    raw,
    writer,
    sessions: {
      get: async (id) => sessions.get(id),
      getSummary: async (id) => sessions.getSummary(id),
      getByKey: async (key) => sessions.getByKey(key),
      list: async (filter) => sessions.list(filter),
      count: async (filter) => sessions.count(filter),
      async modify<R>(id: string, fn: (current: SessionRecord) => Modification<SessionPatch, R>) {
        await writer.flush();
        return applyModification(raw, () => sessions.get(id), (patch: SessionPatch) => sessions.updateRaw(id, patch), fn);
      },
      // One process owns every session of the file: a node id narrows nothing.
      markBatchSessionsInterrupted: async (opts) => sessions.markBatchSessionsInterrupted(opts?.now),
    },
    completions: {
      get: async (id) => completions.get(id),
      listBySession: async (sessionId) => completions.listBySession(sessionId),
      countBySession: async (sessionId) => completions.countBySession(sessionId),
      incompleteCalls: async (sessionId) => completions.incompleteCalls(sessionId),
      reserveSeq: async (sessionId) => completions.reserveSeq(sessionId),
      findByBodyHash: async (sessionId, hash) => completions.findByBodyHash(sessionId, hash),
      async *iterateAll(filter) {
        yield* completions.iterateAll(filter);
      },
      recoverDanglingIntents: async (opts) => completions.recoverDanglingIntents(opts?.now),
      forgetSession: (sessionId) => completions.forgetSession(sessionId),
    },
    batches: {
      create: async (rec) => batches.create(rec),
      get: async (id) => batches.get(id),
      list: async (opts) => batches.list(opts),
      update: async (id, patch) => batches.update(id, patch),
      modify: async <R>(id: string, fn: (current: BatchRecord) => Modification<BatchPatch, R>) =>
        applyModification(raw, () => batches.get(id), (patch: BatchPatch) => batches.update(id, patch), fn),
      markUnfinishedInterrupted: async (now) => batches.markUnfinishedInterrupted(now),
    },
    runs: {
      create: async (rec) => runs.create(rec),
      get: async (sessionId) => runs.get(sessionId),
      listByBatch: async (batchId) => runs.listByBatch(batchId),
      listRunning: async () => runs.listRunning(),
      update: async (sessionId, patch) => runs.update(sessionId, patch),
      markUnfinishedInterrupted: async (opts) => runs.markUnfinishedInterrupted(opts?.now),
    },
    engines: {
      list: async () => engines.list(),
      upsert: async (config, now) => engines.upsert(config, now),
      delete: async (id) => engines.delete(id),
    },
    settings: {
      get: async <T>(key: string) => settings.get<T>(key),
      set: async (key, value) => settings.set(key, value),
    },
    slices: {
      sessionsOfTasks: async (batchId, taskIds) => slices.sessionsOfTasks(batchId, taskIds),
      runs: async (batchId, sessionIds) => slices.runs(batchId, sessionIds),
    },
    rescores: {
      put: async (run, traces) => rescores.put(run, traces),
      get: async (id) => rescores.get(id),
      list: async (filter) => rescores.list(filter),
      traces: async (id) => rescores.traces(id),
      trace: async (id, traceId) => rescores.trace(id, traceId),
      tracesOfSession: async (id, sessionId) => rescores.tracesOfSession(id, sessionId),
    },
    close: () => raw.close(),
  };
}

/** The SQLite database under a store, for SQLite-only tools and tests; throws for any other store. */
export function sqliteDatabaseOf(store: Store): SqliteDatabase {
  if (store.kind !== 'sqlite' || !('raw' in store)) throw new Error(`this needs the SQLite store; the store here is ${store.kind} (${store.location})`);
  return (store as SqliteStore).raw;
}
