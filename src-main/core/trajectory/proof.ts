// Independent checker for a built trace: recomputes every turn boundary from the completion records.
import type { Trace, TrajectoryInput } from './types.js';

export interface ProofCheck {
  ok: boolean;
  error?: string;
}

/**
 * Checks a trace against its completions: array lengths agree; turn k's engine prompt equals
 * full[0:promptLength] (full = promptIds ++ responseIds); its sampled ids follow with mask 1 and their
 * real logprobs; every other response position has mask 0 and logprob 0.
 */
export function verifyTrace(trace: Trace, byId: ReadonlyMap<string, TrajectoryInput>): ProofCheck {
  const fail = (error: string): ProofCheck => ({ ok: false, error });
  const P = trace.promptIds.length;
  const R = trace.responseIds.length;
  if (trace.lossMask.length !== R || trace.responseLogprobs.length !== R) return fail('array lengths differ');
  if (trace.proof.turns.length !== trace.completionIds.length) return fail('proof turns differ from completionIds');
  if (trace.policyVersions.length !== trace.completionIds.length) return fail('policyVersions not aligned');
  const at = (i: number): number => (i < P ? trace.promptIds[i] : trace.responseIds[i - P]);
  const covered = new Uint8Array(R);
  let end = 0;
  for (let k = 0; k < trace.proof.turns.length; k++) {
    const turn = trace.proof.turns[k];
    if (turn.completionId !== trace.completionIds[k]) return fail(`turn ${k}: id mismatch`);
    const c = byId.get(turn.completionId);
    if (!c) return fail(`turn ${k}: unknown completion ${turn.completionId}`);
    if (c.status !== 'ok') return fail(`turn ${k}: completion ${c.id} is ${c.status}`);
    if (k === 0 && turn.promptLength !== P) return fail('first turn prompt length differs from promptIds');
    if (turn.promptLength < end) return fail(`turn ${k}: prompt shorter than the previous turn's end`);
    if (turn.promptLength !== c.promptIds.length) return fail(`turn ${k}: prompt length differs from the engine's`);
    for (let i = 0; i < c.promptIds.length; i++) {
      if (at(i) !== c.promptIds[i]) return fail(`turn ${k}: prompt differs at ${i}`);
    }
    if (turn.outputLength !== c.outputIds.length) return fail(`turn ${k}: output length differs`);
    for (let j = 0; j < c.outputIds.length; j++) {
      const pos = turn.promptLength + j - P;
      if (pos < 0 || pos >= R) return fail(`turn ${k}: output out of range`);
      if (trace.responseIds[pos] !== c.outputIds[j]) return fail(`turn ${k}: output id differs at ${j}`);
      if (trace.lossMask[pos] !== 1) return fail(`turn ${k}: sampled token ${j} not mask 1`);
      if (!Object.is(trace.responseLogprobs[pos], c.outputLogprobs[j])) return fail(`turn ${k}: logprob differs at ${j}`);
      covered[pos] = 1;
    }
    end = turn.promptLength + turn.outputLength;
  }
  if (end !== P + R) return fail('trace does not end with the last turn');
  for (let i = 0; i < R; i++) {
    if (!covered[i] && (trace.lossMask[i] !== 0 || trace.responseLogprobs[i] !== 0)) {
      return fail(`interstitial position ${i} has mask ${trace.lossMask[i]} / logprob ${trace.responseLogprobs[i]}`);
    }
  }
  return { ok: true };
}
