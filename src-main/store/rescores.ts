// Stored cross-engine re-scoring results (DESIGN §8): one row per re-scoring run (what was scored on
// which engine, the overall figures) and one per trace with its per-token arrays as little-endian BLOBs
// (response positions, token ids, logprob as sampled, logprob as re-scored), so a result can be listed,
// reopened token by token and exported long after the run. Written once, synchronously, in one
// transaction (a run is a user action, not the hot path).
import type Database from 'better-sqlite3';
import type { RescoreStats } from '../core/trajectory/rescore-stats.js';
import type { Migration } from './migrations.js';
import { blobToFloat32, blobToInt32, float32ToBlob, int32ToBlob } from './token-blobs.js';

export const RESCORES_MIGRATION: Migration = {
  version: 6,
  name: 'rescores',
  sql: `
    CREATE TABLE rescores (
      id             TEXT PRIMARY KEY,
      created_at     INTEGER NOT NULL,
      engine         TEXT NOT NULL,          -- the re-scoring engine (B)
      engine_kind    TEXT,
      source_engine  TEXT,                   -- the engine that sampled the traces (A), when they agree
      builder        TEXT NOT NULL,
      batch_id       TEXT,
      session_id     TEXT,
      sessions       INTEGER NOT NULL,
      traces         INTEGER NOT NULL,
      overall        TEXT NOT NULL,          -- JSON: summary + histogram
      errors         TEXT NOT NULL           -- JSON: [{traceId, message}]
    );
    CREATE INDEX rescores_batch ON rescores(batch_id, created_at);
    CREATE INDEX rescores_session ON rescores(session_id, created_at);

    CREATE TABLE rescore_traces (
      rescore_id     TEXT NOT NULL REFERENCES rescores(id) ON DELETE CASCADE,
      ord            INTEGER NOT NULL,
      trace_id       TEXT NOT NULL,
      session_id     TEXT NOT NULL,
      source_engine  TEXT,
      replica        TEXT,
      completion_ids TEXT NOT NULL,          -- JSON array
      positions      BLOB,                   -- Int32: indices into the trace's responseIds (mask-1 tokens)
      token_ids      BLOB,                   -- Int32: responseIds at those positions
      sampled        BLOB,                   -- Float32: logprob under the sampling engine
      rescored       BLOB,                   -- Float32: logprob under the re-scoring engine
      dropped        INTEGER NOT NULL DEFAULT 0,
      summary        TEXT,                   -- JSON
      error          TEXT,
      PRIMARY KEY (rescore_id, trace_id)
    );
    CREATE INDEX rescore_traces_session ON rescore_traces(session_id);
  `,
};

/** The figures of a re-scoring, without the per-token deltas (those are the BLOBs) and histogram. */
export type RescoreSummaryJson = Omit<RescoreStats, 'deltas' | 'histogram'>;

export interface RescoreTraceRecord {
  traceId: string;
  sessionId: string;
  sourceEngine: string | null;
  replica: string | null;
  completionIds: string[];
  positions: Int32Array;
  tokenIds: Int32Array;
  sampled: Float32Array;
  rescored: Float32Array;
  dropped: number;
  summary: RescoreSummaryJson | null;
  error: string | null;
}

export interface RescoreRecord {
  id: string;
  createdAt: number;
  engine: string;
  engineKind: string | null;
  sourceEngine: string | null;
  builder: string;
  batchId: string | null;
  sessionId: string | null;
  sessions: number;
  traces: number;
  overall: RescoreSummaryJson & { histogram: Array<{ lo: number; hi: number; count: number }> };
  errors: Array<{ traceId: string; message: string }>;
}

/** A rescores row (both stores). */
export interface RescoreRow {
  id: string; created_at: number; engine: string; engine_kind: string | null; source_engine: string | null; builder: string;
  batch_id: string | null; session_id: string | null; sessions: number; traces: number; overall: string; errors: string;
}

/** A rescore_traces row (both stores). */
export interface TraceRow {
  trace_id: string; session_id: string; source_engine: string | null; replica: string | null; completion_ids: string;
  positions: Buffer | null; token_ids: Buffer | null; sampled: Buffer | null; rescored: Buffer | null; dropped: number;
  summary: string | null; error: string | null;
}

export const toRecord = (r: RescoreRow): RescoreRecord => ({
  id: r.id, createdAt: r.created_at, engine: r.engine, engineKind: r.engine_kind, sourceEngine: r.source_engine, builder: r.builder,
  batchId: r.batch_id, sessionId: r.session_id, sessions: r.sessions, traces: r.traces,
  overall: JSON.parse(r.overall) as RescoreRecord['overall'], errors: JSON.parse(r.errors) as RescoreRecord['errors'],
});

const EMPTY_I = new Int32Array(0);
const EMPTY_F = new Float32Array(0);

export const toTrace = (r: TraceRow): RescoreTraceRecord => ({
  traceId: r.trace_id, sessionId: r.session_id, sourceEngine: r.source_engine, replica: r.replica,
  completionIds: JSON.parse(r.completion_ids) as string[],
  positions: r.positions ? blobToInt32(r.positions) : EMPTY_I, tokenIds: r.token_ids ? blobToInt32(r.token_ids) : EMPTY_I,
  sampled: r.sampled ? blobToFloat32(r.sampled) : EMPTY_F, rescored: r.rescored ? blobToFloat32(r.rescored) : EMPTY_F,
  dropped: r.dropped, summary: r.summary ? (JSON.parse(r.summary) as RescoreSummaryJson) : null, error: r.error,
});

