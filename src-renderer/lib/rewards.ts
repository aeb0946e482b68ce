// Reward bucketing for the distribution charts. Pure.
import type { TaskResult } from '../backend/types.js';

export interface RewardBucket {
  key: string;
  label: string;
  /** 0 (worst) … 1 (best), for colouring. */
  pos: number;
  test: (r: number) => boolean;
}

/** Few distinct values (e.g. 0/1 rewards) → one bucket per value; otherwise 5 equal-width bins. */
export function rewardBuckets(rewards: number[]): RewardBucket[] {
  const uniq = [...new Set(rewards)].sort((a, b) => a - b);
  if (uniq.length === 0) return [];
  if (uniq.length <= 5) {
    return uniq.map((v, i) => ({
      key: `v${i}`,
      label: `reward ${Number.isInteger(v) ? v.toFixed(0) : v.toFixed(2)}`,
      pos: uniq.length === 1 ? (v > 0 ? 1 : 0) : i / (uniq.length - 1),
      test: (r) => r === v,
    }));
  }
  const lo = uniq[0];
  const hi = uniq[uniq.length - 1];
  const w = (hi - lo) / 5;
  return Array.from({ length: 5 }, (_, i) => {
    const a = lo + i * w;
    const b = i === 4 ? hi : lo + (i + 1) * w;
    return {
      key: `b${i}`,
      label: `${a.toFixed(2)}–${b.toFixed(2)}`,
      pos: i / 4,
      test: (r: number) => (i === 4 ? r >= a && r <= b : r >= a && r < b),
    };
  });
}

export interface DistributionRow {
  taskId: string;
  pending: number;
  [bucket: string]: number | string;
}

export function rewardDistribution(tasks: TaskResult[]): { buckets: RewardBucket[]; rows: DistributionRow[] } {
  const all: number[] = [];
  for (const t of tasks) for (const r of t.rewards) if (typeof r === 'number') all.push(r);
  const buckets = rewardBuckets(all);
  const rows = tasks.map((t) => {
    const row: DistributionRow = { taskId: t.taskId, pending: 0 };
    for (const b of buckets) row[b.key] = 0;
    for (const r of t.rewards) {
      if (typeof r !== 'number') {
        row.pending++;
        continue;
      }
      const b = buckets.find((x) => x.test(r));
      if (b) row[b.key] = (row[b.key] as number) + 1;
    }
    return row;
  });
  return { buckets, rows };
}

/** Colour for a bucket position, from the theme's bad → warn → good. */
export function bucketColor(pos: number, c: { bad: string; warn: string; good: string }): string {
  if (pos <= 0.2) return c.bad;
  if (pos < 0.8) return c.warn;
  return c.good;
}
