// Qwen3 (and Qwen2.5-style hermes templates): ChatML turns, `<think>` reasoning, `<tool_call>{json}</tool_call>`.
import { readChatml, readJsonToolLines } from '../chatml-view.js';
import { pyJsonDumps } from '../py-json.js';
import { createTaggedParser } from '../tagged-parser.js';
import type { ModelFamily, PromptView, SampledTurn } from '../types.js';
import { QWEN3_FORMAT, THINK_END, THINK_START } from './output-parser.js';

/** Reasoning as the model writes it for each way the prompt opens the turn. */
export function thinkPrefix(reasoning: string | null | undefined, view: PromptView): string {
  if (view.generation === 'no-think' || view.generation === 'none' || reasoning == null) return '';
  if (view.generation === 'in-think') return `${reasoning}\n${THINK_END}\n\n`;
  return `${THINK_START}\n${reasoning}\n${THINK_END}\n\n`;
}

export function formatQwen3Turn(turn: SampledTurn): string {
  const calls = (turn.toolCalls ?? []).map((c) => `<tool_call>\n${pyJsonDumps({ name: c.name, arguments: c.arguments })}\n</tool_call>`);
  return [turn.content ?? '', ...calls].filter(Boolean).join('\n');
}

export const qwen3: ModelFamily = {
  name: 'qwen3',
  description: 'Qwen3 / Qwen2.5: ChatML, <think> reasoning, hermes <tool_call>{json}</tool_call>',
  stopTokens: ['<|im_end|>'],
  requiredTokens: ['<|im_start|>', '<|im_end|>', '<tool_call>', '</tool_call>'],
  defaultTokenizer: 'builtin:qwen3',
  rerenderedEnd: (end) => end,
  reasoningDropped: 'the template keeps reasoning_content only for assistant turns after the last user message',
  detect: ({ templateSource, hasToken }) => hasToken('<|im_start|>') && hasToken('<tool_call>') && !(templateSource ?? '').includes('<function='),
  createParser: (opts) => createTaggedParser(QWEN3_FORMAT, opts),
  formatTurn: (turn, view) => ({ text: thinkPrefix(turn.reasoning, view) + formatQwen3Turn(turn), end: '<|im_end|>' }),
  readPrompt: (text) => readChatml(text, (system) => readJsonToolLines(system, '# Tools')),
};
