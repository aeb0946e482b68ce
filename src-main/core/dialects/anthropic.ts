// Anthropic Messages (`/v1/messages`, `/v1/messages/count_tokens`) ⇄ canonical.
// History is mapped in place: `system` → leading system message, `role:"system"` messages stay where
// they are, tool_result blocks become tool messages at their position, thinking → assistant `reasoning`.
import { z } from 'zod';
import type { CanonicalRequest, ChatMessage, ContentPart, FunctionTool, ToolCall, ToolChoice } from '../types.js';
import { DialectError, type DialectCodec } from './codec.js';
import { temperatureSchema, topPSchema } from './validate.js';
import { check, decodeReasoningToken, isPlainObject, requireObject, type Path } from './codec-util.js';
import { anthropicErrorBody, AnthropicStream, encodeAnthropicResponse } from './anthropic-stream.js';

const ERR = 'invalid_request_error';

/** What the encoders need to answer in the agent's terms, plus what was accepted but not served. */
export interface AnthropicContext {
  /** Model name the agent asked for; echoed in responses. */
  model: string;
  /** `thinking.display` (`"omitted"`: thinking text is left out, the signature still carries it). */
  thinkingDisplay?: string;
  /** Tools not offered to the model (server tools such as `web_search_20250305`), as sent. */
  skippedTools: Array<{ index: number; type: string; name?: string }>;
  /** `metadata.user_id`, parsed when it is a JSON string (Claude Code). */
  userId?: unknown;
  /** Accepted request options that have no canonical field (thinking, output_config, context_management, …). */
  options: Record<string, unknown>;
}

const textOrBlocks = z.union([z.string(), z.array(z.unknown())], { error: 'expected string or array' });

const requestSchema = z.looseObject({
  model: z.string(),
  messages: z.array(z.unknown()),
  max_tokens: z.number().int().positive().optional(),
  system: textOrBlocks.nullish(),
  tools: z.array(z.unknown()).nullish(),
  tool_choice: z.looseObject({ type: z.enum(['auto', 'any', 'tool', 'none']), name: z.string().optional(), disable_parallel_tool_use: z.boolean().optional() }).nullish(),
  stop_sequences: z.array(z.string()).nullish(),
  temperature: temperatureSchema,
  top_p: topPSchema,
  top_k: z.number().int().nullish(),
  stream: z.boolean().nullish(),
  metadata: z.looseObject({ user_id: z.string().nullish() }).nullish(),
  thinking: z.looseObject({ type: z.string(), budget_tokens: z.number().int().optional(), display: z.string().optional() }).nullish(),
});

const messageSchema = z.looseObject({
  role: z.enum(['user', 'assistant', 'system']),
  content: textOrBlocks,
});

const blockSchema = z.looseObject({ type: z.string() });
const textBlock = z.looseObject({ type: z.literal('text'), text: z.string() });
const imageBlock = z.looseObject({
  type: z.literal('image'),
  source: z.looseObject({ type: z.string(), media_type: z.string().optional(), data: z.string().optional(), url: z.string().optional() }),
});
const toolUseBlock = z.looseObject({ type: z.literal('tool_use'), id: z.string(), name: z.string(), input: z.unknown() });
const toolResultBlock = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string(),
  content: textOrBlocks.optional(),
  is_error: z.boolean().optional(),
});
const thinkingBlock = z.looseObject({ type: z.literal('thinking'), thinking: z.string(), signature: z.string().optional() });
const redactedThinkingBlock = z.looseObject({ type: z.literal('redacted_thinking'), data: z.string() });
const toolSchema = z.looseObject({
  name: z.string().min(1),
  description: z.string().optional(),
  input_schema: z.record(z.string(), z.unknown()),
});

function imagePart(b: z.infer<typeof imageBlock>, path: Path): ContentPart {
  const s = b.source;
  if (s.type === 'base64' && s.data !== undefined) return { type: 'image_url', image_url: { url: `data:${s.media_type ?? 'image/png'};base64,${s.data}` } };
  if (s.type === 'url' && s.url !== undefined) return { type: 'image_url', image_url: { url: s.url } };
  throw new DialectError(`${[...path, 'source'].join('.')}: unsupported image source type "${s.type}"`, 400, ERR);
}

