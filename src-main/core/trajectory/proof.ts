// Independent checker for a built trace: recomputes every turn boundary from the completion records.
import type { RerenderedSpan, Trace, TrajectoryInput } from './types.js';

export interface ProofCheck {
  ok: boolean;
  error?: string;
}

/**
 * Checks a trace against its completions: array lengths agree; turn k's engine prompt equals
 * full[0:promptLength] (full = promptIds ++ responseIds) with the trace's first `rerendered` spans in
 * their served form; its sampled ids follow with mask 1 and their real logprobs; every other response
 * position has mask 0 and logprob 0. Each re-rendered span must cover sampled ids of an earlier turn and,
 * given `tokenText`, differ from its served form only in whitespace.
 */
export function verifyTrace(trace: Trace, byId: ReadonlyMap<string, TrajectoryInput>, tokenText?: (id: number) => string): ProofCheck {
  const fail = (error: string): ProofCheck => ({ ok: false, error });
  const P = trace.promptIds.length;
  const R = trace.responseIds.length;
  const spans = trace.rerendered ?? [];
  if (trace.lossMask.length !== R || trace.responseLogprobs.length !== R) return fail('array lengths differ');
  if (trace.proof.turns.length !== trace.completionIds.length) return fail('proof turns differ from completionIds');
  if (trace.policyVersions.length !== trace.completionIds.length) return fail('policyVersions not aligned');
  const at = (i: number): number => (i < P ? trace.promptIds[i] : trace.responseIds[i - P]);
  for (let s = 0; s < spans.length; s++) {
    const span = spans[s];
    if (s > 0 && span.at < spans[s - 1].at + spans[s - 1].sampled.length) return fail(`re-rendered span ${s} overlaps the previous one`);
    for (let k = 0; k < span.sampled.length; k++) {
      const i = span.at + k;
      if (i < P || at(i) !== span.sampled[k] || trace.lossMask[i - P] !== 1) return fail(`re-rendered span ${s} is not sampled ids of the trace`);
    }
    if (tokenText && strip(span.sampled, tokenText) !== strip(span.served, tokenText)) return fail(`re-rendered span ${s} differs in more than whitespace`);
  }
  const covered = new Uint8Array(R);
  let end = 0;
  for (let k = 0; k < trace.proof.turns.length; k++) {
    const turn = trace.proof.turns[k];
    if (turn.completionId !== trace.completionIds[k]) return fail(`turn ${k}: id mismatch`);
    const c = byId.get(turn.completionId);
    if (!c) return fail(`turn ${k}: unknown completion ${turn.completionId}`);
    if (c.status !== 'ok') return fail(`turn ${k}: completion ${c.id} is ${c.status}`);
    const nSpans = turn.rerendered ?? 0;
    if (nSpans > spans.length) return fail(`turn ${k}: more re-rendered spans than the trace has`);
    const served = servedView(at, spans, nSpans);
    const start = turn.promptLength - served.shift;
    if ((turn.outputStart ?? turn.promptLength) !== start) return fail(`turn ${k}: outputStart differs from the spans' shift`);
    if (k === 0 && (nSpans !== 0 || turn.promptLength !== P)) return fail('first turn prompt length differs from promptIds');
    if (start < end) return fail(`turn ${k}: prompt shorter than the previous turn's end`);
    if (nSpans > 0 && spans[nSpans - 1].at + spans[nSpans - 1].sampled.length > end) return fail(`turn ${k}: a re-rendered span lies beyond the previous turns`);
    if (turn.promptLength !== c.promptIds.length) return fail(`turn ${k}: prompt length differs from the engine's`);
    for (let i = 0; i < c.promptIds.length; i++) {
      if (served.at(i) !== c.promptIds[i]) return fail(`turn ${k}: prompt differs at ${i}`);
    }
    if (turn.outputLength !== c.outputIds.length) return fail(`turn ${k}: output length differs`);
    for (let j = 0; j < c.outputIds.length; j++) {
      const pos = start + j - P;
      if (pos < 0 || pos >= R) return fail(`turn ${k}: output out of range`);
      if (trace.responseIds[pos] !== c.outputIds[j]) return fail(`turn ${k}: output id differs at ${j}`);
      if (trace.lossMask[pos] !== 1) return fail(`turn ${k}: sampled token ${j} not mask 1`);
      if (!Object.is(trace.responseLogprobs[pos], c.outputLogprobs[j])) return fail(`turn ${k}: logprob differs at ${j}`);
      covered[pos] = 1;
    }
    end = start + turn.outputLength;
  }
  if (end !== P + R) return fail('trace does not end with the last turn');
  for (let i = 0; i < R; i++) {
    if (!covered[i] && (trace.lossMask[i] !== 0 || trace.responseLogprobs[i] !== 0)) {
      return fail(`interstitial position ${i} has mask ${trace.lossMask[i]} / logprob ${trace.responseLogprobs[i]}`);
    }
  }
  return { ok: true };
}

function strip(ids: readonly number[], tokenText: (id: number) => string): string {
  return ids.map(tokenText).join('').replace(/\s+/g, '');
}

/**
 * The engine's view of the trace's full sequence with its first `n` spans served: `at(i)` for engine
 * positions read in increasing order (one pass per turn), `shift` how many more ids the engine had.
 */
function servedView(full: (i: number) => number, spans: readonly RerenderedSpan[], n: number): { at: (i: number) => number; shift: number } {
  let shift = 0;
  for (let s = 0; s < n; s++) shift += spans[s].served.length - spans[s].sampled.length;
  if (n === 0) return { at: full, shift };
  // engine position → (span, offset) or trace position; spans are ordered and disjoint
  let s = 0;
  let before = 0; // surplus of the spans before s
  return {
    shift,
    at: (i: number): number => {
      while (s < n && i >= spans[s].at + before + spans[s].served.length) {
        before += spans[s].served.length - spans[s].sampled.length;
        s++;
      }
      if (s < n && i >= spans[s].at + before) return spans[s].served[i - spans[s].at - before];
      return full(i - before);
    },
  };
}
