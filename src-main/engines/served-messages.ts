// Canonical messages as an OpenAI-compatible engine accepts them: dialect extras stay in Rollgate.
import type { CanonicalRequest, ChatMessage } from '../core/types.js';
import { DEFAULT_DEVELOPER_ROLE, type DeveloperRole } from './types.js';

export function servedMessage(m: ChatMessage, developerRole: DeveloperRole = DEFAULT_DEVELOPER_ROLE): Record<string, unknown> {
  const { dialect_extras: _extras, reasoning, ...rest } = m;
  if (rest.role === 'developer' && developerRole === 'system') rest.role = 'system';
  return reasoning ? { ...rest, reasoning } : rest;
}

/** vLLM chat mode's sampling fields: the limit, the shared sampler settings, the seed. */
export function samplingFields(req: CanonicalRequest): Record<string, unknown> {
  return {
    ...(req.max_tokens !== undefined ? { max_tokens: req.max_tokens } : {}),
    ...samplerFields(req),
    ...(req.seed !== undefined ? { seed: req.seed } : {}),
  };
}

const SAMPLER_KEYS = ['temperature', 'top_p', 'top_k', 'min_p', 'presence_penalty', 'frequency_penalty', 'repetition_penalty', 'stop'] as const;

/**
 * The sampler settings the agent gave, under the names vLLM's request bodies and SGLang's sampling_params
 * both use (the token limit and the seed are named differently, so callers add those).
 */
export function samplerFields(req: CanonicalRequest): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of SAMPLER_KEYS) if (req[k] !== undefined) out[k] = req[k];
  return out;
}
