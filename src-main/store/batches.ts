// Batches and session runs (DESIGN §7): the rollout manager's bookkeeping. Rows are small and written
// rarely (a batch changes state a handful of times; a run twice), so these repositories write
// synchronously on the write connection instead of queueing in the completion writer.
import type Database from 'better-sqlite3';

export type BatchStatus = 'queued' | 'running' | 'completed' | 'cancelled' | 'failed' | 'interrupted';

export interface BatchCallbackState {
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  lastError?: string;
  deliveredAt?: number;
}

export interface BatchRecord {
  id: string;
  status: BatchStatus;
  /** The submitted spec, normalized (dataset name, harness, engine, n, concurrency, timeoutMs, …). */
  spec: Record<string, unknown>;
  taskIds: string[];
  error: string | null;
  callbackUrl: string | null;
  callback: BatchCallbackState | null;
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
}

export type BatchPatch = Partial<Pick<BatchRecord, 'status' | 'error' | 'callback' | 'startedAt' | 'finishedAt'>>;

export type RunStatus = 'running' | 'done' | 'interrupted';
/** task_error: the task itself could not run (broken task folder, image that does not build). */
export type RunOutcome = 'ok' | 'agent_error' | 'timeout' | 'cancelled' | 'start_error' | 'task_error';

export interface EvaluatorVerdict {
  type: string;
  reward: number | null;
  /** What the evaluator saw or printed (bounded). */
  output?: string;
  error?: string;
  /** Per-trace rewards the evaluator gave (keys as in `metadata.traceRewards`). */
  traceRewards?: Record<string, number | null>;
  /** Every named score a Harbor verifier wrote (reward.json), `reward` included. */
  rewards?: Record<string, number>;
  /** The agent's changes as a unified diff (git tasks: SWE-bench-style rows, git work folders). */
  diff?: string;
}

export interface SessionRunRecord {
  sessionId: string;
  batchId: string | null;
  status: RunStatus;
  pid: number | null;
  runToken: string | null;
  workDir: string | null;
  outcome: RunOutcome | null;
  exitCode: number | null;
  signal: string | null;
  durationMs: number | null;
  stdout: string | null;
  stderr: string | null;
  finalAnswer: string | null;
  evaluator: EvaluatorVerdict | null;
  error: string | null;
  startedAt: number;
  finishedAt: number | null;
}

export type SessionRunPatch = Partial<Omit<SessionRunRecord, 'sessionId' | 'batchId' | 'startedAt'>>;

/** A batches row (both stores). */
export interface BatchRow {
  id: string; status: string; spec: string; task_ids: string; error: string | null; callback_url: string | null;
  callback: string | null; created_at: number; started_at: number | null; finished_at: number | null;
}

/** A session_runs row (both stores). */
export interface RunRow {
  session_id: string; batch_id: string | null; status: string; pid: number | null; run_token: string | null;
  work_dir: string | null; outcome: string | null; exit_code: number | null; signal: string | null; duration_ms: number | null;
  stdout: string | null; stderr: string | null; final_answer: string | null; evaluator: string | null; error: string | null;
  started_at: number; finished_at: number | null;
}

const parse = <T>(s: string | null): T | null => (s === null ? null : (JSON.parse(s) as T));

export function rowToBatch(r: BatchRow): BatchRecord {
  return {
    id: r.id,
    status: r.status as BatchStatus,
    spec: JSON.parse(r.spec) as Record<string, unknown>,
    taskIds: JSON.parse(r.task_ids) as string[],
    error: r.error,
    callbackUrl: r.callback_url,
    callback: parse<BatchCallbackState>(r.callback),
    createdAt: r.created_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
  };
}

export function rowToRun(r: RunRow): SessionRunRecord {
  return {
    sessionId: r.session_id,
    batchId: r.batch_id,
    status: r.status as RunStatus,
    pid: r.pid,
    runToken: r.run_token,
    workDir: r.work_dir,
    outcome: r.outcome as RunOutcome | null,
    exitCode: r.exit_code,
    signal: r.signal,
    durationMs: r.duration_ms,
    stdout: r.stdout,
    stderr: r.stderr,
    finalAnswer: r.final_answer,
    evaluator: parse<EvaluatorVerdict>(r.evaluator),
    error: r.error,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
  };
}

