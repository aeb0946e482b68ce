// Batch display helpers. Pure.
import type { BatchSummary, TaskResult } from '../backend/types.js';

export function batchName(b: Pick<BatchSummary, 'id' | 'spec'>): string {
  const name = typeof b.spec?.name === 'string' && b.spec.name ? b.spec.name : null;
  return name ?? b.id;
}

/** "demo:calculator · builtin · sim-vllm × 4" */
export function batchLabel(b: Pick<BatchSummary, 'id' | 'spec'>): string {
  const s = b.spec ?? {};
  return `${s.dataset ?? '?'} · ${s.harness ?? '?'} · ${s.engine ?? '?'}${s.n && s.n > 1 ? ` ×${s.n}` : ''}`;
}

/** The largest k with a pass@k value, and that value. */
export function topPassAtK(p: Record<string, number> | undefined): { k: number; v: number } | null {
  if (!p) return null;
  let best: { k: number; v: number } | null = null;
  for (const [k, v] of Object.entries(p)) {
    const kk = Number(k);
    if (Number.isFinite(kk) && Number.isFinite(v) && (!best || kk > best.k)) best = { k: kk, v };
  }
  return best;
}

export function taskStatus(t: TaskResult, n: number): string {
  const active = t.samples.filter((s) => s.status === 'active').length;
  const done = t.samples.filter((s) => s.status !== 'active').length;
  if (active > 0) return 'running';
  if (done === 0) return 'queued';
  if (done < n) return 'running';
  if (t.samples.some((s) => s.status === 'failed')) return 'failed';
  if (t.samples.some((s) => s.status === 'interrupted')) return 'interrupted';
  return 'finished';
}

export function formatPct(x: number | null | undefined): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return '—';
  return `${(x * 100).toFixed(x === 1 || x === 0 ? 0 : 1)}%`;
}

/** Batches that ran the same dataset and harness (a fair comparison), newest first. */
export function sameSpec(a: BatchSummary, b: BatchSummary): boolean {
  return a.spec?.dataset === b.spec?.dataset && a.spec?.harness === b.spec?.harness;
}

/**
 * Default pair: a matching pair, newest first — same dataset and harness, different engines (ended
 * batches first). With `a` given, its newest match. Falls back to the newest same-spec pair.
 */
export function defaultPair(list: BatchSummary[], a?: string): [string | undefined, string | undefined] {
  const ended = list.filter((b) => b.status !== 'queued' && b.status !== 'running');
  const pool = ended.length >= 2 ? ended : list;
  const match = (A: BatchSummary) => pool.find((b) => b.id !== A.id && sameSpec(b, A) && b.spec.engine !== A.spec.engine);
  if (a) {
    const A = list.find((b) => b.id === a);
    if (!A) return [a, undefined];
    return [A.id, (match(A) ?? pool.find((b) => b.id !== A.id && sameSpec(b, A)))?.id];
  }
  for (const A of pool) {
    const B = match(A);
    if (B) return [A.id, B.id];
  }
  for (const A of pool) {
    const B = pool.find((b) => b.id !== A.id && sameSpec(b, A));
    if (B) return [A.id, B.id];
  }
  return [pool[0]?.id, undefined];
}
