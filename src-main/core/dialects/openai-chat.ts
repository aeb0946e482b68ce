// OpenAI chat completions: the canonical dialect, so parsing is validation plus normalisation.
import { z } from 'zod';
import type { CanonicalRequest, CanonicalResponse, ChatMessage, FunctionTool, ToolChoice } from '../types.js';
import { sseFrame, type DialectCodec, type StreamEncoder } from './codec.js';
import { parseWith, temperatureSchema, topPSchema } from './validate.js';

const contentSchema = z.union([z.string(), z.array(z.looseObject({ type: z.string() })), z.null()]);

const toolCallSchema = z.looseObject({
  id: z.string(),
  type: z.literal('function').optional(),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});

const messageSchema = z.looseObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
  content: contentSchema.optional(),
  name: z.string().optional(),
  tool_calls: z.array(toolCallSchema).nullish(),
  tool_call_id: z.string().optional(),
  reasoning: z.string().nullish(),
  reasoning_content: z.string().nullish(),
}).superRefine((m, ctx) => {
  if (m.role === 'tool' && m.tool_call_id === undefined) ctx.addIssue({ code: 'custom', path: ['tool_call_id'], message: 'required for role "tool"' });
});

const toolSchema = z.looseObject({
  type: z.literal('function'),
  function: z.looseObject({
    name: z.string().min(1),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
    strict: z.boolean().nullish(),
  }),
});

const requestSchema = z.looseObject({
  model: z.string(),
  messages: z.array(messageSchema).min(1),
  tools: z.array(toolSchema).optional(),
  tool_choice: z.union([
    z.enum(['none', 'auto', 'required']),
    z.looseObject({ type: z.literal('function'), function: z.object({ name: z.string() }) }),
  ]).optional(),
  max_tokens: z.number().int().positive().nullish(),
  max_completion_tokens: z.number().int().positive().nullish(),
  temperature: temperatureSchema,
  top_p: topPSchema,
  top_k: z.number().int().nullish(),
  min_p: z.number().nullish(),
  presence_penalty: z.number().nullish(),
  frequency_penalty: z.number().nullish(),
  repetition_penalty: z.number().nullish(),
  stop: z.union([z.string(), z.array(z.string())]).nullish(),
  seed: z.number().int().nullish(),
  n: z.number().int().min(1).max(1, 'n > 1 is not supported by the gateway yet').nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
  response_format: z.looseObject({ type: z.string() }).nullish(),
  chat_template_kwargs: z.record(z.string(), z.unknown()).nullish(),
  logprobs: z.boolean().nullish(),
  top_logprobs: z.number().int().min(0).max(0, 'top_logprobs > 0 is not supported: Rollgate records the sampled tokens\' logprobs only').nullish(),
});

export interface OpenAIChatContext { model: string; includeUsage: boolean }

function toCanonicalMessage(m: z.infer<typeof messageSchema>): ChatMessage {
  const out: ChatMessage = { role: m.role, content: (m.content ?? null) as ChatMessage['content'] };
  if (m.name !== undefined) out.name = m.name;
  if (m.tool_calls?.length) {
    out.tool_calls = m.tool_calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.function.name, arguments: c.function.arguments } }));
  }
  if (m.tool_call_id !== undefined) out.tool_call_id = m.tool_call_id;
  const reasoning = m.reasoning ?? m.reasoning_content;
  if (reasoning) out.reasoning = reasoning;
  return out;
}

function toResponseFormat(rf: z.infer<typeof requestSchema>['response_format']): CanonicalRequest['response_format'] {
  if (!rf) return undefined;
  if (rf.type === 'json_object') return { type: 'json_object' };
  const js = (rf as { json_schema?: { name?: string; schema?: Record<string, unknown> } }).json_schema;
  if (rf.type === 'json_schema' && js?.schema) return { type: 'json_schema', json_schema: { name: js.name ?? 'response', schema: js.schema } };
  return undefined;
}

export function parseOpenAIChatRequest(body: unknown): { canonical: CanonicalRequest; context: OpenAIChatContext } {
  const req = parseWith(requestSchema, body, 'chat.completions');
  const stop = req.stop == null ? undefined : Array.isArray(req.stop) ? req.stop : [req.stop];
  const canonical: CanonicalRequest = {
    model: req.model,
    messages: req.messages.map(toCanonicalMessage),
    stream: req.stream ?? false,
    ...(req.tools?.length ? { tools: req.tools as FunctionTool[] } : {}),
    ...(req.tool_choice ? { tool_choice: req.tool_choice as ToolChoice } : {}),
    ...(req.max_completion_tokens ?? req.max_tokens ? { max_tokens: (req.max_completion_tokens ?? req.max_tokens)! } : {}),
    ...(req.temperature != null ? { temperature: req.temperature } : {}),
    ...(req.top_p != null ? { top_p: req.top_p } : {}),
    ...(req.top_k != null ? { top_k: req.top_k } : {}),
    ...(req.min_p != null ? { min_p: req.min_p } : {}),
    ...(req.presence_penalty != null ? { presence_penalty: req.presence_penalty } : {}),
    ...(req.frequency_penalty != null ? { frequency_penalty: req.frequency_penalty } : {}),
    ...(req.repetition_penalty != null ? { repetition_penalty: req.repetition_penalty } : {}),
    ...(stop ? { stop } : {}),
    ...(req.seed != null ? { seed: req.seed } : {}),
    ...(toResponseFormat(req.response_format) ? { response_format: toResponseFormat(req.response_format) } : {}),
    ...(req.chat_template_kwargs ? { chat_template_kwargs: req.chat_template_kwargs } : {}),
    ...(req.logprobs ? { logprobs: true } : {}),
  };
  return { canonical, context: { model: req.model, includeUsage: req.stream_options?.include_usage ?? false } };
}

