// Qwen3 output → reasoning / content / tool calls, the way vLLM's `qwen3` reasoning parser and `hermes`
// tool parser split it. Pure. The non-streaming parser runs the streaming one over the whole text, so the
// two cannot disagree; the property test checks that chunk boundaries never change the result.
import type { CanonicalDelta } from '../../types.js';
import { pyJsonDumps } from '../py-json.js';
import { createTaggedParser, endsInside, type TaggedFormat } from '../tagged-parser.js';
import type { OutputParser } from '../types.js';

export const THINK_START = '<think>';
export const THINK_END = '</think>';
export const TOOL_START = '<tool_call>';
export const TOOL_END = '</tool_call>';

export interface ParsedToolCall { id: string; name: string; arguments: string }

export interface Qwen3ParseResult {
  reasoning: string | null;
  content: string | null;
  toolCalls: ParsedToolCall[];
}

export interface Qwen3ParserOptions {
  /**
   * The prompt already ended inside a think block (template added `<think>`), so output starts as reasoning
   * and only `</think>` appears. Non-streaming: undefined = detect it like vLLM (a `</think>` with no
   * `<think>` before it). Streaming: undefined = false (the caller knows the prompt; see promptEndsInThink).
   */
  thinkingOpen?: boolean;
  /** false = no reasoning split: `<think>` text stays content (SGLang separate_reasoning=false). Default true. */
  parseReasoning?: boolean;
  /** false = leave `<tool_call>` text as content (vLLM without tools in the request). Default true. */
  parseToolCalls?: boolean;
  /** Tool call id for the call at `index` (0-based, per completion). */
  newToolCallId?: (index: number) => string;
}

/** True when the rendered prompt leaves the model inside an open think block. */
export function promptEndsInThink(promptText: string): boolean {
  return endsInside(promptText, THINK_START, THINK_END);
}

/** Hermes: one JSON object {name, arguments|parameters}; arguments printed like Python's json.dumps. */
export function parseHermesBody(body: string): { name: string; arguments: string } | null {
  let v: unknown;
  try {
    v = JSON.parse(body.trim());
  } catch {
    return null;
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) return null;
  const o = v as Record<string, unknown>;
  if (typeof o.name !== 'string') return null;
  const args = o.arguments ?? o.parameters ?? {};
  return { name: o.name, arguments: typeof args === 'string' ? args : pyJsonDumps(args) };
}

export const QWEN3_FORMAT: TaggedFormat = {
  think: { start: THINK_START, end: THINK_END },
  toolStarts: [TOOL_START],
  toolEnds: [TOOL_END],
  parseToolBody: (body) => parseHermesBody(body),
};

export type Qwen3StreamParser = OutputParser;

export function createQwen3StreamParser(opts: Qwen3ParserOptions = {}): Qwen3StreamParser {
  return createTaggedParser(QWEN3_FORMAT, {
    promptTail: opts.thinkingOpen ? THINK_START : undefined,
    parseReasoning: opts.parseReasoning,
    parseToolCalls: opts.parseToolCalls,
    newToolCallId: opts.newToolCallId,
  });
}

/** Folds deltas into the final message parts (empty text → null, like vLLM). */
export function collectQwen3Deltas(deltas: Iterable<CanonicalDelta>): Qwen3ParseResult {
  let reasoning = '';
  let content = '';
  const toolCalls: ParsedToolCall[] = [];
  for (const d of deltas) {
    if (d.kind === 'reasoning') reasoning += d.text;
    else if (d.kind === 'content') content += d.text;
    else toolCalls.push({ id: d.id ?? '', name: d.name ?? '', arguments: d.arguments });
  }
  return { reasoning: reasoning || null, content: content || null, toolCalls };
}

export function parseQwen3Output(text: string, opts: Qwen3ParserOptions = {}): Qwen3ParseResult {
  let thinkingOpen = opts.thinkingOpen;
  if (thinkingOpen === undefined) {
    const end = text.indexOf(THINK_END);
    const start = text.indexOf(THINK_START);
    thinkingOpen = end >= 0 && (start < 0 || start > end);
  }
  const p = createQwen3StreamParser({ ...opts, thinkingOpen });
  return collectQwen3Deltas([...p.push(text), ...p.end()]);
}
