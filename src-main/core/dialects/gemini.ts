// Gemini (`v1beta/models/{model}:generateContent` and `:streamGenerateContent?alt=sse`) ⇄ canonical.
// Model and streaming come from the URL. `systemInstruction` → leading system message; contents map in
// place (functionResponse parts become tool messages where they are); thought parts → reasoning.
// Calls without ids get stable ids by position, and responses without ids are matched by name/order.
import { z } from 'zod';
import type { CanonicalRequest, ChatMessage, ContentPart, FunctionTool, ToolCall, ToolChoice } from '../types.js';
import { DialectError, type DialectCodec, type ParseContext } from './codec.js';
import { temperatureSchema, topPSchema } from './validate.js';
import { check, decodeReasoningToken, isPlainObject, requireObject, type Path } from './codec-util.js';
import { encodeGeminiResponse, geminiErrorBody, GeminiStream } from './gemini-stream.js';

const ERR = 'INVALID_ARGUMENT';

export interface GeminiContext {
  /** Model from the URL; echoed as modelVersion. */
  model: string;
  /** generationConfig.thinkingConfig.includeThoughts: thought parts are returned only when true. */
  includeThoughts: boolean;
  /** Tools that are not function declarations (googleSearch, codeExecution, …): not offered, recorded. */
  skippedTools: Array<{ index: number; type: string }>;
  /** Accepted options with no canonical field (thinkingConfig, penalties, safetySettings, …). */
  options: Record<string, unknown>;
}

const partsSchema = z.array(z.unknown());
const contentSchema = z.looseObject({ role: z.string().optional(), parts: partsSchema });
const partSchema = z.looseObject({
  text: z.string().optional(),
  thought: z.boolean().optional(),
  thoughtSignature: z.string().optional(),
});
const functionCallSchema = z.looseObject({ name: z.string(), args: z.record(z.string(), z.unknown()).nullish(), id: z.string().nullish() });
const functionResponseSchema = z.looseObject({ name: z.string(), response: z.unknown().optional(), id: z.string().nullish() });
const inlineDataSchema = z.looseObject({ mimeType: z.string(), data: z.string() });
const fileDataSchema = z.looseObject({ fileUri: z.string(), mimeType: z.string().optional() });

const declarationSchema = z.looseObject({
  name: z.string().min(1),
  description: z.string().nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  parametersJsonSchema: z.unknown().optional(),
});

const generationConfigSchema = z.looseObject({
  temperature: temperatureSchema,
  topP: topPSchema,
  topK: z.number().nullish(),
  presencePenalty: z.number().nullish(),
  frequencyPenalty: z.number().nullish(),
  maxOutputTokens: z.number().int().positive().nullish(),
  stopSequences: z.array(z.string()).nullish(),
  candidateCount: z.number().int().min(1).max(1, 'candidateCount > 1 is not supported by the gateway yet').nullish(),
  seed: z.number().int().nullish(),
  responseMimeType: z.string().nullish(),
  responseSchema: z.record(z.string(), z.unknown()).nullish(),
  responseJsonSchema: z.unknown().optional(),
  thinkingConfig: z.looseObject({ includeThoughts: z.boolean().nullish(), thinkingBudget: z.number().nullish(), thinkingLevel: z.string().nullish() }).nullish(),
});

const requestSchema = z.looseObject({
  model: z.string().optional(),
  contents: z.union([z.array(z.unknown()), z.looseObject({})], { error: 'expected array of Content' }),
  systemInstruction: z.union([z.string(), z.looseObject({ parts: partsSchema })], { error: 'expected Content ({parts:[…]}) or string' }).nullish(),
  tools: z.array(z.unknown()).nullish(),
  toolConfig: z.looseObject({
    functionCallingConfig: z.looseObject({
      mode: z.enum(['AUTO', 'ANY', 'NONE', 'VALIDATED', 'MODE_UNSPECIFIED']).nullish(),
      allowedFunctionNames: z.array(z.string()).nullish(),
    }).nullish(),
  }).nullish(),
  generationConfig: generationConfigSchema.nullish(),
});

const TYPE_NAMES = new Set(['STRING', 'NUMBER', 'INTEGER', 'BOOLEAN', 'ARRAY', 'OBJECT', 'NULL']);

/**
 * Gemini's OpenAPI-flavoured schema (uppercase `type`, `nullable`) → JSON Schema. Lowercase JSON Schema
 * (parametersJsonSchema) passes through unchanged, so this is safe on both.
 */
