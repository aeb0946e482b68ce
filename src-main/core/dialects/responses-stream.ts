// OpenAI Responses answers: the response object, the SSE event sequence (with sequence_number) and errors.
import type { CanonicalDelta, CanonicalResponse, ToolCall } from '../types.js';
import { sseFrame, type StreamEncoder } from './codec.js';
import { encodeReasoningToken, idSuffix, parseJsonObject } from './codec-util.js';
import type { ResponsesContext, ResponsesToolName } from './responses.js';

type Item = Record<string, unknown>;

export function responsesErrorCode(status: number): string | null {
  if (status === 401) return 'invalid_api_key';
  if (status === 404) return 'not_found';
  if (status === 429) return 'rate_limit_exceeded';
  if (status === 503) return 'server_is_overloaded';
  if (status >= 500) return 'server_error';
  return null;
}

export function responsesErrorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

export function responsesErrorBody(status: number, message: string, type?: string) {
  return { error: { message, type: type ?? responsesErrorType(status), param: null, code: responsesErrorCode(status) } };
}

function ids(baseId: string) {
  const s = idSuffix(baseId);
  return { response: `resp_${s}`, reasoning: `rs_${s}`, message: `msg_${s}`, call: (i: number) => `fc_${s}_${i}` };
}

function toolName(ctx: ResponsesContext, flat: string): ResponsesToolName {
  return Object.hasOwn(ctx.toolNames, flat) ? ctx.toolNames[flat] : { kind: 'function', name: flat };
}

/** A custom tool's raw input out of the `{"input": "…"}` arguments the model produced. */
function customInput(args: string): string {
  const o = parseJsonObject(args);
  return o && typeof o.input === 'string' ? o.input : args;
}

function reasoningItem(id: string, text: string, ctx: ResponsesContext, status?: string): Item {
  return {
    id,
    type: 'reasoning',
    summary: text ? [{ type: 'summary_text', text }] : [],
    ...(ctx.includeEncryptedReasoning ? { encrypted_content: encodeReasoningToken(text) } : {}),
    ...(status ? { status } : {}),
  };
}

function messageItem(id: string, text: string, status: string): Item {
  return { id, type: 'message', status, role: 'assistant', content: status === 'in_progress' ? [] : [outputText(text)] };
}

function outputText(text: string): Item {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

function callItem(id: string, tc: ToolCall, ctx: ResponsesContext, status: string, argsOverride?: string): Item {
  const t = toolName(ctx, tc.function.name);
  const args = argsOverride ?? tc.function.arguments;
  const ns = t.namespace ? { namespace: t.namespace } : {};
  if (t.kind === 'custom') return { id, type: 'custom_tool_call', status, call_id: tc.id, name: t.name, ...ns, input: argsOverride ?? customInput(args) };
  return { id, type: 'function_call', status, call_id: tc.id, name: t.name, ...ns, arguments: args };
}

function usage(res: CanonicalResponse) {
  return {
    input_tokens: res.usage.prompt_tokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: res.usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: res.usage.reasoning_tokens ?? 0 },
    total_tokens: res.usage.total_tokens,
  };
}

function responseObject(ctx: ResponsesContext, id: string, createdAt: number, status: string, output: Item[], res?: CanonicalResponse): Item {
  const e = ctx.echo;
  return {
    id,
    object: 'response',
    created_at: createdAt,
    status,
    background: false,
    error: null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: e.instructions ?? null,
    max_output_tokens: e.max_output_tokens ?? null,
    model: ctx.model,
    output,
    parallel_tool_calls: e.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: e.reasoning ?? { effort: null, summary: null },
    store: e.store ?? false,
    temperature: e.temperature ?? null,
    text: e.text ?? { format: { type: 'text' } },
    tool_choice: e.tool_choice ?? 'auto',
    tools: e.tools ?? [],
    top_p: e.top_p ?? null,
    truncation: e.truncation ?? 'disabled',
    usage: res ? usage(res) : null,
    metadata: e.metadata ?? {},
    ...(e.prompt_cache_key !== undefined ? { prompt_cache_key: e.prompt_cache_key } : {}),
  };
}

