// DeepSeek-V3.1: `<｜User｜>…<｜Assistant｜>`, thinking opened by the prompt (`<think>`) or closed (`</think>`),
// tool calls `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}<｜tool▁call▁end｜>…<｜tool▁calls▁end｜>`
// with the arguments as the model wrote them (vLLM's deepseek_v31 parser), every turn ending in EOS.
import { createTaggedParser, type TaggedFormat } from '../tagged-parser.js';
import type { ModelFamily, PromptTool, PromptTurn, PromptView, SampledTurn } from '../types.js';

export const DS = {
  bos: '<｜begin▁of▁sentence｜>',
  eos: '<｜end▁of▁sentence｜>',
  user: '<｜User｜>',
  assistant: '<｜Assistant｜>',
  callsBegin: '<｜tool▁calls▁begin｜>',
  callsEnd: '<｜tool▁calls▁end｜>',
  callBegin: '<｜tool▁call▁begin｜>',
  callEnd: '<｜tool▁call▁end｜>',
  sep: '<｜tool▁sep｜>',
  outputBegin: '<｜tool▁output▁begin｜>',
  outputEnd: '<｜tool▁output▁end｜>',
} as const;

export const DEEPSEEK_V31_FORMAT: TaggedFormat = {
  think: { start: '<think>', end: '</think>' },
  toolStarts: [DS.callsBegin + DS.callBegin, DS.callBegin],
  toolEnds: [DS.callEnd],
  parseToolBody(body) {
    const at = body.indexOf(DS.sep);
    if (at < 0) return null;
    const name = body.slice(0, at).trim();
    return name ? { name, arguments: body.slice(at + DS.sep.length) } : null;
  },
};

function formatTurn(turn: SampledTurn, view: PromptView): string {
  const think = view.generation === 'in-think' ? `${turn.reasoning ?? ''}</think>` : '';
  const calls = turn.toolCalls ?? [];
  const callText = calls.length
    ? DS.callsBegin + calls.map((c) => `${DS.callBegin}${c.name}${DS.sep}${JSON.stringify(c.arguments)}${DS.callEnd}`).join('') + DS.callsEnd
    : '';
  return think + (turn.content ?? '') + callText;
}

/** The template's `## Tools` section: `### name`, `Description: …`, `Parameters: {json}`. */
function readTools(system: string): { tools: PromptTool[]; rest: string } {
  const at = system.indexOf('\n\n## Tools\n');
  if (at < 0 && !system.startsWith('## Tools\n')) return { tools: [], rest: system };
  const section = system.slice(at < 0 ? 0 : at);
  const tools: PromptTool[] = [];
  for (const m of section.matchAll(/### ([^\n]+)\nDescription: ([^\n]*)\n\nParameters: ([^\n]*)/g)) {
    let parameters: Record<string, unknown> = {};
    try { parameters = JSON.parse(m[3]!) as Record<string, unknown>; } catch { /* unreadable schema: no parameters */ }
    tools.push({ name: m[1]!.trim(), description: m[2]!, parameters });
  }
  return { tools, rest: at < 0 ? '' : system.slice(0, at).trim() };
}

export function readDeepseekPrompt(text: string): PromptView {
  const body = text.startsWith(DS.bos) ? text.slice(DS.bos.length) : text;
  const firstUser = body.indexOf(DS.user);
  if (firstUser < 0) return { turns: [], tools: [], generation: 'none', preamble: text };
  const { tools, rest } = readTools(body.slice(0, firstUser));
  const turns: PromptTurn[] = rest ? [{ role: 'system', content: rest }] : [];
  let generation: PromptView['generation'] = 'none';
  const pieces = body.slice(firstUser).split(new RegExp(`(${DS.user}|${DS.assistant}|${DS.outputBegin}[\\s\\S]*?${DS.outputEnd})`));
  for (let i = 1; i < pieces.length; i += 2) {
    const tagText = pieces[i]!;
    const after = pieces[i + 1] ?? '';
    const last = i + 2 >= pieces.length;
    if (tagText === DS.user) turns.push({ role: 'user', content: after });
    else if (tagText === DS.assistant) {
      if (last) generation = after.startsWith('<think>') ? 'in-think' : 'no-think';
      else turns.push({ role: 'assistant', content: after.replace(/^<\/think>/, '').replace(DS.eos, '') });
    } else {
      turns.push({ role: 'tool', content: tagText.slice(DS.outputBegin.length, -DS.outputEnd.length) });
      // After tool output the model goes on in the same turn, without a new <｜Assistant｜>.
      if (last && !after.trim()) generation = 'no-think';
      else if (after) turns.push({ role: 'assistant', content: after.replace(DS.eos, '') });
    }
  }
  return { turns, tools, generation, preamble: '' };
}

export const deepseekV31: ModelFamily = {
  name: 'deepseek-v31',
  description: 'DeepSeek-V3.1: <｜User｜>/<｜Assistant｜>, <think> opened by the prompt, <｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}',
  stopTokens: [DS.eos],
  requiredTokens: [DS.user, DS.assistant, DS.callsBegin, DS.callBegin, DS.sep, DS.callEnd, '</think>'],
  defaultTokenizer: 'builtin:deepseek-v31',
  rerenderedEnd: (end) => end,
  reasoningDropped: 'the template renders earlier assistant turns as </think> + content: all earlier reasoning is dropped',
  detect: ({ hasToken }) => hasToken(DS.callsBegin) && hasToken(DS.sep) && hasToken('</think>'),
  createParser: (opts) => createTaggedParser(DEEPSEEK_V31_FORMAT, opts),
  formatTurn: (turn, view) => ({ text: formatTurn(turn, view), end: DS.eos }),
  readPrompt: readDeepseekPrompt,
};
