// Anthropic Messages responses: the message object, the SSE event sequence, and error envelopes.
import type { CanonicalDelta, CanonicalResponse, FinishReason } from '../types.js';
import { sseFrame, type StreamEncoder } from './codec.js';
import { encodeReasoningToken, idSuffix, parseJsonObject } from './codec-util.js';
import type { AnthropicContext } from './anthropic.js';

export type AnthropicStopReason = 'end_turn' | 'max_tokens' | 'tool_use' | 'stop_sequence';

export function anthropicStopReason(finish: FinishReason, hasToolCalls: boolean, stopSequence?: string | null): AnthropicStopReason {
  if (finish === 'length') return 'max_tokens';
  if (finish === 'tool_calls' || hasToolCalls) return 'tool_use';
  return stopSequence ? 'stop_sequence' : 'end_turn';
}

/** Anthropic's `stop_reason` and `stop_sequence` pair for a finished response. */
function stopFields(res: CanonicalResponse, hasToolCalls: boolean) {
  const stop_reason = anthropicStopReason(res.finish_reason, hasToolCalls, res.stop_sequence);
  return { stop_reason, stop_sequence: stop_reason === 'stop_sequence' ? res.stop_sequence ?? null : null };
}

export function anthropicErrorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 413) return 'request_too_large';
  if (status === 429) return 'rate_limit_error';
  if (status === 503 || status === 529) return 'overloaded_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}

export function anthropicErrorBody(status: number, message: string, type?: string) {
  return { type: 'error', error: { type: type ?? anthropicErrorType(status), message } };
}

export function anthropicMessageId(id: string): string {
  return `msg_${idSuffix(id)}`;
}

function usageBody(res: CanonicalResponse) {
  return {
    input_tokens: res.usage.prompt_tokens,
    output_tokens: res.usage.completion_tokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  };
}

function thinkingBlock(text: string, ctx: AnthropicContext) {
  return { type: 'thinking', thinking: ctx.thinkingDisplay === 'omitted' ? '' : text, signature: encodeReasoningToken(text) };
}

function toolInput(args: string): Record<string, unknown> {
  return parseJsonObject(args) ?? {};
}

export function encodeAnthropicResponse(res: CanonicalResponse, ctx: AnthropicContext) {
  const m = res.message;
  const content: Array<Record<string, unknown>> = [];
  if (m.reasoning) content.push(thinkingBlock(m.reasoning, ctx));
  if (m.content) content.push({ type: 'text', text: m.content });
  for (const tc of m.tool_calls) content.push({ type: 'tool_use', id: tc.id, name: tc.function.name, input: toolInput(tc.function.arguments) });
  if (content.length === 0) content.push({ type: 'text', text: '' });
  return {
    id: anthropicMessageId(res.id),
    type: 'message',
    role: 'assistant',
    model: ctx.model,
    content,
    ...stopFields(res, m.tool_calls.length > 0),
    usage: usageBody(res),
  };
}

interface OpenBlock { kind: 'thinking' | 'text' | 'tool_use'; index: number; text: string }

/**
 * message_start, then one content block per run of same-kind deltas (thinking → thinking_delta and a
 * closing signature_delta, text → text_delta, each tool call → tool_use + input_json_delta), then
 * message_delta (stop_reason, usage) and message_stop.
 *
 * Once a tool_use block is open, text and thinking that the engine still sends (whitespace between or
 * after calls, a late `</think>` remainder) are held back and sent as blocks after the tool calls: closing
 * the tool block for them would leave its remaining input_json_delta pointing at a closed block, which
 * clients reject (Claude Code: "Stream event referenced an already-closed content block", and it keeps
 * only the partial response).
 */
export class AnthropicStream implements StreamEncoder {
  private next = 0;
  private open: OpenBlock | null = null;
  private readonly toolBlocks = new Map<number, number>();
  private sawThinking = false;
  private sawText = false;
  /** Thinking and text that arrived after the first tool_use block opened (sent at finish). */
  private heldThinking = '';
  private heldText = '';

  constructor(private readonly ctx: AnthropicContext, private readonly meta: { id: string; model: string; created: number }) {}