/** Named params of a rescores row (both stores). */
export function rescoreParams(run: RescoreRecord): Record<string, unknown> {
  return {
    id: run.id, created_at: run.createdAt, engine: run.engine, engine_kind: run.engineKind, source_engine: run.sourceEngine, builder: run.builder,
    batch_id: run.batchId, session_id: run.sessionId, sessions: run.sessions, traces: run.traces,
    overall: JSON.stringify(run.overall), errors: JSON.stringify(run.errors),
  };
}

/** Named params of a rescore_traces row (both stores). */
export function traceParams(rescoreId: string, t: RescoreTraceRecord, ord: number): Record<string, unknown> {
  return {
    rescore_id: rescoreId, ord, trace_id: t.traceId, session_id: t.sessionId, source_engine: t.sourceEngine, replica: t.replica,
    completion_ids: JSON.stringify(t.completionIds),
    positions: int32ToBlob(t.positions), token_ids: int32ToBlob(t.tokenIds), sampled: float32ToBlob(t.sampled), rescored: float32ToBlob(t.rescored),
    dropped: t.dropped, summary: t.summary ? JSON.stringify(t.summary) : null, error: t.error,
  };
}

export interface RescoreListFilter { batchId?: string; sessionId?: string; limit?: number }

export class RescoresRepo {
  private readonly insertRun: Database.Statement;
  private readonly insertTrace: Database.Statement;
  private readonly getStmt: Database.Statement;
  private readonly listStmt: Database.Statement;
  private readonly tracesStmt: Database.Statement;
  private readonly traceStmt: Database.Statement;
  private readonly bySessionStmt: Database.Statement;
  private readonly save: (run: RescoreRecord, traces: RescoreTraceRecord[]) => void;

  constructor(db: Database.Database) {
    this.insertRun = db.prepare(`INSERT INTO rescores (id, created_at, engine, engine_kind, source_engine, builder, batch_id, session_id, sessions, traces, overall, errors)
      VALUES (@id, @created_at, @engine, @engine_kind, @source_engine, @builder, @batch_id, @session_id, @sessions, @traces, @overall, @errors)`);
    this.insertTrace = db.prepare(`INSERT INTO rescore_traces (rescore_id, ord, trace_id, session_id, source_engine, replica, completion_ids, positions, token_ids, sampled, rescored, dropped, summary, error)
      VALUES (@rescore_id, @ord, @trace_id, @session_id, @source_engine, @replica, @completion_ids, @positions, @token_ids, @sampled, @rescored, @dropped, @summary, @error)`);
    this.getStmt = db.prepare('SELECT * FROM rescores WHERE id = ?');
    // A session's results include the batch runs that scored it.
    this.listStmt = db.prepare(`SELECT * FROM rescores WHERE (@batch IS NULL OR batch_id = @batch)
      AND (@session IS NULL OR session_id = @session OR id IN (SELECT rescore_id FROM rescore_traces WHERE session_id = @session))
      ORDER BY created_at DESC, id DESC LIMIT @limit`);
    this.tracesStmt = db.prepare('SELECT * FROM rescore_traces WHERE rescore_id = ? ORDER BY ord');
    this.traceStmt = db.prepare('SELECT * FROM rescore_traces WHERE rescore_id = ? AND trace_id = ?');
    this.bySessionStmt = db.prepare('SELECT * FROM rescore_traces WHERE rescore_id = ? AND session_id = ? ORDER BY ord');
    this.save = db.transaction((run: RescoreRecord, traces: RescoreTraceRecord[]) => {
      this.insertRun.run(rescoreParams(run));
      traces.forEach((t, ord) => this.insertTrace.run(traceParams(run.id, t, ord)));
    });
  }

  /** Stores a finished run and its traces in one transaction. */
  put(run: RescoreRecord, traces: RescoreTraceRecord[]): void {
    this.save(run, traces);
  }

  get(id: string): RescoreRecord | null {
    const row = this.getStmt.get(id) as RescoreRow | undefined;
    return row ? toRecord(row) : null;
  }

  /** Newest first. */
  list(f: RescoreListFilter = {}): RescoreRecord[] {
    return (this.listStmt.all({ batch: f.batchId ?? null, session: f.sessionId ?? null, limit: f.limit ?? 100 }) as RescoreRow[]).map(toRecord);
  }

  traces(id: string): RescoreTraceRecord[] {
    return (this.tracesStmt.all(id) as TraceRow[]).map(toTrace);
  }

  trace(id: string, traceId: string): RescoreTraceRecord | null {
    const row = this.traceStmt.get(id, traceId) as TraceRow | undefined;
    return row ? toTrace(row) : null;
  }

  tracesOfSession(id: string, sessionId: string): RescoreTraceRecord[] {
    return (this.bySessionStmt.all(id, sessionId) as TraceRow[]).map(toTrace);
  }
}
