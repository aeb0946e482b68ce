// OpenAI-style logprob entries (chat `logprobs.content[]`, legacy completions, vLLM prompt_logprobs).
import type { ChatTokenizer } from '../tokenizer/index.js';
import { topAlternatives, type Flavor } from './logprobs.js';
import { utf8Bytes } from './http.js';

export interface LogprobCtx { tok: ChatTokenizer; flavor: Flavor; seed: number }

/** vLLM order is token, logprob, bytes; SGLang's is token, bytes, logprob. */
export function chatLogprobEntry(
  c: LogprobCtx, prevId: number, position: number, id: number, topK: number, asTokenIds = false,
): Record<string, unknown> {
  const name = (t: number) => (asTokenIds ? `token_id:${t}` : c.tok.tokenText(t));
  const entry = (t: number, lp: number) => c.flavor === 'vllm'
    ? { token: name(t), logprob: lp, bytes: utf8Bytes(c.tok.tokenText(t)) }
    : { token: name(t), bytes: utf8Bytes(c.tok.tokenText(t)), logprob: lp };
  const alts = topAlternatives(c.flavor, prevId, position, id, c.seed, Math.max(1, topK));
  let top = topK > 0 ? alts.map((a) => entry(a.id, a.logprob)) : [];
  if (c.flavor === 'sglang') {
    // SGLang builds top_logprobs from a dict keyed by text, so equal texts collapse.
    const seen = new Set<string>();
    top = top.filter((e) => !seen.has(e.token) && (seen.add(e.token), true));
  }
  return { ...entry(id, alts[0].logprob), top_logprobs: top };
}

/** vLLM prompt_logprobs: null for position 0, else {"<id>": {logprob, rank, decoded_token}} per position. */
export function vllmPromptLogprobs(c: LogprobCtx, ids: number[], topK: number): Array<Record<string, unknown> | null> {
  return ids.map((id, i) => {
    if (i === 0) return null;
    const out: Record<string, unknown> = {};
    topAlternatives(c.flavor, ids[i - 1], i, id, c.seed, Math.max(1, topK)).forEach((a, rank) => {
      out[String(a.id)] = { logprob: a.logprob, rank: rank + 1, decoded_token: c.tok.tokenText(a.id) };
    });
    return out;
  });
}
