// gpt-oss: the harmony format, rendered in code. A sampled turn stops on <|call|> (a tool call) or
// <|return|> (a final answer); harmony re-renders a final answer closed by <|end|> instead, which is
// what prompt reuse has to look for after the reused turn.
import type { ModelFamily, PromptTool, PromptTurn, PromptView, SampledTurn } from '../types.js';
import { H, renderHarmony } from './harmony.js';
import { createHarmonyParser } from './parser.js';

function formatHarmonyTurn(turn: SampledTurn): { text: string; end: string } {
  const messages: string[] = [];
  if (turn.reasoning) messages.push(`${H.channel}analysis${H.message}${turn.reasoning}`);
  const calls = turn.toolCalls ?? [];
  if (calls.length && turn.content) messages.push(`${H.channel}commentary${H.message}${turn.content}`);
  for (const c of calls) messages.push(`${H.channel}commentary to=functions.${c.name} ${H.constrain}json${H.message}${JSON.stringify(c.arguments)}`);
  if (!calls.length) messages.push(`${H.channel}final${H.message}${turn.content ?? ''}`);
  const closes = messages.map((_, i) => (i < messages.length - 1 ? (messages[i]!.includes(' to=functions.') ? H.call : H.end) : ''));
  const text = messages.map((m, i) => (i > 0 ? `${H.start}assistant` : '') + m + closes[i]).join('');
  return { text, end: calls.length ? H.call : H.ret };
}

/** Top-level properties of a `type f = (_: {…}) => any;` signature, read back into a JSON schema. */
function readSignature(body: string): Record<string, unknown> {
  const properties: Record<string, Record<string, unknown>> = {};
  const required: string[] = [];
  let depth = 0;
  let description: string[] = [];
  for (const line of body.split('\n')) {
    if (depth === 1) {
      const comment = /^\/\/ (.*)$/.exec(line);
      const prop = /^([A-Za-z_$][\w$-]*)(\?)?: (.+?),(?: \/\/ default: .*)?$/.exec(line);
      if (comment) description.push(comment[1]!);
      else if (prop) {
        const t = prop[3]!;
        const schema: Record<string, unknown> = {
          type: t.endsWith('[]') ? 'array' : t === 'number' ? 'number' : t === 'boolean' ? 'boolean' : t.startsWith('{') ? 'object' : 'string',
        };
        const literals = t.split(' | ').filter((v) => /^"(?:[^"\\]|\\.)*"$/.test(v)).map((v) => JSON.parse(v) as string);
        if (literals.length && /^"/.test(t)) schema.enum = literals;
        if (description.length) schema.description = description.join('\n');
        properties[prop[1]!] = schema;
        if (!prop[2]) required.push(prop[1]!);
        description = [];
      }
    }
    depth += (line.match(/\{/g)?.length ?? 0) - (line.match(/\}/g)?.length ?? 0);
  }
  return { type: 'object', properties, required };
}

function readTools(developer: string): PromptTool[] {
  const ns = /namespace functions \{\n([\s\S]*?)\n\} \/\/ namespace functions/.exec(developer)?.[1] ?? '';
  const tools: PromptTool[] = [];
  for (const m of ns.matchAll(/((?:\/\/ [^\n]*\n)*)type ([\w$.-]+) = (\(\) => any|\(_: (\{[\s\S]*?\n\})\) => any);/g)) {
    tools.push({
      name: m[2]!,
      description: m[1]!.split('\n').filter(Boolean).map((l) => l.replace(/^\/\/ /, '')).join('\n'),
      parameters: m[4] ? readSignature(m[4]) : { type: 'object', properties: {} },
    });
  }
  return tools;
}

export function readHarmonyPrompt(text: string): PromptView {
  const first = text.indexOf(H.start);
  if (first < 0) return { turns: [], tools: [], generation: 'none', preamble: text };
  const turns: PromptTurn[] = [];
  let tools: PromptTool[] = [];
  let generation: PromptView['generation'] = 'none';
  const pieces = text.slice(first + H.start.length).split(H.start);
  pieces.forEach((piece, i) => {
    const at = piece.indexOf(H.message);
    if (at < 0) {
      if (i === pieces.length - 1 && piece.startsWith('assistant')) generation = 'free';
      return;
    }
    const header = piece.slice(0, at);
    const body = piece.slice(at + H.message.length).replace(/<\|(end|call|return)\|>$/, '');
    const role = header.split(/[\s<]/)[0]!;
    if (role === 'system') return;
    if (role === 'developer') {
      tools = readTools(body);
      const instructions = /^# Instructions\n\n([\s\S]*?)(?:\n\n# Tools\n|$)/.exec(body)?.[1];
      if (instructions) turns.push({ role: 'system', content: instructions });
      return;
    }
    if (role.startsWith('functions.')) turns.push({ role: 'tool', content: body });
    else turns.push({ role, content: body });
  });
  return { turns, tools, generation, preamble: text.slice(0, first) };
}

export const gptOss: ModelFamily = {
  name: 'gpt-oss',
  description: 'gpt-oss: harmony channels (analysis → reasoning, commentary to=functions.N → tool call, final → text)',
  stopTokens: [H.call, H.ret],
  requiredTokens: [H.start, H.end, H.message, H.channel, H.call, H.ret],
  defaultTokenizer: 'builtin:gpt-oss',
  rerenderedEnd: (end) => (end === H.ret ? H.end : end),
  reasoningDropped: 'harmony keeps analysis only for assistant turns after the last user message',
  detect: ({ hasToken }) => hasToken(H.channel) && hasToken(H.call),
  render: renderHarmony,
  createParser: createHarmonyParser,
  formatTurn: formatHarmonyTurn,
  readPrompt: readHarmonyPrompt,
};
