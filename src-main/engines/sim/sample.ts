// One completion from the policy, as token ids: output ids = encode(text) + [eos], cut by max tokens or a
// stop string the way an engine would. Logprobs are not stored: they are a pure function (logprobs.ts).
import type { ChatTokenizer } from '../tokenizer/index.js';
import { decide, type PolicyInput } from './policy.js';

export interface SampleRequest {
  promptIds: number[];
  /** Max new tokens (already resolved against the context length). */
  maxTokens: number;
  stop?: string[];
  variant: number;
  jsonSchema?: PolicyInput['jsonSchema'];
  toolChoice?: unknown;
}

export interface Sampled {
  ids: number[];
  finish: 'stop' | 'length';
  /** EOS / stop token id, stop string, or null (length). */
  matched: number | string | null;
  promptText: string;
}

export function sample(tok: ChatTokenizer, seed: number, skill: number, req: SampleRequest): Sampled {
  const promptText = tok.decode(req.promptIds);
  const { text } = decide({ promptText, seed, skill, variant: req.variant, jsonSchema: req.jsonSchema, toolChoice: req.toolChoice });
  let ids = [...tok.encode(text), tok.eosTokenId];
  let finish: Sampled['finish'] = 'stop';
  let matched: Sampled['matched'] = tok.eosTokenId;
  for (const s of req.stop ?? []) {
    const at = s ? text.indexOf(s) : -1;
    if (at >= 0) {
      // The engine stops at the token that completes the stop string; the string itself is trimmed from text.
      ids = tok.encode(text.slice(0, at + s.length));
      matched = s;
      break;
    }
  }
  if (ids.length > req.maxTokens) {
    ids = ids.slice(0, Math.max(0, req.maxTokens));
    finish = 'length';
    matched = null;
  }
  return { ids, finish, matched, promptText };
}

/**
 * Incremental detokenizer: text deltas as ids arrive, holding back an incomplete UTF-8 sequence (U+FFFD)
 * and, when a stop string was matched, the stop string itself.
 */
export function createDetokenizer(tok: ChatTokenizer, skipSpecialTokens: boolean, trimSuffix?: string) {
  const ids: number[] = [];
  let emitted = 0;
  return {
    push(id: number, last: boolean): string {
      ids.push(id);
      let text = tok.decode(ids, { skipSpecialTokens });
      if (last && trimSuffix && text.endsWith(trimSuffix)) text = text.slice(0, -trimSuffix.length);
      if (!last && text.endsWith('\uFFFD')) return '';
      const delta = text.slice(emitted);
      emitted = text.length;
      return delta;
    },
  };
}
