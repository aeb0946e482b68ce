import { GoogleGenAI } from '@google/genai';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DialectError } from '../../src-main/core/dialects/codec.js';
import { geminiCodec, geminiSchemaToJsonSchema, parseGeminiRequest, type GeminiContext } from '../../src-main/core/dialects/gemini.js';
import type { CanonicalDelta, CanonicalResponse } from '../../src-main/core/types.js';
import { fakeFetch, loadCaptures, parseSse } from './dialect-fixtures.js';

const captures = loadCaptures((f) => /-gemini-(generateContent|streamGenerateContent)\.json$/.test(f));

function urlCtx(path: string) {
  const m = /\/models\/([^/:]+):(\w+)$/.exec(path)!;
  return { urlModel: m[1], urlStream: m[2] === 'streamGenerateContent' };
}

function response(over: Partial<CanonicalResponse['message']> = {}, finish: CanonicalResponse['finish_reason'] = 'stop'): CanonicalResponse {
  return {
    id: 'abc123',
    model: 'qwen3',
    created: 1_700_000_000,
    message: { role: 'assistant', content: null, reasoning: null, tool_calls: [], ...over },
    finish_reason: finish,
    usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
  };
}

function runStream(ctx: GeminiContext, deltas: CanonicalDelta[], res: CanonicalResponse): string[] {
  const enc = geminiCodec.streamEncoder(ctx, { id: res.id, model: res.model, created: res.created });
  return [...enc.start(), ...deltas.flatMap((d) => enc.delta(d)), ...enc.finish(res)];
}

function sdk(body: string, contentType: string) {
  vi.stubGlobal('fetch', fakeFetch(body, contentType));
  return new GoogleGenAI({ apiKey: 'x', httpOptions: { baseUrl: 'http://gw.test' } });
}

afterEach(() => { vi.unstubAllGlobals(); });

const toolCap = captures.find((c) => c.file === 'gemini/p-tool-yolo/002-gemini-streamGenerateContent.json')!;
const routerCap = captures.find((c) => c.file === 'gemini/p-text/001-gemini-generateContent.json')!;
const ctxThoughts: GeminiContext = parseGeminiRequest(toolCap.body, urlCtx(toolCap.path)).context;
const ctxPlain: GeminiContext = { ...ctxThoughts, includeThoughts: false };

describe('gemini codec: captured requests', () => {
  it('has captures to replay', () => {
    expect(captures.length).toBeGreaterThanOrEqual(5);
  });

  for (const cap of captures) {
    it(`parses ${cap.file}`, () => {
      const body = cap.body as any;
      const ctx = urlCtx(cap.path);
      const { canonical, context } = geminiCodec.parseRequest(body, ctx);
      expect(canonical.model).toBe(ctx.urlModel);
      expect(canonical.stream).toBe(ctx.urlStream);
      expect(canonical.messages[0].role).toBe('system');
      const decls = (body.tools ?? []).flatMap((t: any) => t.functionDeclarations ?? []);
      expect(canonical.tools?.length ?? 0).toBe(decls.length);
      for (const t of canonical.tools ?? []) expect(JSON.stringify(t.function.parameters ?? {})).not.toMatch(/"type":"[A-Z]+"/);
      expect(context.includeThoughts).toBe(true);
      const callIds = canonical.messages.flatMap((m) => m.tool_calls?.map((c) => c.id) ?? []);
      for (const m of canonical.messages.filter((x) => x.role === 'tool')) expect(callIds).toContain(m.tool_call_id);
      expect(canonical.temperature).toBe(1);
      expect(canonical.top_k).toBe(64);
    });
  }

  it('maps the Gemini CLI tool turn', () => {
    const { canonical } = parseGeminiRequest(toolCap.body, urlCtx(toolCap.path));
    expect(canonical.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect((canonical.messages[1].content as any[]).length).toBe(2);
    const asst = canonical.messages[2];
    expect(asst.tool_calls).toEqual([{ id: 'run_shell_command_1795301357212_0', type: 'function', function: { name: 'run_shell_command', arguments: JSON.stringify({ command: 'echo hi-from-tool', description: 'echo' }) } }]);
    expect(asst.dialect_extras).toEqual({ thought_signatures: [{ part: 0, signature: 'skip_thought_signature_validator' }] });
    expect(canonical.messages[3]).toMatchObject({ role: 'tool', tool_call_id: 'run_shell_command_1795301357212_0', name: 'run_shell_command', dialect_extras: { response_key: 'output' } });
    expect(canonical.messages[3].content).toMatch(/^<untrusted_context>\nOutput: hi-from-tool/);
  });

  it('maps the router structured-output call (uppercase schema types) to response_format', () => {
    const { canonical } = parseGeminiRequest(routerCap.body, urlCtx(routerCap.path));
    expect(canonical.stream).toBe(false);
    expect(canonical.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'response', schema: {
        type: 'object',
        properties: { complexity_reasoning: { type: 'string', description: 'Brief explanation for the score.' }, complexity_score: { type: 'integer', description: 'Complexity score from 1-100.' } },
        required: ['complexity_reasoning', 'complexity_score'],
      } },
    });
    expect(canonical.messages.map((m) => m.role)).toEqual(['system', 'user', 'user']);
  });
});

