// Small statistics for the comparison views. Pure and deterministic (seeded resampling).

export interface DiffInterval {
  /** mean(b) − mean(a) */
  diff: number;
  lo: number;
  hi: number;
  nA: number;
  nB: number;
}

/** mulberry32: a small seeded PRNG, so the same data always gives the same interval. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const mean = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

/**
 * Percentile-bootstrap confidence interval for mean(b) − mean(a) (independent samples; each side
 * resampled with replacement). Null when either side has no values.
 */
export function bootstrapDiff(a: readonly number[], b: readonly number[], opts: { level?: number; rounds?: number; seed?: number } = {}): DiffInterval | null {
  if (a.length === 0 || b.length === 0) return null;
  const { level = 0.95, rounds = 2000, seed = 1 } = opts;
  const next = rng(seed);
  const draws = new Float64Array(rounds);
  for (let r = 0; r < rounds; r++) {
    let sa = 0;
    for (let i = 0; i < a.length; i++) sa += a[Math.floor(next() * a.length)];
    let sb = 0;
    for (let i = 0; i < b.length; i++) sb += b[Math.floor(next() * b.length)];
    draws[r] = sb / b.length - sa / a.length;
  }
  draws.sort();
  const q = (p: number) => draws[Math.min(rounds - 1, Math.max(0, Math.floor(p * rounds)))];
  const tail = (1 - level) / 2;
  return { diff: mean(b) - mean(a), lo: q(tail), hi: q(1 - tail), nA: a.length, nB: b.length };
}

/** Wilson score interval for a proportion (successes of n), e.g. a pass rate. */
export function wilson(successes: number, n: number, z = 1.96): { p: number; lo: number; hi: number } | null {
  if (n <= 0) return null;
  const p = successes / n;
  const d = 1 + (z * z) / n;
  const centre = (p + (z * z) / (2 * n)) / d;
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / d;
  return { p, lo: Math.max(0, centre - half), hi: Math.min(1, centre + half) };
}