function statusOf(res: CanonicalResponse): 'completed' | 'incomplete' {
  return res.finish_reason === 'length' ? 'incomplete' : 'completed';
}

export function encodeResponsesResponse(res: CanonicalResponse, ctx: ResponsesContext): Item {
  const id = ids(res.id);
  const m = res.message;
  const output: Item[] = [];
  if (m.reasoning) output.push(reasoningItem(id.reasoning, m.reasoning, ctx));
  if (m.content) output.push(messageItem(id.message, m.content, 'completed'));
  m.tool_calls.forEach((tc, i) => output.push(callItem(id.call(i), tc, ctx, 'completed')));
  return responseObject(ctx, id.response, res.created, statusOf(res), output, res);
}

interface OpenItem { kind: 'reasoning' | 'message' | 'call'; outputIndex: number; id: string; text: string; toolIndex?: number; call?: ToolCall }

/**
 * response.created, response.in_progress, then per output item: output_item.added, its part/delta/done
 * events, output_item.done; last response.completed (or response.incomplete on max tokens). Codex fails a
 * turn whose stream ends without one of those.
 */
export class ResponsesStream implements StreamEncoder {
  private seq = 0;
  private readonly ids: ReturnType<typeof ids>;
  private open: OpenItem | null = null;
  private readonly output: Item[] = [];
  private readonly calls = new Map<number, OpenItem>();
  private sawReasoning = false;
  private sawText = false;

  constructor(private readonly ctx: ResponsesContext, private readonly meta: { id: string; model: string; created: number }) {
    this.ids = ids(meta.id);
  }

  private ev(type: string, data: Record<string, unknown>): string {
    return sseFrame({ type, sequence_number: this.seq++, ...data }, type);
  }

  private snapshot(status: string, res?: CanonicalResponse): Item {
    return responseObject(this.ctx, this.ids.response, this.meta.created, status, [...this.output], res);
  }

  start(): string[] {
    return [this.ev('response.created', { response: this.snapshot('in_progress') }), this.ev('response.in_progress', { response: this.snapshot('in_progress') })];
  }

  private close(): string[] {
    const it = this.open;
    if (!it) return [];
    this.open = null;
    const base = { item_id: it.id, output_index: it.outputIndex };
    const frames: string[] = [];
    let item: Item;
    if (it.kind === 'reasoning') {
      const part = { type: 'summary_text', text: it.text };
      frames.push(this.ev('response.reasoning_summary_text.done', { ...base, summary_index: 0, text: it.text }));
      frames.push(this.ev('response.reasoning_summary_part.done', { ...base, summary_index: 0, part }));
      item = reasoningItem(it.id, it.text, this.ctx);
    } else if (it.kind === 'message') {
      frames.push(this.ev('response.output_text.done', { ...base, content_index: 0, text: it.text, logprobs: [] }));
      frames.push(this.ev('response.content_part.done', { ...base, content_index: 0, part: outputText(it.text) }));
      item = messageItem(it.id, it.text, 'completed');
    } else {
      const call = it.call!;
      call.function.arguments = it.text;
      if (toolName(this.ctx, call.function.name).kind === 'custom') {
        const input = customInput(it.text);
        if (input) frames.push(this.ev('response.custom_tool_call_input.delta', { ...base, delta: input }));
        frames.push(this.ev('response.custom_tool_call_input.done', { ...base, input }));
        item = callItem(it.id, call, this.ctx, 'completed', input);
      } else {
        frames.push(this.ev('response.function_call_arguments.done', { ...base, name: toolName(this.ctx, call.function.name).name, arguments: it.text }));
        item = callItem(it.id, call, this.ctx, 'completed');
      }
    }
    this.output[it.outputIndex] = item;
    frames.push(this.ev('response.output_item.done', { output_index: it.outputIndex, item }));
    return frames;
  }

  private openItem(kind: OpenItem['kind'], id: string, added: Item, extra: Partial<OpenItem> = {}): string[] {
    const frames = this.close();
    const outputIndex = this.output.length;
    this.output.push(added);
    this.open = { kind, outputIndex, id, text: '', ...extra };
    frames.push(this.ev('response.output_item.added', { output_index: outputIndex, item: added }));
    return frames;
  }

