// Reads a rendered ChatML prompt back into turns and tools, the way the model "sees" it. This lets
// /generate with bare input_ids behave exactly like the chat route.

export interface PromptTurn { role: string; content: string }
export interface PromptTool { name: string; description: string; parameters: Record<string, unknown> }

export interface PromptView {
  /** Closed turns, in order (tools block removed from the system text). */
  turns: PromptTurn[];
  tools: PromptTool[];
  /**
   * How the open assistant turn starts: `free` (model decides to think), `no-think` (empty think block
   * in the prompt: enable_thinking=false), `in-think` (prompt ends inside <think>), `none` (no open
   * assistant turn: a raw-text prompt).
   */
  generation: 'free' | 'no-think' | 'in-think' | 'none';
  /** Text before the first <|im_start|> (the whole prompt for raw completions). */
  preamble: string;
}

const START = '<|im_start|>';
const END = '<|im_end|>';

function parseTools(system: string): { tools: PromptTool[]; rest: string } {
  // The header itself mentions "<tools></tools>", so anchor on the block's own lines.
  const open = system.indexOf('\n<tools>\n');
  const close = system.indexOf('\n</tools>', open + 1);
  if (open < 0 || close < 0) return { tools: [], rest: system };
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
  const toolsHeader = system.lastIndexOf('# Tools', open);
  const rest = (toolsHeader >= 0 ? system.slice(0, toolsHeader) : '').trim();
  return { tools, rest };
}

export function readPrompt(text: string): PromptView {
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
      const prefill = body;
      if (/^<think>[\s]*<\/think>/.test(prefill)) generation = 'no-think';
      else if (prefill.includes('<think>') && !prefill.includes('</think>')) generation = 'in-think';
      else generation = 'free';
      return;
    }
    let content = end < 0 ? body : body.slice(0, end);
    if (role === 'system' && turns.length === 0 && tools.length === 0) {
      const parsed = parseTools(content);
      if (parsed.tools.length) {
        tools = parsed.tools;
        content = parsed.rest;
        if (!content) return;
      }
    }
    turns.push({ role, content });
  });
  return { turns, tools, generation, preamble };
}

/** Tool results in a user turn built by the template from `tool` messages. */
export function toolResponses(turn: PromptTurn): string[] | null {
  const re = /<tool_response>\n?([\s\S]*?)\n?<\/tool_response>/g;
  const out: string[] = [];
  for (const m of turn.content.matchAll(re)) out.push(m[1]);
  return out.length ? out : null;
}
