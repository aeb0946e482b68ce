// OpenAI Responses (`/v1/responses`) ⇄ canonical. Input items map in place: `instructions` → leading
// system message, developer/system messages stay where they are, the reasoning/message/function_call
// items of one model turn become one assistant message, tool outputs become tool messages.
// Codex's `namespace` tools are flattened to `<namespace>__<fn>` functions and `custom` (grammar) tools to
// functions taking one string argument `input`; the encoders map the names back.
import { z } from 'zod';
import type { CanonicalRequest, ChatMessage, ContentPart, FunctionTool, ToolCall, ToolChoice } from '../types.js';
import { DialectError, type DialectCodec } from './codec.js';
import { temperatureSchema, topPSchema } from './validate.js';
import { check, decodeReasoningToken, isPlainObject, requireObject, type Path } from './codec-util.js';
import { encodeResponsesResponse, responsesErrorBody, ResponsesStream } from './responses-stream.js';

/** How a flat canonical function name is presented to the agent. */
export interface ResponsesToolName { kind: 'function' | 'custom'; name: string; namespace?: string }

export interface ResponsesContext {
  model: string;
  /** Canonical function name → Responses tool (namespace/custom mapping). */
  toolNames: Record<string, ResponsesToolName>;
  /** Hosted tools (web_search, tool_search, image_generation, …): not offered to the model, recorded. */
  skippedTools: Array<{ index: number; type: string; name?: string }>;
  /** Input items with no canonical form (hosted tool calls, …), recorded. */
  skippedItems: Array<{ index: number; type: string }>;
  /** `include` has `reasoning.encrypted_content`. */
  includeEncryptedReasoning: boolean;
  /** Request fields echoed in the response object (instructions, tools, tool_choice, …). */
  echo: Record<string, unknown>;
}

export const NAMESPACE_SEPARATOR = '__';

export function flatToolName(name: string, namespace?: string): string {
  return namespace ? `${namespace}${NAMESPACE_SEPARATOR}${name}` : name;
}

const stringOrParts = z.union([z.string(), z.array(z.unknown())], { error: 'expected string or array' });

const requestSchema = z.looseObject({
  model: z.string(),
  input: stringOrParts.optional(),
  instructions: z.string().nullish(),
  tools: z.array(z.unknown()).nullish(),
  tool_choice: z.union([z.enum(['none', 'auto', 'required']), z.looseObject({ type: z.string() })], { error: 'expected "none", "auto", "required" or an object' }).nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  max_output_tokens: z.number().int().positive().nullish(),
  temperature: temperatureSchema,
  top_p: topPSchema,
  stream: z.boolean().nullish(),
  store: z.boolean().nullish(),
  include: z.array(z.string()).nullish(),
  reasoning: z.looseObject({ effort: z.string().nullish(), summary: z.string().nullish() }).nullish(),
  text: z.looseObject({
    verbosity: z.string().nullish(),
    format: z.looseObject({ type: z.string(), name: z.string().optional(), schema: z.record(z.string(), z.unknown()).optional() }).nullish(),
  }).nullish(),
  previous_response_id: z.string().nullish(),
  metadata: z.record(z.string(), z.unknown()).nullish(),
});

const partSchema = z.looseObject({ type: z.string() });
const textPart = z.looseObject({ type: z.string(), text: z.string() });
const refusalPart = z.looseObject({ type: z.literal('refusal'), refusal: z.string() });
const imagePart = z.looseObject({ type: z.literal('input_image'), image_url: z.string().nullish(), file_id: z.string().nullish(), detail: z.string().nullish() });

const itemSchema = z.looseObject({ type: z.string().optional() });
const messageItem = z.looseObject({
  role: z.enum(['user', 'assistant', 'system', 'developer']),
  content: stringOrParts,
  id: z.string().optional(),
  phase: z.string().nullish(),
});
const functionCallItem = z.looseObject({
  call_id: z.string(),
  name: z.string(),
  arguments: z.string(),
  namespace: z.string().nullish(),
  id: z.string().optional(),
});
const customToolCallItem = z.looseObject({
  call_id: z.string(),
  name: z.string(),
  input: z.string(),
  namespace: z.string().nullish(),
  id: z.string().optional(),
});
const toolOutputItem = z.looseObject({ call_id: z.string(), output: stringOrParts });
const reasoningItem = z.looseObject({
  id: z.string().optional(),
  summary: z.array(z.looseObject({ type: z.string(), text: z.string() })).nullish(),
  content: z.array(z.looseObject({ type: z.string(), text: z.string() })).nullish(),
  encrypted_content: z.string().nullish(),
});

