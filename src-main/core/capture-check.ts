// Custody (DESIGN §3, §9): is an engine's report a faithful capture? Ids are the training data, so an
// answer without them, or with logprobs that do not line up, is recorded `incomplete`, never `ok`.
import type { AssistantMessage, IncompleteReason, TokenCapture } from './types.js';

export function captureProblem(c: TokenCapture, answer: AssistantMessage): { reason: Exclude<IncompleteReason, 'lost-in-crash' | 'engine-error-mid-stream'>; message: string } | null {
  if (c.promptIds.length === 0) return { reason: 'missing-ids', message: 'the engine reported no prompt ids' };
  const said = !!(answer.content || answer.reasoning || answer.tool_calls.length);
  if (c.outputIds.length === 0 && said) return { reason: 'missing-ids', message: 'the engine answered but reported no output ids' };
  if (c.outputLogprobs.length !== c.outputIds.length) {
    return { reason: 'logprob-count', message: `the engine reported ${c.outputIds.length} output ids but ${c.outputLogprobs.length} logprobs` };
  }
  return null;
}