/** A user-side content block (user message or tool_result content) as a canonical part. */
function userPart(raw: unknown, path: Path): ContentPart {
  const b = check(blockSchema, raw, path, ERR);
  if (b.type === 'text') return { type: 'text', text: check(textBlock, raw, path, ERR).text };
  if (b.type === 'image') return imagePart(check(imageBlock, raw, path, ERR), path);
  if (b.type === 'document' && isPlainObject(b.source) && b.source.type === 'text' && typeof b.source.data === 'string') {
    return { type: 'text', text: b.source.data };
  }
  // Anything else (documents, search results, …) is passed on as its own part type; the engine decides.
  const { cache_control: _cc, ...rest } = b;
  return rest as ContentPart;
}

function systemMessage(content: unknown, path: Path): ChatMessage {
  if (typeof content === 'string') return { role: 'system', content };
  const parts = (content as unknown[]).map((raw, i) => {
    const b = check(textBlock, raw, [...path, i], ERR);
    return { type: 'text', text: b.text } as ContentPart;
  });
  return { role: 'system', content: parts };
}

function userMessages(content: unknown, path: Path): ChatMessage[] {
  if (typeof content === 'string') return [{ role: 'user', content }];
  const out: ChatMessage[] = [];
  let pending: ContentPart[] | null = null;
  const flush = () => {
    if (pending) out.push({ role: 'user', content: pending });
    pending = null;
  };
  (content as unknown[]).forEach((raw, i) => {
    const p = [...path, i];
    const b = check(blockSchema, raw, p, ERR);
    if (b.type !== 'tool_result') {
      (pending ??= []).push(userPart(raw, p));
      return;
    }
    flush();
    const r = check(toolResultBlock, raw, p, ERR);
    const msg: ChatMessage = {
      role: 'tool',
      tool_call_id: r.tool_use_id,
      content: r.content === undefined ? '' : typeof r.content === 'string' ? r.content : r.content.map((c, j) => userPart(c, [...p, 'content', j])),
    };
    if (r.is_error !== undefined) msg.dialect_extras = { is_error: r.is_error };
    out.push(msg);
  });
  flush();
  if (out.length === 0) out.push({ role: 'user', content: [] });
  return out;
}

function assistantMessage(content: unknown, path: Path): ChatMessage {
  if (typeof content === 'string') return { role: 'assistant', content };
  const texts: string[] = [];
  const thinking: string[] = [];
  const thinkingBlocks: Array<Record<string, unknown>> = [];
  const otherBlocks: unknown[] = [];
  const toolCalls: ToolCall[] = [];
  (content as unknown[]).forEach((raw, i) => {
    const p = [...path, i];
    const b = check(blockSchema, raw, p, ERR);
    switch (b.type) {
      case 'text':
        texts.push(check(textBlock, raw, p, ERR).text);
        break;
      case 'thinking': {
        const t = check(thinkingBlock, raw, p, ERR);
        // With `display:"omitted"` the agent keeps only the signature; ours carries the text.
        const text = t.thinking !== '' ? t.thinking : (decodeReasoningToken(t.signature) ?? '');
        thinking.push(text);
        thinkingBlocks.push({ type: 'thinking', signature: t.signature ?? null });
        break;
      }
      case 'redacted_thinking':
        thinkingBlocks.push({ type: 'redacted_thinking', data: check(redactedThinkingBlock, raw, p, ERR).data });
        break;
      case 'tool_use': {
        const t = check(toolUseBlock, raw, p, ERR);
        toolCalls.push({ id: t.id, type: 'function', function: { name: t.name, arguments: JSON.stringify(t.input ?? {}) } });
        break;
      }
      default:
        // Server tool blocks (server_tool_use, web_search_tool_result, …) are kept, not rendered.
        otherBlocks.push(raw);
    }
  });
  const msg: ChatMessage = {
    role: 'assistant',
    content: texts.length === 0 ? (toolCalls.length ? null : '') : texts.length === 1 ? texts[0] : texts.map((text) => ({ type: 'text', text })),
  };
  if (toolCalls.length) msg.tool_calls = toolCalls;
  const reasoning = thinking.filter((t) => t !== '').join('\n');
  if (reasoning) msg.reasoning = reasoning;
  const extras: Record<string, unknown> = {};
  if (thinkingBlocks.length) extras.thinking_blocks = thinkingBlocks;
  if (otherBlocks.length) extras.unrendered_blocks = otherBlocks;
  if (Object.keys(extras).length) msg.dialect_extras = extras;
  return msg;
}

function toolChoice(tc: z.infer<typeof requestSchema>['tool_choice']): ToolChoice | undefined {
  if (!tc) return undefined;
  switch (tc.type) {
    case 'auto': return 'auto';
    case 'any': return 'required';
    case 'none': return 'none';
    case 'tool':
      if (!tc.name) throw new DialectError('tool_choice.name: required when tool_choice.type is "tool"', 400, ERR);
      return { type: 'function', function: { name: tc.name } };
  }
}

