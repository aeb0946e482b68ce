// The canonical response an engine result becomes, for every dialect.
import type { CanonicalResponse, FinishReason, Usage } from './types.js';
import type { CollectedMessage } from './delta-collector.js';

export function canonicalResponse(
  meta: { id: string; model: string; created: number },
  message: CollectedMessage,
  finishReason: FinishReason,
  usage: Usage,
  stopSequence: string | null = null,
): CanonicalResponse {
  const toolCalls = message.toolCalls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } }));
  return {
    ...meta,
    message: { role: 'assistant', content: message.content, reasoning: message.reasoning, tool_calls: toolCalls },
    finish_reason: finishReason === 'stop' && toolCalls.length ? 'tool_calls' : finishReason,
    usage,
    stop_sequence: finishReason === 'stop' && !toolCalls.length ? stopSequence : null,
  };
}