export function geminiSchemaToJsonSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(geminiSchemaToJsonSchema);
  if (!isPlainObject(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'type') {
      if (typeof v === 'string') {
        if (v === 'TYPE_UNSPECIFIED') continue;
        out.type = TYPE_NAMES.has(v) ? v.toLowerCase() : v;
      } else if (Array.isArray(v)) {
        out.type = v.map((t) => (typeof t === 'string' && TYPE_NAMES.has(t) ? t.toLowerCase() : t));
      } else out.type = v;
    } else if (k === 'properties' || k === '$defs' || k === 'definitions' || k === 'patternProperties') {
      out[k] = isPlainObject(v) ? Object.fromEntries(Object.entries(v).map(([pk, pv]) => [pk, geminiSchemaToJsonSchema(pv)])) : v;
    } else if (k === 'items' || k === 'additionalProperties' || k === 'not' || k === 'anyOf' || k === 'oneOf' || k === 'allOf' || k === 'prefixItems') {
      out[k] = geminiSchemaToJsonSchema(v);
    } else if (k === 'nullable') {
      continue;
    } else out[k] = v;
  }
  if (schema.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  return out;
}

function jsonSchemaObject(v: unknown, path: Path): Record<string, unknown> {
  if (!isPlainObject(v)) throw new DialectError(`${path.join('.')}: expected a schema object`, 400, ERR);
  return geminiSchemaToJsonSchema(v) as Record<string, unknown>;
}

function textContent(parts: ContentPart[]): ChatMessage['content'] {
  return parts.length === 1 && parts[0].type === 'text' ? (parts[0] as { text: string }).text : parts;
}

function mediaPart(mimeType: string, url: string): ContentPart {
  if (mimeType.startsWith('image/')) return { type: 'image_url', image_url: { url } };
  return { type: 'file', file: { file_data: url, mime_type: mimeType } };
}

interface PendingCall { id: string; name: string; answered: boolean }

/** Maps contents in order; keeps the pending calls so responses without ids find theirs. */
class ContentsMapper {
  readonly messages: ChatMessage[] = [];
  private pending: PendingCall[] = [];

  user(parts: unknown[], ci: number): void {
    let buf: ContentPart[] = [];
    const flush = () => {
      if (buf.length) this.messages.push({ role: 'user', content: textContent(buf) });
      buf = [];
    };
    parts.forEach((raw, pi) => {
      const path = ['contents', ci, 'parts', pi];
      const p = check(partSchema, raw, path, ERR);
      if (p.functionResponse !== undefined) {
        flush();
        this.messages.push(this.toolMessage(check(functionResponseSchema, p.functionResponse, [...path, 'functionResponse'], ERR), ci, pi));
      } else if (p.text !== undefined) {
        buf.push({ type: 'text', text: p.text });
      } else if (p.inlineData !== undefined) {
        const d = check(inlineDataSchema, p.inlineData, [...path, 'inlineData'], ERR);
        buf.push(mediaPart(d.mimeType, `data:${d.mimeType};base64,${d.data}`));
      } else if (p.fileData !== undefined) {
        const d = check(fileDataSchema, p.fileData, [...path, 'fileData'], ERR);
        buf.push(mediaPart(d.mimeType ?? 'application/octet-stream', d.fileUri));
      } else {
        throw new DialectError(`${path.join('.')}: unsupported part in a user turn (expected text, inlineData, fileData or functionResponse)`, 400, ERR);
      }
    });
    flush();
  }

  private toolMessage(fr: z.infer<typeof functionResponseSchema>, ci: number, pi: number): ChatMessage {
    let id = fr.id ?? undefined;
    if (id) {
      const match = this.pending.find((c) => c.id === id && !c.answered);
      if (match) match.answered = true;
    } else {
      const match = this.pending.find((c) => !c.answered && c.name === fr.name) ?? this.pending.find((c) => !c.answered);
      if (match) {
        match.answered = true;
        id = match.id;
      } else id = `call_${ci}_${pi}`;
    }
    const resp = fr.response;
    const msg: ChatMessage = { role: 'tool', tool_call_id: id, name: fr.name, content: '' };
    // Gemini CLI wraps results as {output: "…"}: the model sees the text; the key is kept for the record.
    if (isPlainObject(resp) && Object.keys(resp).length === 1 && typeof resp.output === 'string') {
      msg.content = resp.output;
      msg.dialect_extras = { response_key: 'output' };
    } else {
      msg.content = JSON.stringify(resp ?? {});
    }
    return msg;
  }

