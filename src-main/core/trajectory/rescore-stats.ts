// Cross-engine re-score maths (DESIGN §8): per-token logprob deltas on mask-1 tokens.

export interface HistogramBin {
  /** inclusive lower edge */
  lo: number;
  /** exclusive upper edge (the last bin includes its upper edge) */
  hi: number;
  count: number;
}

export interface RescoreStats {
  n: number;
  /** lpA − lpB per token */
  deltas: number[];
  meanDelta: number;
  meanAbsDelta: number;
  maxAbsDelta: number;
  /** k1 = mean(lpA − lpB): unbiased estimate of KL(A‖B) when tokens were sampled from A. */
  klEstimate: number;
  /** k3 = mean(exp(r) − 1 − r), r = lpB − lpA: non-negative, lower-variance estimate of KL(A‖B). */
  klK3: number;
  /** share of tokens with |Δ| > 0.5 nats */
  shareAbove0_5: number;
  histogram: HistogramBin[];
}

export interface RescoreOptions {
  /** Only positions where mask[i] === 1 count (default: all). */
  mask?: ArrayLike<number>;
  /** Histogram of Δ = lpA − lpB: number of bins (default 20) over [-range, range] (default: max |Δ|, at least 1e-6). */
  bins?: number;
  range?: number;
}

/**
 * Compares logprobs of the same tokens under policy A (the sampler) and B (the re-scorer).
 * Non-finite pairs (e.g. -Infinity from a refused token) are dropped.
 */
export function rescoreStats(lpA: ArrayLike<number>, lpB: ArrayLike<number>, opts: RescoreOptions = {}): RescoreStats {
  if (lpA.length !== lpB.length) throw new RangeError(`logprob arrays differ in length: ${lpA.length} vs ${lpB.length}`);
  if (opts.mask && opts.mask.length !== lpA.length) throw new RangeError('mask length differs from logprobs');
  const deltas: number[] = [];
  let sum = 0;
  let sumAbs = 0;
  let maxAbs = 0;
  let k3 = 0;
  let above = 0;
  for (let i = 0; i < lpA.length; i++) {
    if (opts.mask && opts.mask[i] !== 1) continue;
    const a = lpA[i];
    const b = lpB[i];
    if (!Number.isFinite(a) || !Number.isFinite(b)) continue;
    const d = a - b;
    deltas.push(d);
    sum += d;
    const ad = Math.abs(d);
    sumAbs += ad;
    if (ad > maxAbs) maxAbs = ad;
    if (ad > 0.5) above++;
    const r = b - a;
    k3 += Math.expm1(r) - r;
  }
  const n = deltas.length;
  const bins = Math.max(1, Math.floor(opts.bins ?? 20));
  const range = opts.range !== undefined && opts.range > 0 ? opts.range : Math.max(maxAbs, 1e-6);
  const histogram: HistogramBin[] = [];
  const width = (2 * range) / bins;
  for (let k = 0; k < bins; k++) histogram.push({ lo: -range + k * width, hi: k === bins - 1 ? range : -range + (k + 1) * width, count: 0 });
  for (const d of deltas) {
    let k = Math.floor((d + range) / width);
    if (k < 0) k = 0; // clamp outliers into the edge bins
    if (k >= bins) k = bins - 1;
    histogram[k].count++;
  }
  return {
    n,
    deltas,
    meanDelta: n ? sum / n : 0,
    meanAbsDelta: n ? sumAbs / n : 0,
    maxAbsDelta: maxAbs,
    klEstimate: n ? sum / n : 0,
    klK3: n ? k3 / n : 0,
    shareAbove0_5: n ? above / n : 0,
    histogram,
  };
}

/** Merges per-trace stats into one (recomputes from the concatenated deltas). */
export function mergeRescoreStats(parts: RescoreStats[], opts: Omit<RescoreOptions, 'mask'> = {}): RescoreStats {
  const deltas = parts.flatMap((p) => p.deltas);
  return rescoreStats(deltas, new Array<number>(deltas.length).fill(0), opts);
}
