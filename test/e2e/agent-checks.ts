// What every real-agent end-to-end test checks in the session's recorded completions: one record per
// model turn (plus the agent's own side requests), ids present, and the tool call and its result visible
// in the next prompt's ids.
import { expect } from 'vitest';
import { loadTokenizer } from '../../src-main/engines/tokenizer/index.js';
import type { TestApp } from '../helpers/app.js';

export const TASK = 'How many lines are in notes.txt?';
export const NOTES = 'alpha\nbeta\ngamma\n';

export interface AgentTurns {
  all: any[];
  /** The two turns of the task: the shell call, then the answer from its result. */
  call: any;
  answer: any;
  /** Requests that are not the task's turns (titles, routers, memory extraction). */
  side: any[];
  callPrompt: string;
  answerPrompt: string;
}

/**
 * Finds the task's turns among the session's completions and checks them. `shellTool` is the name the
 * agent gave its shell tool.
 */
export async function checkAgentTurns(app: TestApp, sessionId: string, shellTool: string, opts: { tokenMode?: boolean } = {}): Promise<AgentTurns> {
  const tok = await loadTokenizer();
  const { completions } = await app.api(`/api/sessions/${sessionId}/completions`);
  const all = completions as any[];
  const summary = all.map((c) => `#${c.seq} ${c.status} ${c.dialect} calls=${c.response?.message.tool_calls.map((t: any) => t.function.name).join(',')} ${c.error ?? ''}`).join('\n');
  expect(all.length, summary).toBeGreaterThanOrEqual(2);
  for (const c of all) {
    expect(c.status, summary).toBe('ok');
    expect(c.id).toBeTruthy();
    expect(c.promptIds.length).toBeGreaterThan(0);
    expect(c.outputIds.length).toBeGreaterThan(0);
    expect(c.outputLogprobs).toHaveLength(c.outputIds.length);
    expect(c.outputIds.at(-1)).toBe(tok.eosTokenId);
    expect(c.retryOf, 'no SDK retries expected in a clean run').toBeNull();
  }
  const decoded = new Map(all.map((c) => [c.id, tok.decode(c.promptIds)]));
  // The task's turns: prompts that carry the task and offer the shell tool.
  const offersShell = (c: any) => (c.requestServed?.tools ?? []).some((t: any) => t.function?.name === shellTool)
    || decoded.get(c.id)!.includes(`"name": "${shellTool}"`);
  const turns = all.filter((c) => decoded.get(c.id)!.includes(TASK) && offersShell(c));
  const calls = turns.filter((c) => c.response.message.tool_calls.length > 0);
  expect(calls, summary).toHaveLength(1);
  const call = calls[0];
  expect(call.response.message.tool_calls).toHaveLength(1);
  expect(call.response.message.tool_calls[0].function.name).toBe(shellTool);
  expect(call.finishReason).toBe('tool_calls');
  const later = turns.filter((c) => c.seq > call.seq);
  // One record per model turn: the answer turn comes once, right after the call in the task's chain.
  expect(later, summary).toHaveLength(1);
  const answer = later[0];
  expect(answer.response.message.tool_calls).toHaveLength(0);
  expect(answer.response.message.content).toContain('3');
  expect(turns.filter((c) => c.seq < call.seq), summary).toHaveLength(0);

  const callPrompt = decoded.get(call.id)!;
  const answerPrompt = decoded.get(answer.id)!;
  expect(callPrompt).not.toContain('<tool_response>');
  // The call (as the model wrote it) and the tool's output are in the next prompt's ids.
  expect(answerPrompt).toContain('<tool_call>');
  expect(answerPrompt).toContain(`"name": "${shellTool}"`);
  const results = [...answerPrompt.matchAll(/<tool_response>\n?([\s\S]*?)\n?<\/tool_response>/g)].map((m) => m[1]!);
  expect(results, answerPrompt.slice(-2000)).toHaveLength(1);
  // The count itself on a line of its own (`3`, `3 notes.txt`, Gemini's `Output: 3`, Codex's `Output:\n3`).
  expect(results[0]).toMatch(/(^|\n)(Output:\s*)?3( notes\.txt)?[ \t]*(\n|$)/);
  expect(tok.decode(call.outputIds)).toContain('<tool_call>');
  if (opts.tokenMode) {
    // Token mode reuses the sampled ids verbatim: the answer's prompt extends the call's prompt + output.
    expect(answer.promptIds.slice(0, call.promptIds.length + call.outputIds.length)).toEqual([...call.promptIds, ...call.outputIds]);
  }
  const side = all.filter((c) => c !== call && c !== answer);
  return { all, call, answer, side, callPrompt, answerPrompt };
}
