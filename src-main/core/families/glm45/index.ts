// GLM-4.5 / 4.6: `[gMASK]<sop>`, role tokens (<|system|> <|user|> <|assistant|> <|observation|>), `<think>`
// reasoning, tool calls `<tool_call>NAME\n<arg_key>K</arg_key>\n<arg_value>V</arg_value>\n</tool_call>`
// with values typed by the tool's schema (vLLM's glm45 parser). A turn ends on the next role token the
// model samples (<|observation|> after a call, <|user|> after an answer), which the template re-renders as is.
import type { FunctionTool } from '../../types.js';
import { readJsonToolLines } from '../chatml-view.js';
import { createTaggedParser, type TaggedFormat } from '../tagged-parser.js';
import { argumentsJson, bareValue, paramSchema, typedValue } from '../typed-args.js';
import type { ModelFamily, PromptTurn, PromptView, SampledTurn } from '../types.js';

const ROLES = ['<|system|>', '<|user|>', '<|assistant|>', '<|observation|>'];

export function parseGlmCall(body: string, tools: readonly FunctionTool[]): { name: string; arguments: string } | null {
  const cut = body.search(/\n|<arg_key>/);
  const name = (cut < 0 ? body : body.slice(0, cut)).trim();
  if (!name || /[<>\s]/.test(name)) return null;
  const params: Array<[string, unknown]> = [];
  for (const m of body.matchAll(/<arg_key>([\s\S]*?)<\/arg_key>\s*<arg_value>([\s\S]*?)<\/arg_value>/g)) {
    const key = m[1]!.trim();
    params.push([key, typedValue(m[2]!, paramSchema(tools, name, key))]);
  }
  return { name, arguments: argumentsJson(params) };
}

export const GLM45_FORMAT: TaggedFormat = {
  think: { start: '<think>', end: '</think>' },
  toolStarts: ['<tool_call>'],
  toolEnds: ['</tool_call>'],
  parseToolBody: parseGlmCall,
  requireClose: true,
  trimBeforeCall: true,
};

function formatCall(c: { name: string; arguments: Record<string, unknown> }): string {
  const args = Object.entries(c.arguments).map(([k, v]) => `<arg_key>${k}</arg_key>\n<arg_value>${bareValue(v)}</arg_value>\n`).join('');
  return `<tool_call>${c.name}\n${args}</tool_call>`;
}

function formatGlmTurn(turn: SampledTurn, view: PromptView): string {
  const think = view.generation === 'no-think' || turn.reasoning == null ? '' : `<think>${turn.reasoning}</think>`;
  const body = [turn.content ? turn.content : '', ...(turn.toolCalls ?? []).map(formatCall)].filter(Boolean).join('\n');
  // GLM starts every turn on a new line after <|assistant|>, as its template renders earlier turns.
  return think ? `\n${think}\n${body}` : `\n${body}`;
}

/** Turns between role tokens; tools from the first system turn; tool results from <|observation|> turns. */
export function readGlmPrompt(text: string): PromptView {
  const parts = text.split(/(<\|system\|>|<\|user\|>|<\|assistant\|>|<\|observation\|>)/);
  const preamble = parts[0]!;
  if (parts.length === 1) return { turns: [], tools: [], generation: 'none', preamble };
  const turns: PromptTurn[] = [];
  let tools: PromptView['tools'] = [];
  let generation: PromptView['generation'] = 'none';
  for (let i = 1; i < parts.length; i += 2) {
    const role = parts[i]!.slice(2, -2);
    const body = (parts[i + 1] ?? '').replace(/^\n/, '');
    const last = i + 2 >= parts.length;
    if (role === 'assistant' && last) {
      generation = /^<think>\s*<\/think>/.test(body) || /\/nothink\s*$/.test(turns.at(-1)?.content ?? '') ? 'no-think' : 'free';
      break;
    }
    if (role === 'system' && !tools.length) {
      const read = readJsonToolLines(body, '# Tools');
      if (read?.tools.length) {
        tools = read.tools;
        if (read.rest) turns.push({ role, content: read.rest });
        continue;
      }
    }
    if (role === 'observation') {
      for (const m of body.matchAll(/<tool_response>\n?([\s\S]*?)\n?<\/tool_response>/g)) turns.push({ role: 'tool', content: m[1]! });
      continue;
    }
    turns.push({ role, content: body.replace(/\/nothink$/, '').trim() });
  }
  return { turns, tools, generation, preamble };
}

export const glm45: ModelFamily = {
  name: 'glm45',
  description: 'GLM-4.5/4.6: role tokens, <think> reasoning, <tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>',
  stopTokens: ['<|user|>', '<|observation|>', '<|endoftext|>'],
  requiredTokens: [...ROLES, '<tool_call>', '</tool_call>', '<arg_key>', '<arg_value>'],
  defaultTokenizer: 'builtin:glm45-standin',
  rerenderedEnd: (end) => end,
  reasoningDropped: 'the template renders an empty <think></think> for assistant turns before the last user message',
  detect: ({ hasToken }) => hasToken('<|observation|>') && hasToken('<arg_key>'),
  createParser: (opts) => createTaggedParser(GLM45_FORMAT, opts),
  formatTurn: (turn, view) => ({ text: formatGlmTurn(turn, view), end: turn.toolCalls?.length ? '<|observation|>' : '<|user|>' }),
  readPrompt: readGlmPrompt,
};