  private ev(type: string, data: Record<string, unknown>): string {
    return sseFrame({ type, ...data }, type);
  }

  start(): string[] {
    return [
      this.ev('message_start', {
        message: {
          id: anthropicMessageId(this.meta.id),
          type: 'message',
          role: 'assistant',
          model: this.ctx.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
        },
      }),
    ];
  }

  private close(): string[] {
    const b = this.open;
    if (!b) return [];
    this.open = null;
    const frames: string[] = [];
    if (b.kind === 'thinking') {
      frames.push(this.ev('content_block_delta', { index: b.index, delta: { type: 'signature_delta', signature: encodeReasoningToken(b.text) } }));
    }
    frames.push(this.ev('content_block_stop', { index: b.index }));
    return frames;
  }

  private openBlock(kind: OpenBlock['kind'], contentBlock: Record<string, unknown>): string[] {
    const frames = this.close();
    this.open = { kind, index: this.next++, text: '' };
    frames.push(this.ev('content_block_start', { index: this.open.index, content_block: contentBlock }));
    return frames;
  }

  private thinking(text: string): string[] {
    const frames = this.open?.kind === 'thinking' ? [] : this.openBlock('thinking', { type: 'thinking', thinking: '', signature: '' });
    this.sawThinking = true;
    const b = this.open!;
    b.text += text;
    if (this.ctx.thinkingDisplay !== 'omitted' && text) frames.push(this.ev('content_block_delta', { index: b.index, delta: { type: 'thinking_delta', thinking: text } }));
    return frames;
  }

  private text(text: string): string[] {
    const frames = this.open?.kind === 'text' ? [] : this.openBlock('text', { type: 'text', text: '' });
    this.sawText = true;
    if (text) frames.push(this.ev('content_block_delta', { index: this.open!.index, delta: { type: 'text_delta', text } }));
    return frames;
  }

  private toolCall(index: number, id: string | undefined, name: string | undefined, args: string): string[] {
    let frames: string[] = [];
    let blockIndex = this.toolBlocks.get(index);
    if (blockIndex === undefined) {
      frames = this.openBlock('tool_use', { type: 'tool_use', id: id ?? `call_${index}`, name: name ?? '', input: {} });
      blockIndex = this.open!.index;
      this.toolBlocks.set(index, blockIndex);
    }
    if (args) frames.push(this.ev('content_block_delta', { index: blockIndex, delta: { type: 'input_json_delta', partial_json: args } }));
    return frames;
  }

  delta(d: CanonicalDelta): string[] {
    if (d.kind === 'tool_call') return this.toolCall(d.index, d.id, d.name, d.arguments);
    if (!d.text) return [];
    if (this.toolBlocks.size > 0) {
      if (d.kind === 'reasoning') { this.heldThinking += d.text; this.sawThinking = true; } else { this.heldText += d.text; this.sawText = true; }
      return [];
    }
    return d.kind === 'reasoning' ? this.thinking(d.text) : this.text(d.text);
  }

  finish(res: CanonicalResponse): string[] {
    const frames = this.close();
    if (this.heldThinking) frames.push(...this.thinking(this.heldThinking), ...this.close());
    if (this.heldText) frames.push(...this.text(this.heldText), ...this.close());
    // Whatever the engine reported only in the final response (nothing streamed for it) is sent now.
    const m = res.message;
    if (!this.sawThinking && m.reasoning) frames.push(...this.thinking(m.reasoning), ...this.close());
    if (!this.sawText && m.content) frames.push(...this.text(m.content), ...this.close());
    m.tool_calls.forEach((tc, i) => {
      if (!this.toolBlocks.has(i)) frames.push(...this.toolCall(i, tc.id, tc.function.name, tc.function.arguments), ...this.close());
    });
    if (this.next === 0) frames.push(...this.text(''), ...this.close());
    frames.push(
      this.ev('message_delta', {
        delta: stopFields(res, m.tool_calls.length > 0 || this.toolBlocks.size > 0),
        usage: usageBody(res),
      }),
      this.ev('message_stop', {}),
    );
    return frames;
  }

  error(status: number, message: string): string[] {
    return [sseFrame(anthropicErrorBody(status, message), 'error')];
  }
}