/** OpenAI's `choices[].logprobs`: one entry per sampled token (no alternatives: top_logprobs is empty). */
function chatLogprobs(res: CanonicalResponse): { content: unknown[] } | null {
  if (!res.logprobs) return null;
  return { content: res.logprobs.map((t) => ({ token: t.token, logprob: t.logprob, bytes: null, top_logprobs: [] })) };
}

function assistantMessageBody(res: CanonicalResponse): Record<string, unknown> {
  const m = res.message;
  return {
    role: 'assistant',
    content: m.content,
    ...(m.reasoning ? { reasoning: m.reasoning, reasoning_content: m.reasoning } : {}),
    ...(m.tool_calls.length ? { tool_calls: m.tool_calls } : {}),
  };
}

class OpenAIChatStream implements StreamEncoder {
  private toolCallsSeen = false;
  constructor(private readonly ctx: OpenAIChatContext, private readonly meta: { id: string; model: string; created: number }) {}

  private chunk(choice: Record<string, unknown>): string {
    return sseFrame({ id: `chatcmpl-${this.meta.id}`, object: 'chat.completion.chunk', created: this.meta.created, model: this.ctx.model, choices: [{ index: 0, ...choice }] });
  }

  start(): string[] {
    return [this.chunk({ delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null })];
  }

  delta(d: Parameters<StreamEncoder['delta']>[0]): string[] {
    if (d.kind === 'content') return [this.chunk({ delta: { content: d.text }, logprobs: null, finish_reason: null })];
    if (d.kind === 'reasoning') return [this.chunk({ delta: { reasoning: d.text, reasoning_content: d.text }, logprobs: null, finish_reason: null })];
    this.toolCallsSeen = true;
    const call: Record<string, unknown> = { index: d.index, function: { arguments: d.arguments } };
    if (d.id) Object.assign(call, { id: d.id, type: 'function' });
    if (d.name) (call.function as Record<string, unknown>).name = d.name;
    return [this.chunk({ delta: { tool_calls: [call] }, logprobs: null, finish_reason: null })];
  }

  finish(res: CanonicalResponse): string[] {
    const finish = res.finish_reason === 'stop' && this.toolCallsSeen ? 'tool_calls' : res.finish_reason;
    // The sampled tokens' logprobs come with the closing chunk (the engine's ids are known only at the end).
    const frames = [this.chunk({ delta: {}, logprobs: chatLogprobs(res), finish_reason: finish })];
    if (this.ctx.includeUsage) {
      frames.push(sseFrame({ id: `chatcmpl-${this.meta.id}`, object: 'chat.completion.chunk', created: this.meta.created, model: this.ctx.model, choices: [], usage: chatUsage(res) }));
    }
    frames.push(sseFrame('[DONE]'));
    return frames;
  }

  error(status: number, message: string): string[] {
    return [sseFrame(openAIErrorBody(status, message)), sseFrame('[DONE]')];
  }
}

export function openAIErrorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

export function openAIErrorBody(status: number, message: string, type?: string) {
  return { error: { message, type: type ?? openAIErrorType(status), param: null, code: status } };
}

/** OpenAI's usage object: reasoning tokens go under completion_tokens_details. */
function chatUsage(res: CanonicalResponse) {
  const { reasoning_tokens, ...counts } = res.usage;
  return reasoning_tokens === undefined ? counts : { ...counts, completion_tokens_details: { reasoning_tokens } };
}

export const openAIChatCodec: DialectCodec<OpenAIChatContext> = {
  dialect: 'openai-chat',
  parseRequest: (body) => parseOpenAIChatRequest(body),
  encodeResponse: (res, ctx) => ({
    id: `chatcmpl-${res.id}`,
    object: 'chat.completion',
    created: res.created,
    model: ctx.model,
    choices: [{ index: 0, message: assistantMessageBody(res), logprobs: chatLogprobs(res), finish_reason: res.finish_reason }],
    usage: chatUsage(res),
  }),
  streamEncoder: (ctx, meta) => new OpenAIChatStream(ctx, meta),
  encodeError: (status, message, type) => ({ status, body: openAIErrorBody(status, message, type) }),
};
