// SGLang token mode: native POST /generate with input_ids (its chat endpoint returns no ids); stream
// events carry the cumulative output ids and logprob triples in meta_info.
import type { TokenChunk, TokenRequest, TokenWire } from '../types.js';

interface SglangEvent {
  output_ids?: number[];
  meta_info?: {
    id?: string;
    finish_reason?: { type: string; matched?: number | string | null } | null;
    prompt_tokens?: number;
    completion_tokens?: number;
    output_token_logprobs?: Array<[number | null, number, string | null]>;
  };
}

export const sglangTokenWire: TokenWire = {
  path: '/generate',
  fields: { ids: 'output_ids', logprobs: 'meta_info.output_token_logprobs' },
  body: (r: TokenRequest) => ({
    input_ids: Array.from(r.promptIds),
    sampling_params: {
      max_new_tokens: r.maxTokens,
      ...r.sampler,
      ...(r.seed !== undefined ? { sampling_seed: r.seed } : {}),
      stop_token_ids: r.stopTokenIds,
      skip_special_tokens: false,
    },
    return_logprob: true,
    logprob_start_len: -1,
    return_text_in_logprobs: false,
    stream: true,
    ...(r.dataParallelRank !== undefined ? { data_parallel_rank: r.dataParallelRank } : {}),
  }),
  reader: () => (event) => {
    const ev = event as SglangEvent;
    const meta = ev.meta_info;
    const out: TokenChunk = { responseId: meta?.id };
    if (ev.output_ids) {
      out.ids = ev.output_ids;
      out.cumulative = true;
      out.logprobs = (meta?.output_token_logprobs ?? []).map((t) => t[0] ?? 0);
    }
    if (meta?.prompt_tokens !== undefined && meta.completion_tokens !== undefined) {
      out.usage = { prompt_tokens: meta.prompt_tokens, completion_tokens: meta.completion_tokens, total_tokens: meta.prompt_tokens + meta.completion_tokens };
    }
    const f = meta?.finish_reason;
    if (f) {
      out.finish = f.type === 'length' ? 'length' : f.type === 'abort' ? 'abort' : 'stop';
      out.matched = f.matched ?? null;
    }
    return out;
  },
};
