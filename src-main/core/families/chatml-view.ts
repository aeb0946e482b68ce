// Reads a rendered ChatML prompt (Qwen3, Qwen3-Coder) back into turns and tools, the way the model "sees"
// it, so /generate with bare input_ids behaves like the chat route. Pure.
import type { PromptTool, PromptTurn, PromptView } from './types.js';

const START = '<|im_start|>';
const END = '<|im_end|>';

/** Splits the tools block off the first system turn: the tools it lists and the system text left. */
export type ToolsReader = (system: string) => { tools: PromptTool[]; rest: string } | null;

/** Tool results a template wrapped in `<tool_response>` inside a user turn become `tool` turns. */
function splitToolResponses(turn: PromptTurn): PromptTurn[] {
  if (turn.role !== 'user') return [turn];
  const out: PromptTurn[] = [];
  for (const m of turn.content.matchAll(/<tool_response>\n?([\s\S]*?)\n?<\/tool_response>/g)) out.push({ role: 'tool', content: m[1] });
  return out.length ? out : [turn];
}

export function readChatml(text: string, readTools: ToolsReader): PromptView {
  const first = text.indexOf(START);
  if (first < 0) return { turns: [], tools: [], generation: 'none', preamble: text };
  const preamble = text.slice(0, first);
  const segments = text.slice(first + START.length).split(START);
  const turns: PromptTurn[] = [];
  let tools: PromptTool[] = [];
  let generation: PromptView['generation'] = 'none';
  segments.forEach((seg, i) => {
    const nl = seg.indexOf('\n');
    const role = nl < 0 ? seg : seg.slice(0, nl);
    const body = nl < 0 ? '' : seg.slice(nl + 1);
    const end = body.indexOf(END);
    if (end < 0 && i === segments.length - 1 && role === 'assistant') {
      if (/^<think>\s*<\/think>/.test(body)) generation = 'no-think';
      else if (body.includes('<think>') && !body.includes('</think>')) generation = 'in-think';
      else generation = 'free';
      return;
    }
    let content = end < 0 ? body : body.slice(0, end);
    if (role === 'system' && turns.length === 0 && tools.length === 0) {
      const parsed = readTools(content);
      if (parsed?.tools.length) {
        tools = parsed.tools;
        content = parsed.rest;
        if (!content) return;
      }
    }
    turns.push(...splitToolResponses({ role, content }));
  });
  return { turns, tools, generation, preamble };
}

/** One tool per JSON line between the block's own `<tools>` lines (Qwen3, GLM-4.5). */
export function readJsonToolLines(system: string, header: string): { tools: PromptTool[]; rest: string } | null {
  // The header itself mentions "<tools></tools>", so anchor on the block's own lines.
  const open = system.indexOf('\n<tools>\n');
  const close = system.indexOf('\n</tools>', open + 1);
  if (open < 0 || close < 0) return null;
  const tools: PromptTool[] = [];
  for (const line of system.slice(open + '\n<tools>\n'.length, close).split('\n')) {
    if (!line.trim()) continue;
    try {
      const t = JSON.parse(line) as { function?: Record<string, unknown> } & Record<string, unknown>;
      const f = (t.function ?? t) as Record<string, unknown>;
      if (typeof f.name !== 'string') continue;
      tools.push({
        name: f.name,
        description: typeof f.description === 'string' ? f.description : '',
        parameters: (f.parameters && typeof f.parameters === 'object' ? f.parameters : {}) as Record<string, unknown>,
      });
    } catch {
      // a tool line the model cannot read is simply not a tool to it
    }
  }
  const at = system.lastIndexOf(header, open);
  return { tools, rest: (at >= 0 ? system.slice(0, at) : '').trim() };
}
