// Malformed requests in every dialect get a 4xx in that dialect's error shape (never a 5xx, never a
// crash, never a recorded completion); unknown session keys get the dialect's 401.
import Anthropic from '@anthropic-ai/sdk';
import { ApiError, GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';

const LIMIT = 256 * 1024;
let app: TestApp;
let session: { id: string; key: string; urls: { openai: string; anthropic: string; gemini: string } };
beforeAll(async () => {
  app = await startTestApp({ bodyLimitBytes: LIMIT });
  session = await app.createSession({ engine: 'sim-vllm' });
});
afterAll(async () => { await app?.stop(); });

type Shape = 'openai' | 'anthropic' | 'gemini';
interface Dialect {
  name: string;
  shape: Shape;
  url(s: typeof session): string;
  valid: Record<string, unknown>;
  /** [what, body, text the error message must contain] */
  wrong: Array<[string, unknown, RegExp]>;
}

const dialects: Dialect[] = [
  {
    name: 'OpenAI chat', shape: 'openai', url: (s) => `${s.urls.openai}/chat/completions`,
    valid: { model: 'm', messages: [{ role: 'user', content: 'say hi' }], max_tokens: 16 },
    wrong: [
      ['content a number', { model: 'm', messages: [{ role: 'user', content: 42 }] }, /messages\.0\.content/],
      ['messages a string', { model: 'm', messages: 'hi' }, /messages/],
      ['unknown role', { model: 'm', messages: [{ role: 'wizard', content: 'hi' }] }, /messages\.0/],
      ['tool without id', { model: 'm', messages: [{ role: 'tool', content: 'x' }] }, /tool_call_id/],
      ['max_tokens a string', { model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 'lots' }, /max_tokens/],
      ['tools not an array', { model: 'm', messages: [{ role: 'user', content: 'hi' }], tools: { name: 'f' } }, /tools/],
      ['missing messages', { model: 'm' }, /messages/],
      ['missing model', { messages: [{ role: 'user', content: 'hi' }] }, /model/],
    ],
  },
  {
    name: 'Responses', shape: 'openai', url: (s) => `${s.urls.openai}/responses`,
    valid: { model: 'm', input: 'say hi', max_output_tokens: 16 },
    wrong: [
      ['input a number', { model: 'm', input: 7 }, /input/],
      ['only an item of unknown type', { model: 'm', input: [{ type: 'teleport', role: 'user' }] }, /input/],
      ['function_call_output without call_id', { model: 'm', input: [{ type: 'function_call_output', output: 'x' }] }, /input\.0/],
      ['message content a number', { model: 'm', input: [{ type: 'message', role: 'user', content: 5 }] }, /input\.0/],
      ['tools an object', { model: 'm', input: 'hi', tools: { type: 'function' } }, /tools/],
      ['function tool without name', { model: 'm', input: 'hi', tools: [{ type: 'function', parameters: {} }] }, /tools\.0/],
      ['max_output_tokens negative', { model: 'm', input: 'hi', max_output_tokens: -5 }, /max_output_tokens/],
      ['missing model', { input: 'hi' }, /model/],
    ],
  },
  {
    name: 'Anthropic', shape: 'anthropic', url: (s) => `${s.urls.anthropic}/v1/messages`,
    valid: { model: 'm', max_tokens: 16, messages: [{ role: 'user', content: 'say hi' }] },
    wrong: [
      ['content a number', { model: 'm', max_tokens: 16, messages: [{ role: 'user', content: 3 }] }, /messages\.0\.content/],
      ['block without type', { model: 'm', max_tokens: 16, messages: [{ role: 'user', content: [{ text: 'hi' }] }] }, /messages\.0\.content\.0/],
      ['tool_result without tool_use_id', { model: 'm', max_tokens: 16, messages: [{ role: 'user', content: [{ type: 'tool_result', content: 'x' }] }] }, /tool_use_id/],
      ['tool_use without id', { model: 'm', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: [{ type: 'tool_use', name: 'f', input: {} }] }] }, /messages\.1\.content\.0/],
      ['system a number', { model: 'm', max_tokens: 16, system: 1, messages: [{ role: 'user', content: 'hi' }] }, /system/],
      ['tool without input_schema', { model: 'm', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }], tools: [{ name: 'f' }] }, /tools\.0/],
      ['tool_choice tool without name', { model: 'm', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }], tool_choice: { type: 'tool' } }, /tool_choice/],
      ['missing max_tokens', { model: 'm', messages: [{ role: 'user', content: 'hi' }] }, /max_tokens/],
      ['missing messages', { model: 'm', max_tokens: 16 }, /messages/],
    ],
  },
  {
    name: 'Anthropic count_tokens', shape: 'anthropic', url: (s) => `${s.urls.anthropic}/v1/messages/count_tokens`,
    valid: { model: 'm', messages: [{ role: 'user', content: 'say hi' }] },
    wrong: [
      ['messages a string', { model: 'm', messages: 'hi' }, /messages/],
      ['unknown role', { model: 'm', messages: [{ role: 'robot', content: 'hi' }] }, /messages\.0/],
      ['missing model', { messages: [{ role: 'user', content: 'hi' }] }, /model/],
    ],
  },
  {
    name: 'Gemini generateContent', shape: 'gemini', url: (s) => `${s.urls.gemini}/v1beta/models/m:generateContent`,
    valid: { contents: [{ role: 'user', parts: [{ text: 'say hi' }] }], generationConfig: { maxOutputTokens: 16 } },
    wrong: [
      ['contents a number', { contents: 3 }, /contents/],
      ['parts a string', { contents: [{ role: 'user', parts: 'hi' }] }, /contents\.0\.parts/],
      ['text a number', { contents: [{ role: 'user', parts: [{ text: 5 }] }] }, /contents\.0\.parts\.0/],
      ['functionCall without name', { contents: [{ role: 'model', parts: [{ functionCall: { args: {} } }] }] }, /contents\.0\.parts\.0/],
      ['declaration without name', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }], tools: [{ functionDeclarations: [{ description: 'x' }] }] }, /tools\.0/],
      ['maxOutputTokens a string', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig: { maxOutputTokens: 'many' } }, /maxOutputTokens/],
      ['missing contents', { generationConfig: {} }, /contents/],
    ],
  },
  {
    name: 'Gemini streamGenerateContent', shape: 'gemini', url: (s) => `${s.urls.gemini}/v1beta/models/m:streamGenerateContent?alt=sse`,
    valid: { contents: [{ role: 'user', parts: [{ text: 'say hi' }] }], generationConfig: { maxOutputTokens: 16 } },
    wrong: [
      ['contents a string', { contents: 'hi' }, /contents/],
      ['role a number', { contents: [{ role: 1, parts: [{ text: 'hi' }] }] }, /contents\.0/],
      ['missing contents', {}, /contents/],
    ],
  },
];