  model(parts: unknown[], ci: number): void {
    const texts: string[] = [];
    const thoughts: string[] = [];
    const calls: ToolCall[] = [];
    const signatures: Array<{ part: number; signature: string }> = [];
    const other: unknown[] = [];
    parts.forEach((raw, pi) => {
      const path = ['contents', ci, 'parts', pi];
      const p = check(partSchema, raw, path, ERR);
      if (p.thoughtSignature !== undefined) signatures.push({ part: pi, signature: p.thoughtSignature });
      if (p.functionCall !== undefined) {
        const fc = check(functionCallSchema, p.functionCall, [...path, 'functionCall'], ERR);
        const id = fc.id ?? `call_${ci}_${pi}`;
        calls.push({ id, type: 'function', function: { name: fc.name, arguments: JSON.stringify(fc.args ?? {}) } });
      } else if (p.text !== undefined) {
        (p.thought ? thoughts : texts).push(p.text);
      } else if (p.thoughtSignature === undefined || Object.keys(p).length > 1) {
        other.push(raw);
      }
    });
    // A new model turn answers nothing of the previous one any more.
    this.pending = calls.map((c) => ({ id: c.id, name: c.function.name, answered: false }));
    const msg: ChatMessage = { role: 'assistant', content: texts.length ? texts.join('') : calls.length ? null : '' };
    if (calls.length) msg.tool_calls = calls;
    let reasoning = thoughts.join('');
    if (!reasoning) {
      for (const s of signatures) {
        const mine = decodeReasoningToken(s.signature);
        if (mine) { reasoning = mine; break; }
      }
    }
    if (reasoning) msg.reasoning = reasoning;
    const extras: Record<string, unknown> = {};
    if (signatures.length) extras.thought_signatures = signatures;
    if (other.length) extras.unrendered_parts = other;
    if (Object.keys(extras).length) msg.dialect_extras = extras;
    this.messages.push(msg);
  }
}

function systemMessage(si: string | { parts: unknown[] }): ChatMessage | null {
  if (typeof si === 'string') return { role: 'system', content: si };
  const parts = si.parts.map((raw, i) => {
    const p = check(partSchema, raw, ['systemInstruction', 'parts', i], ERR);
    if (p.text === undefined) throw new DialectError(`systemInstruction.parts.${i}.text: required field missing (expected string)`, 400, ERR);
    return { type: 'text', text: p.text } as ContentPart;
  });
  if (parts.length === 0) return null;
  return { role: 'system', content: textContent(parts) };
}

function parseTools(raw: unknown[]): { tools: FunctionTool[]; skipped: GeminiContext['skippedTools'] } {
  const tools: FunctionTool[] = [];
  const skipped: GeminiContext['skippedTools'] = [];
  raw.forEach((t, i) => {
    if (!isPlainObject(t)) throw new DialectError(`tools.${i}: expected object, got ${Array.isArray(t) ? 'array' : typeof t}`, 400, ERR);
    for (const [key, value] of Object.entries(t)) {
      if (key !== 'functionDeclarations' && key !== 'function_declarations') {
        skipped.push({ index: i, type: key });
        continue;
      }
      const decls = check(z.array(z.unknown()), value, ['tools', i, key], ERR);
      decls.forEach((d, j) => {
        const path = ['tools', i, key, j];
        const decl = check(declarationSchema, d, path, ERR);
        const params = decl.parametersJsonSchema !== undefined
          ? jsonSchemaObject(decl.parametersJsonSchema, [...path, 'parametersJsonSchema'])
          : decl.parameters ? jsonSchemaObject(decl.parameters, [...path, 'parameters']) : undefined;
        tools.push({ type: 'function', function: { name: decl.name, ...(decl.description ? { description: decl.description } : {}), ...(params ? { parameters: params } : {}) } });
      });
    }
  });
  return { tools, skipped };
}

function toolChoice(tc: z.infer<typeof requestSchema>['toolConfig']): ToolChoice | undefined {
  const fcc = tc?.functionCallingConfig;
  if (!fcc?.mode) return undefined;
  if (fcc.mode === 'NONE') return 'none';
  if (fcc.mode === 'ANY') {
    const names = fcc.allowedFunctionNames ?? [];
    return names.length === 1 ? { type: 'function', function: { name: names[0] } } : 'required';
  }
  return 'auto';
}

