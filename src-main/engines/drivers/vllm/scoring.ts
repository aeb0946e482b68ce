// vLLM prompt scoring: POST /v1/completions {prompt: ids, max_tokens: 1, prompt_logprobs: 0,
// return_token_ids: true}. `choices[0].prompt_logprobs[i]` is null at 0, else {"<id>": {logprob, rank,
// decoded_token}}; with prompt_logprobs 0 it holds the prompt token itself. (vLLM needs max_tokens ≥ 1; the
// one sampled token is ignored.)
import { badScore, sameIds } from '../scoring-errors.js';
import type { ScoreWire } from '../types.js';

export function vllmScoreBody(model: string, ids: ArrayLike<number>): Record<string, unknown> {
  return {
    model, prompt: Array.from(ids), max_tokens: 1, temperature: 0, prompt_logprobs: 0, return_token_ids: true, stream: false,
  };
}

/** Reads vLLM /v1/completions prompt_logprobs into per-position logprobs of `ids`. */
export function parseVllmPromptLogprobs(json: unknown, ids: ArrayLike<number>, engineId = 'vllm'): Array<number | null> {
  const choice = (json as { choices?: Array<Record<string, unknown>> } | null)?.choices?.[0];
  if (!choice) throw badScore(engineId, 'response has no choices');
  if (choice.prompt_token_ids != null && !sameIds(choice.prompt_token_ids, ids)) {
    throw badScore(engineId, 'the engine changed the prompt ids (prompt_token_ids differ from the ids sent)');
  }
  const pl = choice.prompt_logprobs;
  if (!Array.isArray(pl)) throw badScore(engineId, 'response has no prompt_logprobs (is this vLLM ≥ 0.4 with a token-id prompt?)');
  if (pl.length !== ids.length) throw badScore(engineId, `prompt_logprobs has ${pl.length} positions for ${ids.length} ids`);
  const out: Array<number | null> = new Array(ids.length);
  for (let i = 0; i < ids.length; i++) {
    const entry = pl[i] as Record<string, { logprob?: unknown }> | null;
    if (i === 0 || entry == null) {
      out[i] = null;
      continue;
    }
    const lp = entry[String(ids[i])]?.logprob;
    if (typeof lp !== 'number') throw badScore(engineId, `prompt_logprobs[${i}] lacks token ${ids[i]}`);
    out[i] = lp;
  }
  return out;
}

export const vllmScoring: ScoreWire = {
  path: '/v1/completions',
  bodies: (model, ids) => [vllmScoreBody(model, ids)],
  parse: parseVllmPromptLogprobs,
};
