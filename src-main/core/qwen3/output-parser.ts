// Qwen3 output → reasoning / content / tool calls, the way vLLM's `qwen3` reasoning parser and `hermes`
// tool parser split it. Pure. The non-streaming parser runs the streaming one over the whole text, so the
// two cannot disagree; the property test checks that chunk boundaries never change the result.
import type { CanonicalDelta } from '../types.js';
import { pyJsonDumps } from './py-json.js';

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
  const open = promptText.lastIndexOf(THINK_START);
  return open >= 0 && promptText.indexOf(THINK_END, open) < 0;
}

export interface Qwen3StreamParser {
  push(textDelta: string): CanonicalDelta[];
  end(): CanonicalDelta[];
}

type Mode = 'start' | 'reasoning' | 'content' | 'tool';

/** Length of the longest suffix of `s` that is a proper prefix of `tag`. */
function partialTagSuffix(s: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, s.length); n > 0; n--) {
    if (s.endsWith(tag.slice(0, n))) return n;
  }
  return 0;
}

function parseToolBody(body: string): { name: string; arguments: string } | null {
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

export function createQwen3StreamParser(opts: Qwen3ParserOptions = {}): Qwen3StreamParser {
  const newId = opts.newToolCallId ?? ((i: number) => `call_${i}`);
  const parseTools = opts.parseToolCalls ?? true;
  let mode: Mode = opts.parseReasoning === false ? 'content' : opts.thinkingOpen ? 'reasoning' : 'start';
  let buf = '';
  let toolIndex = 0;
  // vLLM's hermes parser keeps only the text before the first tool call as content.
  let sawToolCall = false;

  const emitText = (out: CanonicalDelta[], kind: 'content' | 'reasoning', text: string) => {
    if (!text) return;
    if (kind === 'content' && sawToolCall) return;
    const last = out[out.length - 1];
    if (last && last.kind === kind) last.text += text;
    else out.push({ kind, text });
  };

  const closeTool = (out: CanonicalDelta[], body: string, closed: boolean) => {
    const call = parseToolBody(body);
    if (call) {
      const index = toolIndex++;
      out.push({ kind: 'tool_call', index, id: newId(index), name: call.name, arguments: call.arguments });
      sawToolCall = true;
    } else {
      // Not a tool call after all: keep the text rather than lose it.
      emitText(out, 'content', TOOL_START + body + (closed ? TOOL_END : ''));
    }
  };

  const step = (out: CanonicalDelta[], final: boolean): boolean => {
    switch (mode) {
      case 'start': {
        if (buf.startsWith(THINK_START)) {
          buf = buf.slice(THINK_START.length);
          mode = 'reasoning';
          return true;
        }
        if (!final && THINK_START.startsWith(buf)) return false;
        mode = 'content';
        return true;
      }
      case 'reasoning': {
        const i = buf.indexOf(THINK_END);
        if (i >= 0) {
          emitText(out, 'reasoning', buf.slice(0, i));
          buf = buf.slice(i + THINK_END.length);
          mode = 'content';
          return true;
        }
        const keep = final ? 0 : partialTagSuffix(buf, THINK_END);
        emitText(out, 'reasoning', buf.slice(0, buf.length - keep));
        buf = buf.slice(buf.length - keep);
        return false;
      }
      case 'content': {
        const i = parseTools ? buf.indexOf(TOOL_START) : -1;
        if (i >= 0) {
          emitText(out, 'content', buf.slice(0, i));
          buf = buf.slice(i + TOOL_START.length);
          mode = 'tool';
          return true;
        }
        const keep = final || !parseTools ? 0 : partialTagSuffix(buf, TOOL_START);
        emitText(out, 'content', buf.slice(0, buf.length - keep));
        buf = buf.slice(buf.length - keep);
        return false;
      }
      case 'tool': {
        const i = buf.indexOf(TOOL_END);
        if (i >= 0) {
          const body = buf.slice(0, i);
          buf = buf.slice(i + TOOL_END.length);
          mode = 'content';
          closeTool(out, body, true);
          return true;
        }
        if (final) {
          const body = buf;
          buf = '';
          mode = 'content';
          closeTool(out, body, false);
        }
        return false;
      }
    }
  };

  const run = (final: boolean): CanonicalDelta[] => {
    const out: CanonicalDelta[] = [];
    while (step(out, final));
    return out;
  };

  return {
    push(textDelta) {
      buf += textDelta;
      return run(false);
    },
    end() {
      return run(true);
    },
  };
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