function expectShape(shape: Shape, status: number, json: any) {
  if (shape === 'anthropic') {
    expect(json.type).toBe('error');
    expect(typeof json.error.type).toBe('string');
    expect(typeof json.error.message).toBe('string');
  } else if (shape === 'gemini') {
    expect(json.error.code).toBe(status);
    expect(typeof json.error.status).toBe('string');
    expect(typeof json.error.message).toBe('string');
  } else {
    expect(typeof json.error.message).toBe('string');
    expect(typeof json.error.type).toBe('string');
  }
}

async function post(url: string, body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) {
  const res = await fetch(url, { method: 'POST', headers, body });
  const text = await res.text();
  let json: any;
  try { json = JSON.parse(text); } catch { json = { unparsable: text }; }
  return { status: res.status, json, contentType: res.headers.get('content-type') ?? '' };
}

describe.each(dialects)('$name', (d) => {
  async function expect4xx(body: string, status = 400, headers?: Record<string, string>) {
    const r = await post(d.url(session), body, headers);
    expect(r.status, JSON.stringify(r.json)).toBe(status);
    expect(r.contentType).toMatch(/application\/json/);
    expectShape(d.shape, r.status, r.json);
    return r.json;
  }

  it('accepts the valid baseline', async () => {
    const r = await post(d.url(session), JSON.stringify(d.valid));
    expect(r.status, JSON.stringify(r.json)).toBe(200);
  });

  it('rejects invalid JSON', async () => {
    for (const raw of ['{', '{"model": "m", "messages": [', 'not json', '{"a":1}}']) await expect4xx(raw);
  });

  it('rejects JSON that is not an object', async () => {
    for (const raw of ['null', '[]', '[{"model":"m"}]', '"hi"', '42', 'true']) await expect4xx(raw);
  });

  it('rejects an empty body', async () => { await expect4xx(''); });

  for (const [what, body, mention] of d.wrong) {
    it(`rejects ${what} and names the field`, async () => {
      const json = await expect4xx(JSON.stringify(body));
      expect(json.error.message).toMatch(mention);
    });
  }

  it('never answers 5xx when a top-level field has the wrong type', async () => {
    for (const field of Object.keys(d.valid)) {
      for (const v of [null, 0, -1, 'x', true, [], {}, [null]]) {
        const r = await post(d.url(session), JSON.stringify({ ...d.valid, [field]: v }));
        expect(r.status, `${field}=${JSON.stringify(v)}: ${JSON.stringify(r.json)}`).toBeLessThan(500);
        if (r.status >= 400) expectShape(d.shape, r.status, r.json);
      }
    }
  });

  it('rejects a body over the limit with 413', async () => {
    const huge = JSON.stringify({ ...d.valid, padding: 'x'.repeat(LIMIT + 1) });
    const json = await expect4xx(huge, 413);
    expect(json.error.message).toMatch(/larger than the limit|too large/i);
    if (d.shape === 'anthropic') expect(json.error.type).toBe('request_too_large');
  });

  it('rejects a body that is not JSON by content type', async () => {
    const r = await post(d.url(session), JSON.stringify(d.valid), { 'content-type': 'text/plain' });
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    expectShape(d.shape, r.status, r.json);
  });

  it('rejects an unknown session key with the dialect 401', async () => {
    const bogus = { ...session, urls: { openai: `${app.url}/s/${'f'.repeat(32)}/v1`, anthropic: `${app.url}/s/${'f'.repeat(32)}`, gemini: `${app.url}/s/${'f'.repeat(32)}` } };
    for (const url of [d.url(bogus), d.url(bogus).replace(`/s/${'f'.repeat(32)}`, '/s/not-a-key')]) {
      const r = await post(url, JSON.stringify(d.valid));
      expect(r.status).toBe(401);
      expectShape(d.shape, 401, r.json);
      if (d.shape === 'anthropic') expect(r.json.error.type).toBe('authentication_error');
      if (d.shape === 'gemini') expect(r.json.error).toMatchObject({ code: 401, status: 'UNAUTHENTICATED' });
      if (d.shape === 'openai') expect(r.json.error.type).toBe('authentication_error');
    }
    // On the bare origin the key travels as the API key header of the dialect.
    const bare = d.url(session).replace(`/s/${session.key}`, '');
    const header = d.shape === 'anthropic' ? 'x-api-key' : d.shape === 'gemini' ? 'x-goog-api-key' : 'authorization';
    const value = d.shape === 'openai' ? `Bearer ${'e'.repeat(32)}` : 'e'.repeat(32);
    const r = await post(bare, JSON.stringify(d.valid), { 'content-type': 'application/json', [header]: value });
    expect(r.status).toBe(401);
    expectShape(d.shape, 401, r.json);
    const none = await post(bare, JSON.stringify(d.valid));
    expect(none.status).toBe(401);
    expectShape(d.shape, 401, none.json);
  });
});

