// Batch results (GET /api/batches/:id, the callback body, `rollgate eval`'s table): computed from the
// store (sessions of the batch + their runs), so they are the same before and after a restart.
import type { BatchRecord, SessionRunRecord, SessionSummary } from '../store/index.js';

/** A sample passes when its reward is at least this (rewards are usually 0/1). */
export const PASS_THRESHOLD = 1;

export interface SampleResult {
  sampleIndex: number;
  sessionId: string;
  status: string;
  reward: number | null;
  outcome: string | null;
  exitCode: number | null;
  durationMs: number | null;
  completionCount: number;
  promptTokens: number;
  outputTokens: number;
  error: string | null;
  /**
   * An earlier attempt of this sample that a later one replaced (in a cluster, a sample whose node died
   * runs again elsewhere): kept for the record, not counted.
   */
  superseded?: true;
}

/** Recorded engine calls and tokens, so a dashboard needs no per-session requests. */
export interface UsageTotals { completions: number; promptTokens: number; outputTokens: number }

export interface TaskResult {
  taskId: string;
  groupId: string;
  /** Samples with a numeric reward. */
  scored: number;
  meanReward: number | null;
  /** Rewards by sample index (null: not run yet, interrupted, or unscored). */
  rewards: Array<number | null>;
  passAtK: Record<string, number>;
  usage: UsageTotals;
  samples: SampleResult[];
}

export interface BatchCounts {
  total: number;
  queued: number;
  running: number;
  finished: number;
  failed: number;
  interrupted: number;
  /** Samples that reached an end (finished + failed + interrupted). */
  done: number;
}

export interface BatchView {
  id: string;
  status: BatchRecord['status'];
  error: string | null;
  spec: Record<string, unknown>;
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  counts: BatchCounts;
  meanReward: number | null;
  passAtK: Record<string, number>;
  callback: BatchRecord['callback'];
  usage: UsageTotals;
  tasks: TaskResult[];
}

/** Unbiased pass@k (Chen et al. 2021): 1 - C(n-c, k) / C(n, k), in its numerically stable product form. */
export function passAtK(n: number, c: number, k: number): number {
  if (k <= 0 || k > n) return NaN;
  if (n - c < k) return 1;
  let p = 1;
  for (let i = n - c + 1; i <= n; i++) p *= 1 - k / i;
  return 1 - p;
}

/** k = 1, 2, 4, … up to n, and n itself. */
export function kValues(n: number): number[] {
  const ks: number[] = [];
  for (let k = 1; k <= n; k *= 2) ks.push(k);
  if (n > 0 && ks[ks.length - 1] !== n) ks.push(n);
  return ks;
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;
const mean = (xs: number[]) => (xs.length ? round(xs.reduce((a, b) => a + b, 0) / xs.length) : null);

export function buildBatchView(batch: BatchRecord, sessions: SessionSummary[], runs: SessionRunRecord[], liveRunning?: number): BatchView {
  const n = Number(batch.spec.n ?? 1);
  const runBySession = new Map(runs.map((r) => [r.sessionId, r]));
  const byTask = new Map<string, SampleResult[]>();
  // Oldest first, so a later attempt of the same sample replaces the earlier one below.
  for (const s of [...sessions].sort((a, b) => a.createdAt - b.createdAt)) {
    if (!s.taskId) continue;
    const run = runBySession.get(s.id);
    const idx = Number(s.metadata.sampleIndex ?? 0);
    const sample: SampleResult = {
      sampleIndex: idx,
      sessionId: s.id,
      status: s.status,
      reward: s.reward,
      outcome: run?.outcome ?? (typeof s.metadata.outcome === 'string' ? s.metadata.outcome : null),
      exitCode: run?.exitCode ?? null,
      durationMs: run?.durationMs ?? null,
      completionCount: s.completionCount,
      promptTokens: s.promptTokens,
      outputTokens: s.outputTokens,
      error: run?.error ?? run?.evaluator?.error ?? null,
    };
    const list = byTask.get(s.taskId) ?? [];
    list.push(sample);
    byTask.set(s.taskId, list);
  }

  const counts: BatchCounts = { total: batch.taskIds.length * n, queued: 0, running: 0, finished: 0, failed: 0, interrupted: 0, done: 0 };
  const batchPass = new Map<number, number[]>();
  const allRewards: number[] = [];
  const tasks: TaskResult[] = batch.taskIds.map((taskId) => {
    const samples = (byTask.get(taskId) ?? []).sort((a, b) => a.sampleIndex - b.sampleIndex);
    const rewards: Array<number | null> = Array.from({ length: n }, () => null);
    const latest = new Map<number, SampleResult>();
    for (const s of samples) {
      const before = latest.get(s.sampleIndex);
      if (before) before.superseded = true;
      latest.set(s.sampleIndex, s);
    }
    for (const s of latest.values()) {
      if (s.sampleIndex >= 0 && s.sampleIndex < n) rewards[s.sampleIndex] = s.status === 'active' || s.status === 'interrupted' ? null : s.reward;
      if (s.status === 'active') counts.running++;
      else if (s.status === 'finished') counts.finished++;
      else if (s.status === 'failed') counts.failed++;
      else if (s.status === 'interrupted') counts.interrupted++;
    }
    const scored = rewards.filter((r): r is number => typeof r === 'number');
    allRewards.push(...scored);
    const c = scored.filter((r) => r >= PASS_THRESHOLD).length;
    const pk: Record<string, number> = {};
    for (const k of kValues(scored.length)) {
      pk[k] = round(passAtK(scored.length, c, k));
      const list = batchPass.get(k) ?? [];
      list.push(pk[k]);
      batchPass.set(k, list);
    }
    return { taskId, groupId: `${batch.id}:${taskId}`, scored: scored.length, meanReward: mean(scored), rewards, passAtK: pk, usage: usageOf(samples), samples };
  });
  counts.done = counts.finished + counts.failed + counts.interrupted;
  if (liveRunning !== undefined) counts.running = liveRunning;
  counts.queued = Math.max(0, counts.total - counts.done - counts.running);
  const passAll: Record<string, number> = {};
  // A batch-level pass@k averages the tasks that have at least k scored samples.
  for (const [k, list] of [...batchPass.entries()].sort((a, b) => a[0] - b[0])) passAll[k] = mean(list)!;
  return {
    id: batch.id, status: batch.status, error: batch.error, spec: batch.spec,
    createdAt: batch.createdAt, startedAt: batch.startedAt, finishedAt: batch.finishedAt,
    counts, meanReward: mean(allRewards), passAtK: passAll, callback: batch.callback,
    usage: usageOf(tasks.flatMap((t) => t.samples)), tasks,
  };
}

function usageOf(samples: SampleResult[]): UsageTotals {
  return samples.reduce((u, s) => ({ completions: u.completions + s.completionCount, promptTokens: u.promptTokens + s.promptTokens, outputTokens: u.outputTokens + s.outputTokens }), { completions: 0, promptTokens: 0, outputTokens: 0 });
}
