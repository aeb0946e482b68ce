// Which response the builtin agent's answer came from (the trace that earns the outcome reward, issue 14).
// Taken from the gateway's own record, never from what the agent printed: a shell command the model runs can
// write to the agent's stderr (/proc/$PPID/fd/2) and would pick the trace that gets the reward. The builtin
// agent answers in one conversation and stops at its first turn without tool calls, so its final answer is the
// session's last ok completion (in call order).
import type { CompletionRecord } from '../core/types.js';

export function builtinFinalResponse(
  harness: string, outcome: string, completions: ReadonlyArray<Pick<CompletionRecord, 'id' | 'status'>>,
): { finalResponseId?: string } {
  if (harness !== 'builtin' || outcome !== 'ok') return {};
  for (let i = completions.length - 1; i >= 0; i--) {
    if (completions[i]!.status === 'ok') return { finalResponseId: completions[i]!.id };
  }
  return {};
}