function responseFormat(gc: z.infer<typeof generationConfigSchema> | null | undefined): CanonicalRequest['response_format'] {
  if (!gc?.responseMimeType || !gc.responseMimeType.startsWith('application/json')) return undefined;
  const schema = gc.responseJsonSchema ?? gc.responseSchema;
  if (schema === undefined || schema === null) return { type: 'json_object' };
  return { type: 'json_schema', json_schema: { name: 'response', schema: jsonSchemaObject(schema, ['generationConfig', gc.responseJsonSchema !== undefined ? 'responseJsonSchema' : 'responseSchema']) } };
}

export function parseGeminiRequest(body: unknown, ctx: ParseContext = {}): { canonical: CanonicalRequest; context: GeminiContext } {
  const obj = requireObject(body, ERR);
  const req = check(requestSchema, obj, [], ERR);
  const model = ctx.urlModel ?? req.model?.replace(/^models\//, '');
  if (!model) throw new DialectError('model: missing from the URL (…/models/{model}:generateContent)', 400, ERR);
  const contents = Array.isArray(req.contents) ? req.contents : [req.contents];

  const messages: ChatMessage[] = [];
  if (req.systemInstruction != null) {
    const sys = systemMessage(req.systemInstruction);
    if (sys) messages.push(sys);
  }
  const mapper = new ContentsMapper();
  contents.forEach((raw, ci) => {
    const c = check(contentSchema, raw, ['contents', ci], ERR);
    const role = c.role ?? 'user';
    if (role === 'model') mapper.model(c.parts, ci);
    else if (role === 'user' || role === 'function') mapper.user(c.parts, ci);
    else throw new DialectError(`contents.${ci}.role: expected "user" or "model", got "${role}"`, 400, ERR);
  });
  messages.push(...mapper.messages);

  const { tools, skipped } = parseTools(req.tools ?? []);
  const gc = req.generationConfig;
  const tc = toolChoice(req.toolConfig);
  const rf = responseFormat(gc);
  const canonical: CanonicalRequest = {
    model,
    messages,
    stream: ctx.urlStream ?? false,
    ...(tools.length ? { tools } : {}),
    ...(tc ? { tool_choice: tc } : {}),
    ...(gc?.maxOutputTokens != null ? { max_tokens: gc.maxOutputTokens } : {}),
    ...(gc?.temperature != null ? { temperature: gc.temperature } : {}),
    ...(gc?.topP != null ? { top_p: gc.topP } : {}),
    ...(gc?.topK != null ? { top_k: Math.round(gc.topK) } : {}),
    ...(gc?.presencePenalty != null ? { presence_penalty: gc.presencePenalty } : {}),
    ...(gc?.frequencyPenalty != null ? { frequency_penalty: gc.frequencyPenalty } : {}),
    ...(gc?.stopSequences?.length ? { stop: gc.stopSequences } : {}),
    ...(gc?.seed != null ? { seed: gc.seed } : {}),
    ...(rf ? { response_format: rf } : {}),
  };
  if (gc?.thinkingConfig?.thinkingBudget === 0) canonical.chat_template_kwargs = { enable_thinking: false };

  const options: Record<string, unknown> = {};
  for (const k of ['safetySettings', 'cachedContent', 'labels'] as const) if (obj[k] !== undefined) options[k] = obj[k];
  if (gc) {
    for (const [k, v] of Object.entries(gc)) {
      if (!['temperature', 'topP', 'topK', 'presencePenalty', 'frequencyPenalty', 'maxOutputTokens', 'stopSequences', 'candidateCount', 'seed', 'responseMimeType', 'responseSchema', 'responseJsonSchema'].includes(k)) options[k] = v;
    }
  }
  return {
    canonical,
    context: { model, includeThoughts: gc?.thinkingConfig?.includeThoughts === true, skippedTools: skipped, options },
  };
}

export const geminiCodec: DialectCodec<GeminiContext> = {
  dialect: 'gemini',
  parseRequest: (body, ctx) => parseGeminiRequest(body, ctx),
  encodeResponse: (res, ctx) => encodeGeminiResponse(res, ctx),
  streamEncoder: (ctx, meta) => new GeminiStream(ctx, meta),
  encodeError: (status, message, type) => ({ status, body: geminiErrorBody(status, message, type) }),
};
