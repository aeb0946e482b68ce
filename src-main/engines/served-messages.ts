// Canonical messages as an OpenAI-compatible engine accepts them: dialect extras stay in Rollgate.
import type { CanonicalRequest, ChatMessage } from '../core/types.js';
import { DEFAULT_DEVELOPER_ROLE, type DeveloperRole } from './types.js';

export function servedMessage(m: ChatMessage, developerRole: DeveloperRole = DEFAULT_DEVELOPER_ROLE): Record<string, unknown> {
  const { dialect_extras: _extras, reasoning, ...rest } = m;
  if (rest.role === 'developer' && developerRole === 'system') rest.role = 'system';
  return reasoning ? { ...rest, reasoning } : rest;
}

/** Sampling fields shared by every OpenAI-compatible engine body. */
export function samplingFields(req: CanonicalRequest): Record<string, unknown> {
  return {
    ...(req.max_tokens !== undefined ? { max_tokens: req.max_tokens } : {}),
    ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
    ...(req.top_p !== undefined ? { top_p: req.top_p } : {}),
    ...(req.top_k !== undefined ? { top_k: req.top_k } : {}),
    ...penaltyFields(req),
    ...(req.stop ? { stop: req.stop } : {}),
    ...(req.seed !== undefined ? { seed: req.seed } : {}),
  };
}

/** min_p and the penalties: the same names in vLLM's request bodies and SGLang's sampling_params. */
export function penaltyFields(req: CanonicalRequest): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of ['min_p', 'presence_penalty', 'frequency_penalty', 'repetition_penalty'] as const) {
    if (req[k] !== undefined) out[k] = req[k];
  }
  return out;
}
