// Lines a re-scoring engine's per-position logprobs up with a trace's sampled logprobs (DESIGN §8).
import { rescoreStats, type RescoreOptions, type RescoreStats } from './rescore-stats.js';
import type { Trace } from './types.js';

/** The token sequence a re-scoring engine is asked to score: the trace's first prompt, then its response. */
export function traceSequence(trace: Pick<Trace, 'promptIds' | 'responseIds'>): number[] {
  return [...trace.promptIds, ...trace.responseIds];
}

export interface RescoreAlignment {
  /** Indices into responseIds of mask-1 tokens with a finite logprob on both sides. */
  positions: number[];
  /** The trace's logprobs (the sampler, A) at those positions. */
  sampled: number[];
  /** The re-scorer's logprobs (B) at those positions. */
  rescored: number[];
  /** Mask-1 tokens dropped because either side was missing or not finite. */
  dropped: number;
}

/**
 * `scored[i]` = logprob of token i of traceSequence(trace) under the re-scorer (null at 0 or when absent).
 * Only mask-1 (sampled) positions count; interstitial tokens are never compared.
 */
export function alignRescore(
  trace: Pick<Trace, 'promptIds' | 'responseIds' | 'lossMask' | 'responseLogprobs'>, scored: ArrayLike<number | null>,
): RescoreAlignment {
  const P = trace.promptIds.length;
  const n = trace.responseIds.length;
  if (scored.length !== P + n) throw new RangeError(`re-scored ${scored.length} positions, the trace has ${P + n}`);
  if (trace.lossMask.length !== n || trace.responseLogprobs.length !== n) throw new RangeError('trace lengths disagree');
  const out: RescoreAlignment = { positions: [], sampled: [], rescored: [], dropped: 0 };
  for (let i = 0; i < n; i++) {
    if (trace.lossMask[i] !== 1) continue;
    const a = trace.responseLogprobs[i];
    const b = scored[P + i];
    if (b === null || b === undefined || !Number.isFinite(a) || !Number.isFinite(b)) {
      out.dropped++;
      continue;
    }
    out.positions.push(i);
    out.sampled.push(a);
    out.rescored.push(b);
  }
  return out;
}

/** alignRescore + rescoreStats: deltas are aligned with `positions`. */
export function rescoreTrace(
  trace: Pick<Trace, 'promptIds' | 'responseIds' | 'lossMask' | 'responseLogprobs'>, scored: ArrayLike<number | null>,
  opts: Omit<RescoreOptions, 'mask'> = {},
): RescoreAlignment & { stats: RescoreStats } {
  const al = alignRescore(trace, scored);
  return { ...al, stats: rescoreStats(al.sampled, al.rescored, opts) };
}
