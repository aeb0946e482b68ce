// Parts of a batch, read without loading the whole of it (issue 16: a live view of a 512-sample batch
// asks for the few tasks that changed, often): the session summaries of some tasks, and the runs' verdicts
// without their captured stdout/stderr.
import type Database from 'better-sqlite3';
import type { EvaluatorVerdict, RunOutcome, RunStatus, SessionRunRecord } from './batches.js';
import { rowToSummary, SUMMARY_COLUMNS, type SessionSummary, type SummaryRow } from './sessions.js';

/** Final answers are cut to this many characters (the full text stays in session_runs). */
export const ANSWER_CHARS = 600;

interface LightRunRow {
  session_id: string; batch_id: string | null; status: string; outcome: string | null; exit_code: number | null; signal: string | null;
  duration_ms: number | null; final_answer: string | null; evaluator: string | null; error: string | null; started_at: number; finished_at: number | null;
}

export class BatchSlicesRepo {
  private readonly tasksStmt: Database.Statement;
  private readonly runsStmt: Database.Statement;

  constructor(db: Database.Database) {
    this.tasksStmt = db.prepare(`SELECT ${SUMMARY_COLUMNS} FROM sessions s
      WHERE s.batch_id = @batch AND s.task_id IN (SELECT value FROM json_each(@tasks)) ORDER BY s.created_at`);
    this.runsStmt = db.prepare(`SELECT session_id, batch_id, status, outcome, exit_code, signal, duration_ms,
      substr(final_answer, 1, ${ANSWER_CHARS}) AS final_answer, evaluator, error, started_at, finished_at
      FROM session_runs WHERE batch_id = @batch AND (@sessions IS NULL OR session_id IN (SELECT value FROM json_each(@sessions)))`);
  }

  /** The sessions of `taskIds` in batch `batchId`, with completion counts and token totals. */
  sessionsOfTasks(batchId: string, taskIds: string[]): SessionSummary[] {
    return (this.tasksStmt.all({ batch: batchId, tasks: JSON.stringify(taskIds) }) as SummaryRow[]).map(rowToSummary);
  }

  /** Runs of the batch (optionally only some sessions) without stdout, stderr, pid or work folder. */
  runs(batchId: string, sessionIds?: string[]): SessionRunRecord[] {
    const rows = this.runsStmt.all({ batch: batchId, sessions: sessionIds ? JSON.stringify(sessionIds) : null }) as LightRunRow[];
    return rows.map((r) => ({
      sessionId: r.session_id, batchId: r.batch_id, status: r.status as RunStatus, pid: null, runToken: null, workDir: null,
      outcome: r.outcome as RunOutcome | null, exitCode: r.exit_code, signal: r.signal, durationMs: r.duration_ms, stdout: null, stderr: null,
      finalAnswer: r.final_answer, evaluator: r.evaluator ? (JSON.parse(r.evaluator) as EvaluatorVerdict) : null, error: r.error,
      startedAt: r.started_at, finishedAt: r.finished_at,
    }));
  }
}
