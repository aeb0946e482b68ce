// Deterministic "model" logprobs. Pure in (flavour, previous id, absolute position, token id, seed), so
// re-scoring a sampled sequence as a prompt on the same flavour reproduces the sampled values exactly,
// and the other flavour differs slightly (like two kernels computing the same model).
import { hash32, unit } from './rng.js';

export type Flavor = 'vllm' | 'sglang';

const MIN = 0.001;
const MAX = 2.5;

export function tokenLogprob(flavor: Flavor, prevId: number, position: number, tokenId: number, seed: number): number {
  const u = unit('lp', seed, prevId, position, tokenId);
  // Skewed toward confident tokens, log-uniform-ish between -MIN and -MAX.
  const base = -MIN * Math.exp(u * u * Math.log(MAX / MIN));
  if (flavor === 'vllm') return round(base);
  const v = unit('sg', seed, prevId, position, tokenId);
  return round(Math.min(-0.0001, base * Math.exp((v - 0.5) * 0.3)));
}

function round(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}

export interface Alt { id: number; logprob: number }

/**
 * The sampled token first (vLLM builds its top-k that way), then k-1 plausible alternatives with lower
 * logprobs. Alternative ids are ordinary vocabulary ids, distinct from the sampled one.
 */
export function topAlternatives(
  flavor: Flavor, prevId: number, position: number, tokenId: number, seed: number, k: number,
): Alt[] {
  if (k <= 0) return [];
  const lp = tokenLogprob(flavor, prevId, position, tokenId, seed);
  const out: Alt[] = [{ id: tokenId, logprob: lp }];
  const seen = new Set([tokenId]);
  for (let j = 1; out.length < k && j < k + 16; j++) {
    const id = 1 + (hash32('alt', seed, prevId, position, tokenId, j) % 150000);
    if (seen.has(id)) continue;
    seen.add(id);
    const gap = 0.5 + j * 1.5 + unit('gap', flavor, seed, position, id) * 2;
    out.push({ id, logprob: round(lp - gap) });
  }
  return out;
}

/** Logprobs of `ids[i]` given `ids[i-1]` at absolute position `offset + i`; position 0 has none (null). */
export function sequenceLogprobs(flavor: Flavor, ids: ArrayLike<number>, seed: number, from = 0): Array<number | null> {
  const out: Array<number | null> = [];
  for (let i = from; i < ids.length; i++) out.push(i === 0 ? null : tokenLogprob(flavor, ids[i - 1], i, ids[i], seed));
  return out;
}