export const BATCH_PATCH: ReadonlyArray<[keyof BatchPatch, string]> = [
  ['status', 'status'], ['error', 'error'], ['callback', 'callback'], ['startedAt', 'started_at'], ['finishedAt', 'finished_at'],
];

export const RUN_PATCH: ReadonlyArray<[keyof SessionRunPatch, string]> = [
  ['status', 'status'], ['pid', 'pid'], ['runToken', 'run_token'], ['workDir', 'work_dir'], ['outcome', 'outcome'],
  ['exitCode', 'exit_code'], ['signal', 'signal'], ['durationMs', 'duration_ms'], ['stdout', 'stdout'], ['stderr', 'stderr'],
  ['finalAnswer', 'final_answer'], ['evaluator', 'evaluator'], ['error', 'error'], ['finishedAt', 'finished_at'],
];

const JSON_FIELDS = new Set(['callback', 'evaluator']);

function patchSql(table: string, key: string, fields: ReadonlyArray<[string, string]>): string {
  return `UPDATE ${table} SET ${fields.map(([, c]) => `${c} = CASE WHEN @has_${c} THEN @${c} ELSE ${c} END`).join(', ')} WHERE ${key} = @key`;
}

/** Named params of a patch: `has_<col>` flags next to the (JSON-encoded) values (both stores). */
export function patchParams(key: string, patch: Record<string, unknown>, fields: ReadonlyArray<[string, string]>): Record<string, unknown> {
  const p: Record<string, unknown> = { key };
  for (const [field, col] of fields) {
    const has = Object.prototype.hasOwnProperty.call(patch, field) && patch[field] !== undefined;
    p[`has_${col}`] = has ? 1 : 0;
    let v = has ? patch[field] : null;
    if (has && JSON_FIELDS.has(field)) v = v === null ? null : JSON.stringify(v);
    p[col] = v ?? null;
  }
  return p;
}

/** Named params of a batches row (both stores). */
export function batchParams(rec: BatchRecord): Record<string, unknown> {
  return {
    id: rec.id, status: rec.status, spec: JSON.stringify(rec.spec), task_ids: JSON.stringify(rec.taskIds), error: rec.error,
    callback_url: rec.callbackUrl, callback: rec.callback ? JSON.stringify(rec.callback) : null,
    created_at: rec.createdAt, started_at: rec.startedAt, finished_at: rec.finishedAt,
  };
}

/** Named params of a session_runs row (both stores). */
export function runParams(rec: SessionRunRecord): Record<string, unknown> {
  return {
    session_id: rec.sessionId, batch_id: rec.batchId, status: rec.status, pid: rec.pid, run_token: rec.runToken,
    work_dir: rec.workDir, outcome: rec.outcome, exit_code: rec.exitCode, signal: rec.signal, duration_ms: rec.durationMs,
    stdout: rec.stdout, stderr: rec.stderr, final_answer: rec.finalAnswer,
    evaluator: rec.evaluator ? JSON.stringify(rec.evaluator) : null, error: rec.error,
    started_at: rec.startedAt, finished_at: rec.finishedAt,
  };
}

export class BatchesRepo {
  private readonly insertStmt: Database.Statement;
  private readonly getStmt: Database.Statement;
  private readonly listStmt: Database.Statement;
  private readonly updateStmt: Database.Statement;
  private readonly interruptStmt: Database.Statement;

  constructor(db: Database.Database) {
    this.insertStmt = db.prepare(`INSERT INTO batches (id, status, spec, task_ids, error, callback_url, callback, created_at, started_at, finished_at)
      VALUES (@id, @status, @spec, @task_ids, @error, @callback_url, @callback, @created_at, @started_at, @finished_at)`);
    this.getStmt = db.prepare('SELECT * FROM batches WHERE id = ?');
    this.listStmt = db.prepare('SELECT * FROM batches ORDER BY created_at DESC, id DESC LIMIT @limit OFFSET @offset');
    this.updateStmt = db.prepare(patchSql('batches', 'id', BATCH_PATCH));
    this.interruptStmt = db.prepare(`UPDATE batches SET status = 'interrupted', finished_at = COALESCE(finished_at, @now),
      error = COALESCE(error, 'Rollgate stopped while the batch was running') WHERE status IN ('queued', 'running')`);
  }