const functionTool = z.looseObject({
  name: z.string().min(1),
  description: z.string().nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  strict: z.boolean().nullish(),
});
const customTool = z.looseObject({
  name: z.string().min(1),
  description: z.string().nullish(),
  format: z.looseObject({ type: z.string(), syntax: z.string().optional(), definition: z.string().optional() }).nullish(),
});
const namespaceTool = z.looseObject({ name: z.string().min(1), description: z.string().nullish(), tools: z.array(z.unknown()) });

function contentPart(raw: unknown, path: Path): ContentPart {
  const p = check(partSchema, raw, path);
  switch (p.type) {
    case 'input_text':
    case 'output_text':
    case 'text':
    case 'summary_text':
    case 'reasoning_text':
      return { type: 'text', text: check(textPart, raw, path).text };
    case 'refusal':
      return { type: 'text', text: check(refusalPart, raw, path).refusal };
    case 'input_image': {
      const img = check(imagePart, raw, path);
      if (img.image_url) return { type: 'image_url', image_url: { url: img.image_url, ...(img.detail ? { detail: img.detail } : {}) } };
      return p as ContentPart;
    }
    default:
      return p as ContentPart; // input_file, input_audio, …: passed on, the engine decides
  }
}

function parts(raw: string | unknown[], path: Path): string | ContentPart[] {
  return typeof raw === 'string' ? raw : raw.map((x, i) => contentPart(x, [...path, i]));
}

function assistantContent(raw: string | unknown[], path: Path): string | ContentPart[] {
  const c = parts(raw, path);
  if (typeof c === 'string') return c;
  if (c.every((p) => p.type === 'text')) return c.map((p) => (p as { text: string }).text).join('');
  return c;
}

/** The reasoning text of a reasoning item: ours from encrypted_content, else raw content, else summary. */
function reasoningText(r: z.infer<typeof reasoningItem>): string {
  const mine = decodeReasoningToken(r.encrypted_content);
  if (mine !== null) return mine;
  if (r.content?.length) return r.content.map((c) => c.text).join('');
  return (r.summary ?? []).map((s) => s.text).join('\n\n');
}

interface ParsedTools { tools: FunctionTool[]; names: Record<string, ResponsesToolName>; skipped: ResponsesContext['skippedTools'] }

function customToolFunction(t: z.infer<typeof customTool>, flat: string): FunctionTool {
  let description = t.description ?? '';
  const f = t.format;
  if (f && f.type === 'grammar' && f.definition) {
    description += `${description ? '\n\n' : ''}The \`input\` argument must match this ${f.syntax ?? ''} grammar:\n${f.definition}`;
  }
  return {
    type: 'function',
    function: {
      name: flat,
      ...(description ? { description } : {}),
      parameters: { type: 'object', properties: { input: { type: 'string', description: 'Raw input of the tool' } }, required: ['input'], additionalProperties: false },
    },
  };
}

