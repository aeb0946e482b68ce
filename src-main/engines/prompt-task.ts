// One token-mode prompt build (render with the family's format, encode, reuse sampled ids), as run in a
// prompt worker or, where no worker can start, on the calling thread (prompt-pool.ts).
import type { CanonicalRequest } from '../core/types.js';
import { loadTokenFormat } from './token-format.js';
import { buildTokenPrompt, type TokenHistory, type TokenPrompt } from './token-prompt.js';
import type { DeveloperRole, EngineConfig } from './types.js';

export interface PromptTask {
  config: Pick<EngineConfig, 'tokenizer' | 'family'>;
  request: CanonicalRequest;
  /** reusableTurns of the session, most recent first. */
  candidates: TokenHistory;
  developerRole?: DeveloperRole;
}

export async function runPromptTask(task: PromptTask): Promise<TokenPrompt> {
  const fmt = await loadTokenFormat(task.config);
  return buildTokenPrompt(fmt, task.request, task.candidates, task.developerRole);
}