function parseUserId(v: string | null | undefined): unknown {
  if (typeof v !== 'string') return undefined;
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
}

function toCanonical(body: unknown, requireMaxTokens: boolean): { canonical: CanonicalRequest; context: AnthropicContext } {
  const obj = requireObject(body, ERR);
  const req = check(requestSchema, obj, [], ERR);
  if (requireMaxTokens && req.max_tokens === undefined) throw new DialectError('max_tokens: Field required', 400, ERR);

  const messages: ChatMessage[] = [];
  if (req.system != null && !(Array.isArray(req.system) && req.system.length === 0)) messages.push(systemMessage(req.system, ['system']));
  req.messages.forEach((raw, i) => {
    const path = ['messages', i];
    const m = check(messageSchema, raw, path, ERR);
    const cpath = [...path, 'content'];
    if (m.role === 'system') messages.push(systemMessage(m.content, cpath));
    else if (m.role === 'user') messages.push(...userMessages(m.content, cpath));
    else messages.push(assistantMessage(m.content, cpath));
  });

  const tools: FunctionTool[] = [];
  const skippedTools: AnthropicContext['skippedTools'] = [];
  (req.tools ?? []).forEach((raw, i) => {
    const b = isPlainObject(raw) ? raw : {};
    if (typeof b.type === 'string' && b.type !== 'custom') {
      skippedTools.push({ index: i, type: b.type, ...(typeof b.name === 'string' ? { name: b.name } : {}) });
      return;
    }
    const t = check(toolSchema, raw, ['tools', i], ERR);
    tools.push({ type: 'function', function: { name: t.name, ...(t.description !== undefined ? { description: t.description } : {}), parameters: t.input_schema } });
  });

  const options: Record<string, unknown> = {};
  for (const key of ['thinking', 'output_config', 'context_management', 'service_tier', 'container', 'mcp_servers'] as const) {
    if (obj[key] !== undefined) options[key] = obj[key];
  }
  if (req.tool_choice?.disable_parallel_tool_use !== undefined) options.disable_parallel_tool_use = req.tool_choice.disable_parallel_tool_use;

  const tc = toolChoice(req.tool_choice);
  const canonical: CanonicalRequest = {
    model: req.model,
    messages,
    stream: req.stream ?? false,
    ...(tools.length ? { tools } : {}),
    ...(tc ? { tool_choice: tc } : {}),
    ...(req.max_tokens !== undefined ? { max_tokens: req.max_tokens } : {}),
    ...(req.temperature != null ? { temperature: req.temperature } : {}),
    ...(req.top_p != null ? { top_p: req.top_p } : {}),
    ...(req.top_k != null ? { top_k: req.top_k } : {}),
    ...(req.stop_sequences?.length ? { stop: req.stop_sequences } : {}),
  };
  if (req.thinking?.type === 'disabled') canonical.chat_template_kwargs = { enable_thinking: false };
  else if (req.thinking?.type === 'enabled') canonical.chat_template_kwargs = { enable_thinking: true };

  const context: AnthropicContext = {
    model: req.model,
    skippedTools,
    options,
    ...(req.thinking?.display !== undefined ? { thinkingDisplay: req.thinking.display } : {}),
    ...(req.metadata?.user_id != null ? { userId: parseUserId(req.metadata.user_id) } : {}),
  };
  return { canonical, context };
}

export function parseAnthropicRequest(body: unknown): { canonical: CanonicalRequest; context: AnthropicContext } {
  return toCanonical(body, true);
}

/** `/v1/messages/count_tokens`: the canonical request whose prompt the gateway should count (max_tokens optional). */
export function parseAnthropicCountTokensRequest(body: unknown): CanonicalRequest {
  const { canonical } = toCanonical(body, false);
  return { ...canonical, stream: false };
}

export function encodeAnthropicCountTokens(inputTokens: number): { input_tokens: number } {
  return { input_tokens: inputTokens };
}

export const anthropicCodec: DialectCodec<AnthropicContext> = {
  dialect: 'anthropic',
  parseRequest: (body) => parseAnthropicRequest(body),
  encodeResponse: (res, ctx) => encodeAnthropicResponse(res, ctx),
  streamEncoder: (ctx, meta) => new AnthropicStream(ctx, meta),
  encodeError: (status, message, type) => ({ status, body: anthropicErrorBody(status, message, type) }),
};
