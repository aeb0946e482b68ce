// vLLM token mode: POST /v1/completions with a token-id prompt and return_token_ids; each stream chunk
// carries the new ids and their logprobs.
import type { TokenChunk, TokenRequest, TokenWire } from '../types.js';

interface CompletionChunk {
  id?: string;
  choices?: Array<{
    token_ids?: number[] | null;
    logprobs?: { token_logprobs?: Array<number | null> } | null;
    finish_reason?: string | null;
    stop_reason?: number | string | null;
  }>;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
}

export const vllmTokenWire: TokenWire = {
  path: '/v1/completions',
  fields: { ids: 'choices[].token_ids', logprobs: 'choices[].logprobs.token_logprobs' },
  body: (r: TokenRequest) => ({
    model: r.model,
    prompt: Array.from(r.promptIds),
    max_tokens: r.maxTokens,
    ...r.sampler,
    ...(r.seed !== undefined ? { seed: r.seed } : {}),
    stop_token_ids: r.stopTokenIds,
    logprobs: 0,
    return_token_ids: true,
    skip_special_tokens: false,
    stream: true,
    stream_options: { include_usage: true },
  }),
  reader: () => (event) => {
    const chunk = event as CompletionChunk;
    const out: TokenChunk = { responseId: chunk.id };
    if (chunk.usage) out.usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) return out;
    if (choice.token_ids) out.ids = choice.token_ids;
    if (choice.logprobs?.token_logprobs) out.logprobs = choice.logprobs.token_logprobs.map((lp) => lp ?? 0);
    if (choice.finish_reason) {
      out.finish = choice.finish_reason === 'length' ? 'length' : choice.finish_reason === 'abort' ? 'abort' : 'stop';
      out.matched = choice.stop_reason ?? null;
    }
    return out;
  },
};