describe('gemini codec: request mapping', () => {
  it('converts OpenAPI-style schemas', () => {
    expect(geminiSchemaToJsonSchema({ type: 'OBJECT', properties: { type: { type: 'STRING', nullable: true }, xs: { type: 'ARRAY', items: { type: 'NUMBER', enum: ['1'] } } }, required: ['type'] }))
      .toEqual({ type: 'object', properties: { type: { type: ['string', 'null'] }, xs: { type: 'array', items: { type: 'number', enum: ['1'] } } }, required: ['type'] });
  });

  it('synthesizes stable call ids and matches responses by name and order', () => {
    const body = {
      contents: [
        { role: 'user', parts: [{ text: 'go' }] },
        { role: 'model', parts: [{ text: 'plan', thought: true }, { functionCall: { name: 'a', args: { x: 1 } } }, { functionCall: { name: 'b', args: {} } }, { functionCall: { name: 'a', args: { x: 2 } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'b', response: { ok: true } } }, { functionResponse: { name: 'a', response: { output: 'one' } } }, { functionResponse: { name: 'a', response: { error: 'two' } } }] },
        { role: 'user', parts: [{ text: 'and' }, { inlineData: { mimeType: 'image/png', data: 'AA' } }] },
      ],
      tools: [{ functionDeclarations: [{ name: 'a', parameters: { type: 'OBJECT', properties: { x: { type: 'INTEGER' } } } }, { name: 'b' }] }, { googleSearch: {} }],
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['a'] } },
      generationConfig: { maxOutputTokens: 9, stopSequences: ['x'], thinkingConfig: { thinkingBudget: 0 } },
    };
    const a = parseGeminiRequest(body, { urlModel: 'm', urlStream: true });
    const b = parseGeminiRequest(body, { urlModel: 'm', urlStream: true });
    expect(a.canonical).toEqual(b.canonical);
    const msgs = a.canonical.messages;
    expect(msgs.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'tool', 'user']);
    expect(msgs[1].reasoning).toBe('plan');
    const [ca, cb, ca2] = msgs[1].tool_calls!;
    expect(new Set([ca.id, cb.id, ca2.id]).size).toBe(3);
    expect(msgs[2]).toEqual({ role: 'tool', tool_call_id: cb.id, name: 'b', content: '{"ok":true}' });
    expect(msgs[3]).toEqual({ role: 'tool', tool_call_id: ca.id, name: 'a', content: 'one', dialect_extras: { response_key: 'output' } });
    expect(msgs[4]).toEqual({ role: 'tool', tool_call_id: ca2.id, name: 'a', content: '{"error":"two"}' });
    expect(msgs[5].content).toEqual([{ type: 'text', text: 'and' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AA' } }]);
    expect(a.canonical.tools).toEqual([
      { type: 'function', function: { name: 'a', parameters: { type: 'object', properties: { x: { type: 'integer' } } } } },
      { type: 'function', function: { name: 'b' } },
    ]);
    expect(a.context.skippedTools).toEqual([{ index: 1, type: 'googleSearch' }]);
    expect(a.canonical.tool_choice).toEqual({ type: 'function', function: { name: 'a' } });
    expect(a.canonical.max_tokens).toBe(9);
    expect(a.canonical.stop).toEqual(['x']);
    expect(a.canonical.chat_template_kwargs).toEqual({ enable_thinking: false });
    expect(parseGeminiRequest({ contents: [], toolConfig: { functionCallingConfig: { mode: 'NONE' } } }, { urlModel: 'm' }).canonical.tool_choice).toBe('none');
  });

  const bad: Array<[string, unknown, RegExp]> = [
    ['non-object', 42, /request body: expected a JSON object/],
    ['missing contents', {}, /^contents: /],
    ['contents item not object', { contents: ['hi'] }, /^contents\.0: expected object/],
    ['parts not array', { contents: [{ role: 'user', parts: 'hi' }] }, /^contents\.0\.parts: expected array/],
    ['text not string', { contents: [{ role: 'user', parts: [{ text: 5 }] }] }, /^contents\.0\.parts\.0\.text: expected string/],
    ['bad role', { contents: [{ role: 'assistant', parts: [{ text: 'x' }] }] }, /^contents\.0\.role/],
    ['functionCall without name', { contents: [{ role: 'model', parts: [{ functionCall: { args: {} } }] }] }, /^contents\.0\.parts\.0\.functionCall\.name/],
    ['declaration without name', { contents: [], tools: [{ functionDeclarations: [{ description: 'x' }] }] }, /^tools\.0\.functionDeclarations\.0\.name/],
    ['bad mode', { contents: [], toolConfig: { functionCallingConfig: { mode: 'SOMETIMES' } } }, /toolConfig\.functionCallingConfig\.mode/],
    ['bad temperature', { contents: [], generationConfig: { temperature: 'hot' } }, /^generationConfig\.temperature: expected number/],
    ['candidateCount 2', { contents: [], generationConfig: { candidateCount: 2 } }, /candidateCount/],
    ['empty user part', { contents: [{ role: 'user', parts: [{}] }] }, /contents\.0\.parts\.0: unsupported part/],
  ];
  for (const [name, body, re] of bad) {
    it(`rejects ${name} with a 400 DialectError`, () => {
      let err: unknown;
      try { geminiCodec.parseRequest(body, { urlModel: 'm' }); } catch (e) { err = e; }
      expect(err).toBeInstanceOf(DialectError);
      expect((err as DialectError).status).toBe(400);
      expect((err as DialectError).message).toMatch(re);
      expect(geminiCodec.encodeError(400, (err as DialectError).message, (err as DialectError).type).body).toEqual({ error: { code: 400, message: (err as DialectError).message, status: 'INVALID_ARGUMENT' } });
    });
  }

  it('needs a model', () => {
    expect(() => geminiCodec.parseRequest({ contents: [] }, {})).toThrow(DialectError);
  });
});

