// SGLang prompt scoring: POST /generate {input_ids, sampling_params: {max_new_tokens: 0}, return_logprob:
// true, logprob_start_len: 0}. `meta_info.input_token_logprobs[j]` = [logprob|null, id, text|null] for
// position j. An engine that refuses max_new_tokens 0 is asked again with 1.
import { badScore } from '../scoring-errors.js';
import type { ScoreWire } from '../types.js';

export function sglangScoreBody(ids: ArrayLike<number>, maxNewTokens: 0 | 1 = 0): Record<string, unknown> {
  return {
    input_ids: Array.from(ids), sampling_params: { max_new_tokens: maxNewTokens, temperature: 0 },
    return_logprob: true, logprob_start_len: 0, stream: false,
  };
}

/** Reads SGLang /generate meta_info.input_token_logprobs (logprob_start_len 0) into per-position logprobs. */
export function parseSglangInputLogprobs(json: unknown, ids: ArrayLike<number>, engineId = 'sglang'): Array<number | null> {
  const item = Array.isArray(json) ? json[0] : json;
  const triples = (item as { meta_info?: { input_token_logprobs?: unknown } } | null)?.meta_info?.input_token_logprobs;
  if (!Array.isArray(triples)) throw badScore(engineId, 'response has no meta_info.input_token_logprobs');
  // Positions start..P-1; with logprob_start_len 0 that is all of them (some versions omit position 0).
  const start = ids.length - triples.length;
  if (start < 0 || start > 1) throw badScore(engineId, `input_token_logprobs has ${triples.length} positions for ${ids.length} ids`);
  const out: Array<number | null> = new Array(ids.length).fill(null);
  for (let j = 0; j < triples.length; j++) {
    const i = start + j;
    const t = triples[j] as [unknown, unknown, unknown?];
    if (!Array.isArray(t)) throw badScore(engineId, `input_token_logprobs[${j}] is not a triple`);
    if (typeof t[1] === 'number' && t[1] !== ids[i]) throw badScore(engineId, `the engine scored token ${t[1]} at position ${i}, expected ${ids[i]}`);
    out[i] = i === 0 || typeof t[0] !== 'number' ? null : t[0];
  }
  return out;
}

export const sglangScoring: ScoreWire = {
  path: '/generate',
  bodies: (_model, ids) => [sglangScoreBody(ids, 0), sglangScoreBody(ids, 1)],
  parse: parseSglangInputLogprobs,
};