  create(rec: BatchRecord): BatchRecord {
    this.insertStmt.run(batchParams(rec));
    return rec;
  }

  get(id: string): BatchRecord | null {
    const row = this.getStmt.get(id) as BatchRow | undefined;
    return row ? rowToBatch(row) : null;
  }

  /** Newest first. */
  list(opts: { limit?: number; offset?: number } = {}): BatchRecord[] {
    return (this.listStmt.all({ limit: opts.limit ?? -1, offset: opts.offset ?? 0 }) as BatchRow[]).map(rowToBatch);
  }

  update(id: string, patch: BatchPatch): BatchRecord | null {
    if (this.updateStmt.run(patchParams(id, patch, BATCH_PATCH)).changes === 0) return null;
    return this.get(id);
  }

  /** At startup: every queued or running batch becomes `interrupted`. Returns how many changed. */
  markUnfinishedInterrupted(now: number = Date.now()): number {
    return this.interruptStmt.run({ now }).changes;
  }
}

export class SessionRunsRepo {
  private readonly insertStmt: Database.Statement;
  private readonly getStmt: Database.Statement;
  private readonly byBatchStmt: Database.Statement;
  private readonly runningStmt: Database.Statement;
  private readonly updateStmt: Database.Statement;
  private readonly interruptStmt: Database.Statement;

  constructor(db: Database.Database) {
    this.insertStmt = db.prepare(`INSERT OR REPLACE INTO session_runs
      (session_id, batch_id, status, pid, run_token, work_dir, outcome, exit_code, signal, duration_ms, stdout, stderr,
       final_answer, evaluator, error, started_at, finished_at)
      VALUES (@session_id, @batch_id, @status, @pid, @run_token, @work_dir, @outcome, @exit_code, @signal, @duration_ms, @stdout,
       @stderr, @final_answer, @evaluator, @error, @started_at, @finished_at)`);
    this.getStmt = db.prepare('SELECT * FROM session_runs WHERE session_id = ?');
    this.byBatchStmt = db.prepare('SELECT * FROM session_runs WHERE batch_id = ? ORDER BY started_at');
    this.runningStmt = db.prepare(`SELECT * FROM session_runs WHERE status = 'running'`);
    this.updateStmt = db.prepare(patchSql('session_runs', 'session_id', RUN_PATCH));
    this.interruptStmt = db.prepare(`UPDATE session_runs SET status = 'interrupted', finished_at = COALESCE(finished_at, @now),
      error = COALESCE(error, 'Rollgate stopped while the agent was running') WHERE status = 'running'`);
  }

  create(rec: SessionRunRecord): SessionRunRecord {
    this.insertStmt.run(runParams(rec));
    return rec;
  }

  get(sessionId: string): SessionRunRecord | null {
    const row = this.getStmt.get(sessionId) as RunRow | undefined;
    return row ? rowToRun(row) : null;
  }

  listByBatch(batchId: string): SessionRunRecord[] {
    return (this.byBatchStmt.all(batchId) as RunRow[]).map(rowToRun);
  }

  /** Runs recorded as running (after a crash: candidates for a leftover-process sweep). */
  listRunning(): SessionRunRecord[] {
    return (this.runningStmt.all() as RunRow[]).map(rowToRun);
  }

  update(sessionId: string, patch: SessionRunPatch): SessionRunRecord | null {
    if (this.updateStmt.run(patchParams(sessionId, patch, RUN_PATCH)).changes === 0) return null;
    return this.get(sessionId);
  }

  /** At startup: every `running` run becomes `interrupted`. Returns how many changed. */
  markUnfinishedInterrupted(now: number = Date.now()): number {
    return this.interruptStmt.run({ now }).changes;
  }
}