describe('gemini codec: responses', () => {
  it('encodes thought, text and function calls', () => {
    const res = response({ reasoning: 'think', content: 'Hello', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"x":1}' } }] }, 'tool_calls');
    const body = geminiCodec.encodeResponse(res, ctxThoughts) as any;
    const parts = body.candidates[0].content.parts;
    expect(parts[0]).toEqual({ text: 'think', thought: true });
    expect(parts[1]).toMatchObject({ text: 'Hello', thoughtSignature: expect.any(String) });
    expect(parts[2]).toEqual({ functionCall: { name: 'f', args: { x: 1 }, id: 'c1' } });
    expect(body.candidates[0].finishReason).toBe('STOP');
    expect(body.usageMetadata).toEqual({ promptTokenCount: 11, candidatesTokenCount: 7, totalTokenCount: 18 });
    expect(body.modelVersion).toBe('my-gateway-model');
    expect(body.responseId).toBe('abc123');
    expect((geminiCodec.encodeResponse(response({ content: 'x' }, 'length'), ctxThoughts) as any).candidates[0].finishReason).toBe('MAX_TOKENS');
    // thoughts not asked for: not shown, but the signature brings them back with the history
    const plain = (geminiCodec.encodeResponse(res, ctxPlain) as any).candidates[0].content;
    expect(plain.parts.some((p: any) => p.thought)).toBe(false);
    const back = parseGeminiRequest({ contents: [{ role: 'user', parts: [{ text: 'q' }] }, plain] }, { urlModel: 'm' }).canonical;
    expect(back.messages[1]).toMatchObject({ role: 'assistant', content: 'Hello', reasoning: 'think', tool_calls: res.message.tool_calls });
  });

  it('streams data-only chunks; the last one carries finishReason, usage and a part', () => {
    const deltas: CanonicalDelta[] = [
      { kind: 'reasoning', text: 'let me ' },
      { kind: 'reasoning', text: 'think' },
      { kind: 'content', text: 'Hel' },
      { kind: 'content', text: 'lo' },
      { kind: 'tool_call', index: 0, id: 'c1', name: 'f', arguments: '{"x":' },
      { kind: 'tool_call', index: 0, arguments: '1}' },
      { kind: 'tool_call', index: 1, id: 'c2', name: 'g', arguments: '{}' },
    ];
    const res = response({ reasoning: 'let me think', content: 'Hello', tool_calls: [
      { id: 'c1', type: 'function', function: { name: 'f', arguments: '{"x":1}' } },
      { id: 'c2', type: 'function', function: { name: 'g', arguments: '{}' } },
    ] }, 'tool_calls');
    const frames = runStream(ctxThoughts, deltas, res);
    expect(frames.join('')).not.toMatch(/^event:/m);
    expect(frames.join('')).not.toMatch(/\[DONE\]/);
    const chunks = parseSse(frames).map((e) => e.json);
    for (const c of chunks.slice(0, -1)) {
      expect(c.candidates[0].finishReason).toBeUndefined();
      expect(c.candidates[0].content.parts.length).toBeGreaterThan(0);
    }
    const last = chunks.at(-1);
    expect(last.candidates[0].finishReason).toBe('STOP');
    expect(last.usageMetadata.totalTokenCount).toBe(18);
    const parts = chunks.flatMap((c) => c.candidates[0].content.parts);
    expect(parts.filter((p: any) => p.thought).map((p: any) => p.text).join('')).toBe('let me think');
    expect(parts.filter((p: any) => p.text !== undefined && !p.thought).map((p: any) => p.text).join('')).toBe('Hello');
    expect(parts.filter((p: any) => p.functionCall).map((p: any) => p.functionCall)).toEqual([{ name: 'f', args: { x: 1 }, id: 'c1' }, { name: 'g', args: {}, id: 'c2' }]);
  });

  it('the official SDK reads the stream and the non-stream answer', async () => {
    const deltas: CanonicalDelta[] = [
      { kind: 'reasoning', text: 'hmm' },
      { kind: 'content', text: 'Hi ' },
      { kind: 'content', text: 'there' },
      { kind: 'tool_call', index: 0, id: 'c1', name: 'run_shell_command', arguments: '{"command":"ls"}' },
    ];
    const res = response({ reasoning: 'hmm', content: 'Hi there', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'run_shell_command', arguments: '{"command":"ls"}' } }] }, 'tool_calls');
    const ai = sdk(runStream(ctxThoughts, deltas, res).join(''), 'text/event-stream');
    let text = '';
    const calls: unknown[] = [];
    let finish: string | undefined;
    let total: number | undefined;
    for await (const chunk of await ai.models.generateContentStream({ model: 'my-gateway-model', contents: 'hi' })) {
      text += chunk.text ?? '';
      calls.push(...(chunk.functionCalls ?? []));
      finish = chunk.candidates?.[0]?.finishReason ?? finish;
      total = chunk.usageMetadata?.totalTokenCount ?? total;
    }
    expect(text).toBe('Hi there');
    expect(calls).toEqual([{ name: 'run_shell_command', args: { command: 'ls' }, id: 'c1' }]);
    expect(finish).toBe('STOP');
    expect(total).toBe(18);

    const ai2 = sdk(JSON.stringify(geminiCodec.encodeResponse(res, ctxThoughts)), 'application/json');
    const r = await ai2.models.generateContent({ model: 'my-gateway-model', contents: 'hi' });
    expect(r.text).toBe('Hi there');
    expect(r.functionCalls).toEqual([{ name: 'run_shell_command', args: { command: 'ls' }, id: 'c1' }]);
  });

  it('a text-only stream still ends on a chunk with a part; an empty answer gets an empty text part', () => {
    const chunks = parseSse(runStream(ctxPlain, [{ kind: 'content', text: 'a' }, { kind: 'content', text: 'b' }], response({ content: 'ab' }))).map((e) => e.json);
    expect(chunks.map((c) => c.candidates[0].content.parts.map((p: any) => p.text).join(''))).toEqual(['a', 'b']);
    expect(chunks[1].candidates[0].finishReason).toBe('STOP');
    const empty = parseSse(runStream(ctxPlain, [], response({ content: '' }))).map((e) => e.json);
    expect(empty).toHaveLength(1);
    expect(empty[0].candidates[0].content.parts).toEqual([{ text: '' }]);
  });

  it('mid-stream errors are an error data frame the SDK throws on', async () => {
    const enc = geminiCodec.streamEncoder(ctxPlain, { id: 'e1', model: 'm', created: 0 });
    const frames = [...enc.start(), ...enc.delta({ kind: 'content', text: 'partial' }), ...enc.delta({ kind: 'content', text: ' more' }), ...enc.error(500, 'engine died')];
    const events = parseSse(frames);
    expect(events.at(-1)!.json).toEqual({ error: { code: 500, message: 'engine died', status: 'INTERNAL' } });
    const ai = sdk(frames.join(''), 'text/event-stream');
    await expect((async () => {
      for await (const _ of await ai.models.generateContentStream({ model: 'm', contents: 'x' })) { /* drain */ }
    })()).rejects.toThrow(/engine died/);
  });

  it('error envelopes', () => {
    expect(geminiCodec.encodeError(401, 'bad key').body).toEqual({ error: { code: 401, message: 'bad key', status: 'UNAUTHENTICATED' } });
    expect((geminiCodec.encodeError(404, 'x').body as any).error.status).toBe('NOT_FOUND');
    expect((geminiCodec.encodeError(429, 'x').body as any).error.status).toBe('RESOURCE_EXHAUSTED');
    expect((geminiCodec.encodeError(500, 'x', 'invalid_request_error').body as any).error.status).toBe('INTERNAL');
  });
});
