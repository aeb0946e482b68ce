// One completion from the policy, as token ids: output ids = encode(text) + [the family's end token], cut
// by max tokens or a stop string the way an engine would. Logprobs are not stored: they are a pure
// function (logprobs.ts).
import type { TokenFormat } from '../token-format.js';
import type { ChatTokenizer } from '../tokenizer/index.js';
import { decide, type PolicyInput } from './policy.js';
import { unit } from './rng.js';

export interface SampleRequest {
  promptIds: number[];
  /** Max new tokens (already resolved against the context length). */
  maxTokens: number;
  stop?: string[];
  variant: number;
  jsonSchema?: PolicyInput['jsonSchema'];
  toolChoice?: unknown;
  nonCanonicalRate?: number;
}

export interface Sampled {
  ids: number[];
  finish: 'stop' | 'length';
  /** The stop token id (EOS or the family's turn end), stop string, or null (length). */
  matched: number | string | null;
  promptText: string;
}

export function sample(fmt: TokenFormat, seed: number, skill: number, req: SampleRequest): Sampled {
  const { tok } = fmt;
  const promptText = tok.decode(req.promptIds);
  const { text, end } = decide({ promptText, seed, skill, variant: req.variant, jsonSchema: req.jsonSchema, toolChoice: req.toolChoice, family: fmt.family });
  const endId = (end !== null ? tok.singleTokenId(end) : undefined) ?? tok.eosTokenId;
  let ids = [...splitSomeTokens(tok, tok.encode(text), req.nonCanonicalRate ?? 0, seed, req.variant), endId];
  let finish: Sampled['finish'] = 'stop';
  let matched: Sampled['matched'] = endId;
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

/** Replaces some tokens by two shorter ones with the same text (deterministic per seed and position). */
function splitSomeTokens(tok: ChatTokenizer, ids: number[], rate: number, seed: number, variant: number): number[] {
  if (rate <= 0) return ids;
  const out: number[] = [];
  ids.forEach((id, i) => {
    const text = tok.isSpecial(id) ? '' : tok.tokenText(id);
    if (text.length >= 2 && !text.includes('\uFFFD') && unit('split', seed, variant, i, id) < rate) {
      const cut = Math.floor(text.length / 2);
      const parts = [...tok.encode(text.slice(0, cut)), ...tok.encode(text.slice(cut))];
      if (parts.length > 1 && tok.decode(parts) === text) { out.push(...parts); return; }
    }
    out.push(id);
  });
  return out;
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