function parseTools(raw: unknown[]): ParsedTools {
  const out: ParsedTools = { tools: [], names: Object.create(null) as Record<string, ResponsesToolName>, skipped: [] };
  const addFunction = (t: z.infer<typeof functionTool>, namespace?: string) => {
    const flat = flatToolName(t.name, namespace);
    out.tools.push({
      type: 'function',
      function: {
        name: flat,
        ...(t.description ? { description: t.description } : {}),
        ...(t.parameters ? { parameters: t.parameters } : {}),
        ...(t.strict != null ? { strict: t.strict } : {}),
      },
    });
    out.names[flat] = { kind: 'function', name: t.name, ...(namespace ? { namespace } : {}) };
  };
  const addCustom = (t: z.infer<typeof customTool>, namespace?: string) => {
    const flat = flatToolName(t.name, namespace);
    out.tools.push(customToolFunction(t, flat));
    out.names[flat] = { kind: 'custom', name: t.name, ...(namespace ? { namespace } : {}) };
  };
  raw.forEach((r, i) => {
    const path = ['tools', i];
    const type = check(partSchema, r, path).type;
    if (type === 'function') {
      // flat Responses form; tolerate the chat form {type, function:{…}} too
      const obj = r as Record<string, unknown>;
      addFunction(check(functionTool, isPlainObject(obj.function) ? obj.function : obj, isPlainObject(obj.function) ? [...path, 'function'] : path));
    } else if (type === 'custom') {
      addCustom(check(customTool, r, path));
    } else if (type === 'namespace') {
      const ns = check(namespaceTool, r, path);
      ns.tools.forEach((inner, j) => {
        const ipath = [...path, 'tools', j];
        const itype = check(partSchema, inner, ipath).type;
        if (itype === 'function') addFunction(check(functionTool, inner, ipath), ns.name);
        else if (itype === 'custom') addCustom(check(customTool, inner, ipath), ns.name);
        else out.skipped.push({ index: i, type: `namespace:${itype}`, name: flatToolName(String((inner as { name?: unknown }).name ?? ''), ns.name) });
      });
    } else {
      const name = (r as { name?: unknown }).name;
      out.skipped.push({ index: i, type, ...(typeof name === 'string' ? { name } : {}) });
    }
  });
  return out;
}

function toolChoice(tc: z.infer<typeof requestSchema>['tool_choice'], names: Record<string, ResponsesToolName>): ToolChoice | undefined {
  if (tc == null) return undefined;
  if (typeof tc === 'string') return tc;
  const o = tc as Record<string, unknown>;
  if (tc.type === 'function' || tc.type === 'custom') {
    if (typeof o.name !== 'string') throw new DialectError('tool_choice.name: required field missing (expected string)');
    const flat = flatToolName(o.name, typeof o.namespace === 'string' ? o.namespace : undefined);
    if (!Object.hasOwn(names, flat)) throw new DialectError(`tool_choice.name: no tool named "${o.name}"`);
    return { type: 'function', function: { name: flat } };
  }
  if (tc.type === 'allowed_tools') return o.mode === 'required' ? 'required' : 'auto';
  return 'auto'; // a hosted tool was forced; it is not offered, so let the model choose
}

function responseFormat(text: z.infer<typeof requestSchema>['text']): CanonicalRequest['response_format'] {
  const f = text?.format;
  if (!f) return undefined;
  if (f.type === 'json_object') return { type: 'json_object' };
  if (f.type === 'json_schema') {
    if (!f.schema) throw new DialectError('text.format.schema: required field missing (expected object)');
    return { type: 'json_schema', json_schema: { name: f.name ?? 'response', schema: f.schema } };
  }
  return undefined;
}

