// Usage with the reasoning share filled in, from the sampled ids and the engine tokenizer's think-end token.
import { countReasoningTokens } from '../core/reasoning-tokens.js';
import type { Usage } from '../core/types.js';
import { loadTokenizer } from './tokenizer/index.js';
import type { EngineResult } from './types.js';

const THINK_END = '</think>';
const thinkEndIds = new Map<string, number | undefined>();

async function thinkEndId(tokenizerSpec: string): Promise<number | undefined> {
  if (thinkEndIds.has(tokenizerSpec)) return thinkEndIds.get(tokenizerSpec);
  let id: number | undefined;
  try {
    const ids = (await loadTokenizer(tokenizerSpec)).encode(THINK_END);
    id = ids.length === 1 ? ids[0] : undefined;
  } catch {
    id = undefined; // no usable tokenizer: a think block then counts whole
  }
  thinkEndIds.set(tokenizerSpec, id);
  return id;
}

/** Without a single-token think end in the engine's tokenizer, a reasoning count stays unknown (absent). */
export async function usageWithReasoning(result: EngineResult, tokenizerSpec: string): Promise<Usage> {
  if (!result.reasoning) return { ...result.usage, reasoning_tokens: 0 };
  const id = await thinkEndId(tokenizerSpec);
  return id === undefined ? result.usage : { ...result.usage, reasoning_tokens: countReasoningTokens(result.outputIds, id, true) };
}
