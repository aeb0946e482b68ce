// Qwen3-Coder: ChatML like Qwen3, no reasoning, XML tool calls
// `<tool_call>\n<function=NAME>\n<parameter=K>\nV\n</parameter>\n</function>\n</tool_call>` whose values
// are typed by the tool's JSON schema (what vLLM's qwen3_coder parser returns).
import type { FunctionTool } from '../../types.js';
import { readChatml } from '../chatml-view.js';
import { createTaggedParser, type TaggedFormat } from '../tagged-parser.js';
import { argumentsJson, bareValue, paramSchema, typedValue } from '../typed-args.js';
import type { ModelFamily, PromptTool, SampledTurn } from '../types.js';

/** One `<function=…>` body; parameter text loses one leading and one trailing newline. */
export function parseFunctionBody(body: string, tools: readonly FunctionTool[]): { name: string; arguments: string } | null {
  const fn = /<function=([^>\n]+)>([\s\S]*?)(?:<\/function>|$)/.exec(body);
  if (!fn) return null;
  const name = fn[1]!.trim();
  const params: Array<[string, unknown]> = [];
  for (const m of fn[2]!.matchAll(/<parameter=([^>\n]+)>([\s\S]*?)(?:<\/parameter>|(?=<parameter=)|$)/g)) {
    let raw = m[2]!;
    if (raw.startsWith('\n')) raw = raw.slice(1);
    if (raw.endsWith('\n')) raw = raw.slice(0, -1);
    const key = m[1]!.trim();
    params.push([key, typedValue(raw, paramSchema(tools, name, key))]);
  }
  return { name, arguments: argumentsJson(params) };
}

export const QWEN3_CODER_FORMAT: TaggedFormat = {
  toolStarts: ['<tool_call>'],
  toolEnds: ['</tool_call>'],
  parseToolBody: parseFunctionBody,
};

function formatCall(c: { name: string; arguments: Record<string, unknown> }): string {
  const params = Object.entries(c.arguments).map(([k, v]) => `<parameter=${k}>\n${bareValue(v)}\n</parameter>\n`).join('');
  return `<tool_call>\n<function=${c.name}>\n${params}</function>\n</tool_call>`;
}

export function formatCoderTurn(turn: SampledTurn): string {
  const calls = (turn.toolCalls ?? []).map(formatCall);
  return [turn.content ?? '', ...calls].filter(Boolean).join('\n');
}

const tag = (s: string, name: string) => new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(s)?.[1];

function readJsonTag(s: string, name: string): unknown {
  const v = tag(s, name);
  if (v === undefined) return undefined;
  try { return JSON.parse(v); } catch { return v; }
}

/** The template's `<tools><function><name>…` block read back into JSON-schema tools. */
export function readXmlTools(system: string): { tools: PromptTool[]; rest: string } | null {
  const open = system.indexOf('<tools>');
  const close = system.indexOf('</tools>', open);
  if (open < 0 || close < 0) return null;
  const tools: PromptTool[] = [];
  for (const fm of system.slice(open, close).matchAll(/<function>([\s\S]*?)<\/function>/g)) {
    const f = fm[1]!;
    const paramsBlock = tag(f, 'parameters') ?? '';
    const properties: Record<string, Record<string, unknown>> = {};
    for (const pm of paramsBlock.matchAll(/<parameter>([\s\S]*?)<\/parameter>/g)) {
      const p = pm[1]!;
      const name = tag(p, 'name');
      if (!name) continue;
      const schema: Record<string, unknown> = {};
      const type = tag(p, 'type');
      if (type) schema.type = type;
      const description = tag(p, 'description');
      if (description) schema.description = description;
      const en = readJsonTag(p, 'enum');
      if (Array.isArray(en)) schema.enum = en;
      properties[name] = schema;
    }
    const afterParams = paramsBlock.replace(/<parameter>[\s\S]*?<\/parameter>/g, '');
    const required = readJsonTag(afterParams, 'required');
    tools.push({
      name: tag(f, 'name') ?? '',
      description: tag(f.replace(/<parameters>[\s\S]*<\/parameters>/, ''), 'description') ?? '',
      parameters: { type: 'object', properties, ...(Array.isArray(required) ? { required } : {}) },
    });
  }
  const header = system.lastIndexOf('# Tools', open);
  return { tools, rest: (header >= 0 ? system.slice(0, header) : '').trim() };
}

export const qwen3Coder: ModelFamily = {
  name: 'qwen3-coder',
  description: 'Qwen3-Coder: ChatML, XML <function=…><parameter=…> tool calls typed by the tool schema',
  stopTokens: ['<|im_end|>'],
  requiredTokens: ['<|im_start|>', '<|im_end|>', '<tool_call>', '</tool_call>'],
  defaultTokenizer: 'builtin:qwen3-coder',
  rerenderedEnd: (end) => end,
  reasoningDropped: 'no reasoning: Qwen3-Coder does not think, so nothing is dropped',
  detect: ({ templateSource, hasToken }) => hasToken('<|im_start|>') && /<function=/.test(templateSource ?? ''),
  createParser: (opts) => createTaggedParser(QWEN3_CODER_FORMAT, opts),
  formatTurn: (turn) => ({ text: formatCoderTurn(turn), end: '<|im_end|>' }),
  readPrompt: (text) => readChatml(text, readXmlTools),
};