describe('official SDKs see the dialect errors', () => {
  it('openai: BadRequestError and AuthenticationError (chat and Responses)', async () => {
    const client = new OpenAI({ baseURL: session.urls.openai, apiKey: session.key, maxRetries: 0 });
    await expect(client.responses.create({ model: 'm', input: 7 as unknown as string })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    await expect(client.chat.completions.create({ model: 'm', messages: 'x' as never })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    const bogus = new OpenAI({ baseURL: `${app.url}/s/${'0'.repeat(32)}/v1`, apiKey: 'x', maxRetries: 0 });
    await expect(bogus.responses.create({ model: 'm', input: 'hi' })).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('anthropic: BadRequestError with invalid_request_error, AuthenticationError with authentication_error', async () => {
    const client = new Anthropic({ baseURL: session.urls.anthropic, apiKey: session.key, maxRetries: 0 });
    const err = await client.messages.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] } as never).catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(err.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    const bogus = new Anthropic({ baseURL: `${app.url}/s/${'0'.repeat(32)}`, apiKey: 'x', maxRetries: 0 });
    const auth = await bogus.messages.stream({ model: 'm', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }).finalMessage().catch((e) => e);
    expect(auth).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(auth.error).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
  });

  it('@google/genai: ApiError with status 400 and 401', async () => {
    const ai = new GoogleGenAI({ apiKey: session.key, httpOptions: { baseUrl: session.urls.gemini } });
    const err = await ai.models.generateContent({ model: 'm', contents: [{ role: 'user', parts: [{ functionCall: { args: {} } }] }] }).catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(400);
    const bogus = new GoogleGenAI({ apiKey: 'x', httpOptions: { baseUrl: `${app.url}/s/${'0'.repeat(32)}` } });
    const auth = await bogus.models.generateContent({ model: 'm', contents: 'hi' }).catch((e) => e);
    expect(auth).toBeInstanceOf(ApiError);
    expect(auth.status).toBe(401);
    expect(JSON.parse(auth.message)).toMatchObject({ error: { code: 401, status: 'UNAUTHENTICATED' } });
  });
});

describe('after all of that', () => {
  it('recorded only the valid baselines and still serves', async () => {
    const { completions } = await app.api(`/api/sessions/${session.id}/completions`);
    // One valid baseline per dialect route that completes (count_tokens records nothing), plus any
    // wrong-type variant the dialect legitimately accepts (e.g. a null optional field).
    expect(completions.filter((c: any) => c.status !== 'ok').map((c: any) => `${c.dialect}: ${c.error} ${JSON.stringify(c.requestReceived)}`)).toEqual([]);
    const r = await post(`${session.urls.openai}/chat/completions`, JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'say hi' }] }));
    expect(r.status).toBe(200);
    const health = await app.api('/api/health');
    expect(health.ok).toBe(true);
  });
});