function parseInput(input: string | unknown[], instructions: string | null | undefined, skipped: ResponsesContext['skippedItems']): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (instructions) messages.push({ role: 'system', content: instructions });
  if (typeof input === 'string') {
    messages.push({ role: 'user', content: input });
    return messages;
  }
  // The assistant message being assembled from one model turn's output items.
  let turn: ChatMessage | null = null;
  const flush = () => {
    if (turn) messages.push(turn);
    turn = null;
  };
  const current = (): ChatMessage => (turn ??= { role: 'assistant', content: null });
  const addCall = (call: ToolCall) => {
    const t = current();
    (t.tool_calls ??= []).push(call);
  };

  input.forEach((raw, i) => {
    const path = ['input', i];
    const item = check(itemSchema, raw, path);
    const type = item.type ?? 'message';
    switch (type) {
      case 'message': {
        const m = check(messageItem, raw, path);
        if (m.role !== 'assistant') {
          flush();
          messages.push({ role: m.role, content: parts(m.content, [...path, 'content']) });
          return;
        }
        if (turn && (turn.content !== null || turn.tool_calls)) flush();
        const t = current();
        t.content = assistantContent(m.content, [...path, 'content']);
        if (m.phase) t.dialect_extras = { ...t.dialect_extras, phase: m.phase };
        return;
      }
      case 'reasoning': {
        const r = check(reasoningItem, raw, path);
        if (turn) flush();
        const t = current();
        const text = reasoningText(r);
        if (text) t.reasoning = text;
        t.dialect_extras = {
          ...t.dialect_extras,
          reasoning_item: { id: r.id ?? null, summary: r.summary ?? [], encrypted_content: r.encrypted_content ?? null },
        };
        return;
      }
      case 'function_call': {
        const c = check(functionCallItem, raw, path);
        addCall({ id: c.call_id, type: 'function', function: { name: flatToolName(c.name, c.namespace ?? undefined), arguments: c.arguments } });
        return;
      }
      case 'custom_tool_call': {
        const c = check(customToolCallItem, raw, path);
        addCall({ id: c.call_id, type: 'function', function: { name: flatToolName(c.name, c.namespace ?? undefined), arguments: JSON.stringify({ input: c.input }) } });
        return;
      }
      case 'function_call_output':
      case 'custom_tool_call_output': {
        const o = check(toolOutputItem, raw, path);
        flush();
        const msg: ChatMessage = { role: 'tool', tool_call_id: o.call_id, content: parts(o.output, [...path, 'output']) };
        if (type === 'custom_tool_call_output') msg.dialect_extras = { item_type: type };
        messages.push(msg);
        return;
      }
      case 'item_reference':
        throw new DialectError(`${path.join('.')}: item_reference needs stored responses, which this gateway does not keep; send the full input`);
      default:
        // Hosted tool calls and their outputs (web_search_call, tool_search_call, …) have no canonical form.
        skipped.push({ index: i, type });
    }
  });
  flush();
  return messages;
}

export function parseResponsesRequest(body: unknown): { canonical: CanonicalRequest; context: ResponsesContext } {
  const obj = requireObject(body);
  const req = check(requestSchema, obj);
  if (req.previous_response_id) {
    throw new DialectError('previous_response_id: not supported (this gateway stores no responses); send the full input with store:false');
  }
  if (req.input === undefined) throw new DialectError('input: required field missing (expected string or array)');
  const tools = parseTools(req.tools ?? []);
  const skippedItems: ResponsesContext['skippedItems'] = [];
  const messages = parseInput(req.input, req.instructions, skippedItems);
  const tc = toolChoice(req.tool_choice, tools.names);
  const rf = responseFormat(req.text);

  const canonical: CanonicalRequest = {
    model: req.model,
    messages,
    stream: req.stream ?? false,
    ...(tools.tools.length ? { tools: tools.tools } : {}),
    ...(tc ? { tool_choice: tc } : {}),
    ...(req.max_output_tokens != null ? { max_tokens: req.max_output_tokens } : {}),
    ...(req.temperature != null ? { temperature: req.temperature } : {}),
    ...(req.top_p != null ? { top_p: req.top_p } : {}),
    ...(rf ? { response_format: rf } : {}),
  };

  const echo: Record<string, unknown> = {};
  for (const k of ['instructions', 'tools', 'tool_choice', 'parallel_tool_calls', 'max_output_tokens', 'temperature', 'top_p', 'reasoning', 'text', 'store', 'metadata', 'prompt_cache_key', 'include', 'client_metadata', 'service_tier', 'truncation', 'user', 'safety_identifier'] as const) {
    if (obj[k] !== undefined) echo[k] = obj[k];
  }
  return {
    canonical,
    context: {
      model: req.model,
      toolNames: tools.names,
      skippedTools: tools.skipped,
      skippedItems,
      includeEncryptedReasoning: (req.include ?? []).includes('reasoning.encrypted_content'),
      echo,
    },
  };
}

export const responsesCodec: DialectCodec<ResponsesContext> = {
  dialect: 'openai-responses',
  parseRequest: (body) => parseResponsesRequest(body),
  encodeResponse: (res, ctx) => encodeResponsesResponse(res, ctx),
  streamEncoder: (ctx, meta) => new ResponsesStream(ctx, meta),
  encodeError: (status, message, type) => ({ status, body: responsesErrorBody(status, message, type) }),
};
