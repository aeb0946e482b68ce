// `rollgate tasks check` / `POST /api/tasks/check` (DESIGN §7): validates task folders the way Harbor users
// do. Every task runs once with the `oracle` harness (its reference solution: must score 1) and once with
// `nop` (does nothing: must score 0), as two ordinary batches; a task is broken when either is off, or
// when it could not run at all (broken folder, image that does not build, verifier writing no reward).
// The report is computed from the two batches in the store, so it reads the same after a restart.
import type { BatchView } from './results.js';

export interface TaskCheckRow {
  taskId: string;
  oracle: number | null;
  nop: number | null;
  ok: boolean;
  /** Why the task is broken (empty when ok, or while it is still running). */
  problems: string[];
}

export interface TaskCheckReport {
  /** `chk_<oracle batch>_<nop batch>`: the check is nothing but its two batches. */
  id: string;
  status: 'running' | 'completed' | 'failed';
  oracleBatch: string;
  nopBatch: string;
  /** Samples done of the two batches together. */
  done: number;
  total: number;
  tasks: TaskCheckRow[];
  broken: number;
}

const ID_RE = /^chk_(bat_[0-9a-f]+)_(bat_[0-9a-f]+)$/;

export const taskCheckId = (oracleBatch: string, nopBatch: string) => `chk_${oracleBatch}_${nopBatch}`;

export function parseTaskCheckId(id: string): { oracleBatch: string; nopBatch: string } | null {
  const m = ID_RE.exec(id);
  return m ? { oracleBatch: m[1], nopBatch: m[2] } : null;
}

function sideOf(view: BatchView, taskId: string, harness: string, want: number): { reward: number | null; problem: string | null; done: boolean } {
  const t = view.tasks.find((x) => x.taskId === taskId);
  const sample = t?.samples[0];
  if (!sample || sample.status === 'active') {
    const ended = view.status !== 'queued' && view.status !== 'running';
    return { reward: null, problem: ended ? `${harness} did not run (batch ${view.status})` : null, done: ended };
  }
  const reward = sample.reward;
  if (sample.error && (reward === null || reward !== want)) return { reward, problem: `${harness}: ${sample.error}`, done: true };
  if (reward === null) return { reward, problem: `${harness} got no reward`, done: true };
  if (reward !== want) return { reward, problem: `${harness} scored ${reward} (a sound task gives ${want})`, done: true };
  return { reward, problem: null, done: true };
}

export function buildTaskCheckReport(oracle: BatchView, nop: BatchView): TaskCheckReport {
  const tasks = oracle.tasks.map((t): TaskCheckRow => {
    const o = sideOf(oracle, t.taskId, 'oracle', 1);
    const n = sideOf(nop, t.taskId, 'nop', 0);
    // The same broken-folder reason on both sides is said once.
    const problems = [o.problem, n.problem].filter((p): p is string => !!p)
      .filter((p, i, all) => all.findIndex((q) => q.replace(/^\w+: /, '') === p.replace(/^\w+: /, '')) === i);
    return { taskId: t.taskId, oracle: o.reward, nop: n.reward, ok: o.done && n.done && !problems.length, problems };
  });
  const ended = (v: BatchView) => v.status !== 'queued' && v.status !== 'running';
  const bothEnded = ended(oracle) && ended(nop);
  const failed = bothEnded && (oracle.status !== 'completed' || nop.status !== 'completed');
  return {
    id: taskCheckId(oracle.id, nop.id),
    status: !bothEnded ? 'running' : failed ? 'failed' : 'completed',
    oracleBatch: oracle.id, nopBatch: nop.id,
    done: oracle.counts.done + nop.counts.done, total: oracle.counts.total + nop.counts.total,
    tasks, broken: tasks.filter((t) => !t.ok && (t.problems.length > 0)).length,
  };
}

/** What starting a check needs from the rollout manager (RolloutManager has it). */
export interface BatchRunner {
  submit(body: unknown): Promise<{ id: string }>;
  get(id: string): Promise<BatchView | null>;
  wait(id: string): Promise<BatchView | null>;
  cancel(id: string): Promise<unknown>;
}

export interface TaskCheckSpec {
  dataset: string;
  /** Default docker: Harbor tasks and image rows need it. */
  runtime?: string;
  concurrency?: number;
  engine?: string;
}

/** Starts the oracle and nop batches; throws what `submit` throws on a bad dataset or runtime. */
export async function startTaskCheck(runner: BatchRunner, spec: TaskCheckSpec): Promise<{ id: string; oracleBatch: string; nopBatch: string }> {
  const common = { dataset: spec.dataset, runtime: spec.runtime ?? 'docker', concurrency: spec.concurrency ?? 2, n: 1, ...(spec.engine ? { engine: spec.engine } : {}) };
  const oracle = (await runner.submit({ ...common, harness: 'oracle', name: 'tasks check: oracle' })).id;
  let nop: string;
  try {
    nop = (await runner.submit({ ...common, harness: 'nop', name: 'tasks check: nop' })).id;
  } catch (e) {
    void runner.cancel(oracle);
    throw e;
  }
  return { id: taskCheckId(oracle, nop), oracleBatch: oracle, nopBatch: nop };
}

export async function getTaskCheck(runner: BatchRunner, id: string): Promise<TaskCheckReport | null> {
  const ids = parseTaskCheckId(id);
  const oracle = ids && (await runner.get(ids.oracleBatch));
  const nop = ids && (await runner.get(ids.nopBatch));
  return oracle && nop ? buildTaskCheckReport(oracle, nop) : null;
}

export async function waitTaskCheck(runner: BatchRunner, id: string): Promise<TaskCheckReport | null> {
  const ids = parseTaskCheckId(id);
  if (!ids) return null;
  await Promise.all([runner.wait(ids.oracleBatch), runner.wait(ids.nopBatch)]);
  return getTaskCheck(runner, id);
}
