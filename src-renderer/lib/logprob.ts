// Logprob → colour bucket. Buckets are on probability so the legend reads naturally; the colours
// themselves live in CSS (--lp0 … --lp5) so both themes can tune them.

export interface LogprobBucket { index: number; min: number; label: string }

const edges: Array<[number, string]> = [
  [0.9, 'p ≥ 0.9'],
  [0.5, '0.5 – 0.9'],
  [0.2, '0.2 – 0.5'],
  [0.05, '0.05 – 0.2'],
  [0.01, '0.01 – 0.05'],
  [0, 'p < 0.01'],
];

export const LOGPROB_BUCKETS: LogprobBucket[] = edges.map(([p, label], index) => ({
  index,
  min: p > 0 ? Math.log(p) : -Infinity,
  label,
}));

/** Bucket index 0 (confident) … 5 (very unlikely); -1 when there is no logprob. */
export function logprobBucket(lp: number | undefined): number {
  if (lp === undefined || lp === null || Number.isNaN(lp)) return -1;
  for (const b of LOGPROB_BUCKETS) if (lp >= b.min) return b.index;
  return LOGPROB_BUCKETS.length - 1;
}

export interface LogprobStats { count: number; mean: number; min: number; minIndex: number }

export function logprobStats(lps: ArrayLike<number>): LogprobStats {
  let sum = 0;
  let count = 0;
  let min = Infinity;
  let minIndex = -1;
  for (let i = 0; i < lps.length; i++) {
    const v = lps[i];
    if (!Number.isFinite(v)) continue;
    sum += v;
    count++;
    if (v < min) {
      min = v;
      minIndex = i;
    }
  }
  return { count, mean: count ? sum / count : NaN, min: count ? min : NaN, minIndex };
}