  private reasoning(text: string): string[] {
    const frames: string[] = [];
    if (this.open?.kind !== 'reasoning') {
      const id = this.sawReasoning ? `${this.ids.reasoning}_${this.output.length}` : this.ids.reasoning;
      frames.push(...this.openItem('reasoning', id, { id, type: 'reasoning', summary: [] }));
      frames.push(this.ev('response.reasoning_summary_part.added', { item_id: id, output_index: this.open!.outputIndex, summary_index: 0, part: { type: 'summary_text', text: '' } }));
    }
    this.sawReasoning = true;
    const it = this.open!;
    it.text += text;
    if (text) frames.push(this.ev('response.reasoning_summary_text.delta', { item_id: it.id, output_index: it.outputIndex, summary_index: 0, delta: text }));
    return frames;
  }

  private text(text: string): string[] {
    const frames: string[] = [];
    if (this.open?.kind !== 'message') {
      const id = this.sawText ? `${this.ids.message}_${this.output.length}` : this.ids.message;
      frames.push(...this.openItem('message', id, messageItem(id, '', 'in_progress')));
      frames.push(this.ev('response.content_part.added', { item_id: id, output_index: this.open!.outputIndex, content_index: 0, part: outputText('') }));
    }
    this.sawText = true;
    const it = this.open!;
    it.text += text;
    if (text) frames.push(this.ev('response.output_text.delta', { item_id: it.id, output_index: it.outputIndex, content_index: 0, delta: text, logprobs: [] }));
    return frames;
  }

  private toolCall(index: number, callId: string | undefined, name: string | undefined, args: string): string[] {
    const frames: string[] = [];
    let it = this.calls.get(index);
    if (!it) {
      const id = this.ids.call(index);
      const call: ToolCall = { id: callId ?? `call_${index}`, type: 'function', function: { name: name ?? '', arguments: '' } };
      const added = callItem(id, call, this.ctx, 'in_progress', toolName(this.ctx, call.function.name).kind === 'custom' ? '' : undefined);
      frames.push(...this.openItem('call', id, added, { toolIndex: index, call }));
      it = this.open!;
      this.calls.set(index, it);
    } else if (name) {
      it.call!.function.name += name; // a name split over deltas (the added item had the first part)
    }
    it.text += args;
    if (args && toolName(this.ctx, it.call!.function.name).kind !== 'custom') {
      frames.push(this.ev('response.function_call_arguments.delta', { item_id: it.id, output_index: it.outputIndex, delta: args }));
    }
    return frames;
  }

  delta(d: CanonicalDelta): string[] {
    if (d.kind === 'reasoning') return d.text ? this.reasoning(d.text) : [];
    if (d.kind === 'content') return d.text ? this.text(d.text) : [];
    return this.toolCall(d.index, d.id, d.name, d.arguments);
  }

  finish(res: CanonicalResponse): string[] {
    const frames = this.close();
    const m = res.message;
    // Anything the engine reported only in the final response is sent as whole items now.
    if (!this.sawReasoning && m.reasoning) frames.push(...this.reasoning(m.reasoning), ...this.close());
    if (!this.sawText && m.content) frames.push(...this.text(m.content), ...this.close());
    m.tool_calls.forEach((tc, i) => {
      if (!this.calls.has(i)) frames.push(...this.toolCall(i, tc.id, tc.function.name, tc.function.arguments), ...this.close());
    });
    const status = statusOf(res);
    frames.push(this.ev(status === 'completed' ? 'response.completed' : 'response.incomplete', { response: this.snapshot(status, res) }));
    return frames;
  }

  error(status: number, message: string): string[] {
    const body = responsesErrorBody(status, message);
    const failed = { ...this.snapshot('failed'), error: { code: body.error.code ?? 'server_error', message } };
    return [
      this.ev('error', { code: body.error.code, message, param: null }),
      this.ev('response.failed', { response: failed }),
    ];
  }
}
