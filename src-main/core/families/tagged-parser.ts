// Streaming parser for families that mark reasoning and tool calls with tags in the text (Qwen3 hermes,
// Qwen3-Coder XML, GLM-4.5, DeepSeek-V3.1). Each family gives its tags and how to read one tool-call body;
// the scanning — tags split at any chunk boundary, content before the first call only (as vLLM's tool
// parsers keep it), an unreadable call kept as text — lives here once. Pure.
import type { CanonicalDelta, FunctionTool } from '../types.js';
import type { OutputParser, ParserOptions } from './types.js';

export interface TaggedFormat {
  think?: { start: string; end: string };
  /** Texts that open one tool call; at the same position the longest wins (a section opener + call opener). */
  toolStarts: readonly string[];
  toolEnds: readonly string[];
  /** One call's body (between a start and an end tag), or null when it is not a call after all. */
  parseToolBody(body: string, tools: readonly FunctionTool[]): { name: string; arguments: string } | null;
  /** A call cut off before its end tag stays text (GLM); otherwise it is read as far as it goes (hermes). */
  requireClose?: boolean;
  /** Whitespace between the content and the first call is not content (GLM strips it). */
  trimBeforeCall?: boolean;
}

/** Length of the longest suffix of `s` that is a proper prefix of `tag`. */
export function partialTagSuffix(s: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, s.length); n > 0; n--) {
    if (s.endsWith(tag.slice(0, n))) return n;
  }
  return 0;
}

/** The earliest of `tags` in `s` (the longest at a tie), or null. */
export function firstTag(s: string, tags: readonly string[]): { at: number; tag: string } | null {
  let best: { at: number; tag: string } | null = null;
  for (const tag of tags) {
    const at = s.indexOf(tag);
    if (at < 0) continue;
    if (!best || at < best.at || (at === best.at && tag.length > best.tag.length)) best = { at, tag };
  }
  return best;
}

/** How many trailing characters might still become one of `tags`. */
export function holdBack(s: string, tags: readonly string[]): number {
  return Math.max(0, ...tags.map((t) => partialTagSuffix(s, t)));
}

/** True when a prompt ends inside an open reasoning block. */
export function endsInside(promptText: string, start: string, end: string): boolean {
  const open = promptText.lastIndexOf(start);
  return open >= 0 && promptText.indexOf(end, open) < 0;
}

/** Adds text to the deltas of one step, merging with the previous delta of the same kind. */
export function appendText(out: CanonicalDelta[], kind: 'content' | 'reasoning', text: string): void {
  if (!text) return;
  const last = out[out.length - 1];
  if (last && last.kind === kind) last.text += text;
  else out.push({ kind, text });
}

/**
 * A streaming parser from a step function over its own buffer: each push appends text, then steps run
 * while they make progress; `final` tells a step the text is complete (hold nothing back).
 */
export function stepParser(append: (text: string) => void, step: (out: CanonicalDelta[], final: boolean) => boolean): OutputParser {
  const run = (final: boolean): CanonicalDelta[] => {
    const out: CanonicalDelta[] = [];
    while (step(out, final));
    return out;
  };
  return {
    push(text) {
      append(text);
      return run(false);
    },
    end: () => run(true),
  };
}

type Mode = 'start' | 'reasoning' | 'content' | 'tool';

export function createTaggedParser(format: TaggedFormat, opts: ParserOptions = {}): OutputParser {
  const newId = opts.newToolCallId ?? ((i: number) => `call_${i}`);
  const parseTools = opts.parseToolCalls ?? true;
  const think = opts.parseReasoning === false ? undefined : format.think;
  const tools = opts.tools ?? [];
  let mode: Mode = !think ? 'content' : opts.promptTail !== undefined && endsInside(opts.promptTail, think.start, think.end) ? 'reasoning' : 'start';
  let buf = '';
  let openedWith = '';
  let toolIndex = 0;
  let sawToolCall = false;

  const emitText = (out: CanonicalDelta[], kind: 'content' | 'reasoning', text: string) => {
    if (!(kind === 'content' && sawToolCall)) appendText(out, kind, text);
  };

  const closeTool = (out: CanonicalDelta[], body: string, closedWith: string) => {
    const call = format.parseToolBody(body, tools);
    if (call) {
      const index = toolIndex++;
      out.push({ kind: 'tool_call', index, id: newId(index), name: call.name, arguments: call.arguments });
      sawToolCall = true;
    } else {
      emitText(out, 'content', openedWith + body + closedWith);
    }
  };

  const step = (out: CanonicalDelta[], final: boolean): boolean => {
    switch (mode) {
      case 'start': {
        // Like vLLM's reasoning parsers, whitespace before the opening tag is not content.
        const start = think!.start;
        const rest = buf.replace(/^\s+/, '');
        if (rest.startsWith(start)) {
          buf = rest.slice(start.length);
          mode = 'reasoning';
          return true;
        }
        if (!final && start.startsWith(rest)) return false;
        mode = 'content';
        return true;
      }
      case 'reasoning': {
        const i = buf.indexOf(think!.end);
        if (i >= 0) {
          emitText(out, 'reasoning', buf.slice(0, i));
          buf = buf.slice(i + think!.end.length);
          mode = 'content';
          return true;
        }
        const keep = final ? 0 : partialTagSuffix(buf, think!.end);
        emitText(out, 'reasoning', buf.slice(0, buf.length - keep));
        buf = buf.slice(buf.length - keep);
        return false;
      }
      case 'content': {
        const hit = parseTools ? firstTag(buf, format.toolStarts) : null;
        if (hit) {
          const before = buf.slice(0, hit.at);
          emitText(out, 'content', format.trimBeforeCall ? before.trimEnd() : before);
          buf = buf.slice(hit.at + hit.tag.length);
          openedWith = hit.tag;
          mode = 'tool';
          return true;
        }
        let keep = final || !parseTools ? 0 : holdBack(buf, format.toolStarts);
        if (format.trimBeforeCall && !final && parseTools) {
          // Whitespace that a call may still follow is held back with any partial tag after it.
          const rest = buf.slice(0, buf.length - keep);
          keep += rest.length - rest.trimEnd().length;
        }
        emitText(out, 'content', buf.slice(0, buf.length - keep));
        buf = buf.slice(buf.length - keep);
        return false;
      }
      case 'tool': {
        const hit = firstTag(buf, format.toolEnds);
        if (hit) {
          const body = buf.slice(0, hit.at);
          buf = buf.slice(hit.at + hit.tag.length);
          mode = 'content';
          closeTool(out, body, hit.tag);
          return true;
        }
        if (final) {
          const body = buf;
          buf = '';
          mode = 'content';
          if (format.requireClose) emitText(out, 'content', openedWith + body);
          else closeTool(out, body, '');
        }
        return false;
      }
    }
  };

  return stepParser((text) => { buf += text; }, step);
}
