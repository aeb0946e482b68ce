// SDK retries are recorded once more, linked to the attempt they repeat (retryOf); engines failing in the
// middle of a stream give the agent its dialect's error event and leave an `error` record (DESIGN §5, §9).
import Anthropic from '@anthropic-ai/sdk';
import { ApiError, GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src-main/app.js';
import { startSimEngine, type SimEngine } from '../../src-main/engines/sim/index.js';

const MODEL = 'Qwen/Qwen3-8B';
let dataDir: string;
let app: App;
let vllm: SimEngine;
let sglang: SimEngine;
const sims = () => [vllm, sglang];

beforeAll(async () => {
  vllm = await startSimEngine({ flavor: 'vllm', seed: 3, skill: 1, maxModelLen: 131072, perTokenMs: 2 });
  sglang = await startSimEngine({ flavor: 'sglang', seed: 3, skill: 1, maxModelLen: 131072, perTokenMs: 2 });
  dataDir = mkdtempSync(join(tmpdir(), 'rollgate-retry-'));
  app = await createApp({
    dataDir, port: 0, sim: false,
    engines: [
      { id: 'flaky-vllm', kind: 'vllm', replicas: [vllm.url], model: MODEL, mode: 'chat', tokenizer: 'builtin:qwen3' },
      { id: 'flaky-sglang', kind: 'sglang', replicas: [sglang.url], model: MODEL, mode: 'token', tokenizer: 'builtin:qwen3' },
    ],
  });
});
afterAll(async () => {
  await app?.close();
  await Promise.all(sims().map((s) => s?.close()));
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});
beforeEach(() => { for (const s of sims()) s.setKnobs({ failureRate: 0, midStreamDropRate: 0, midStreamErrorRate: 0 }); });

async function api<T = any>(path: string, init?: RequestInit): Promise<T> {
  const res = await fetch(app.url + path, { ...init, headers: { 'content-type': 'application/json', ...init?.headers } });
  const json = await res.json();
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status} ${JSON.stringify(json)}`);
  return json as T;
}
const newSession = (engine: string) => api<{ id: string; key: string; urls: { openai: string; anthropic: string; gemini: string } }>('/api/sessions', { method: 'POST', body: JSON.stringify({ engine }) });
const completionsOf = async (id: string) => (await api<{ completions: any[] }>(`/api/sessions/${id}/completions`)).completions;

const chatBody = { model: MODEL, messages: [{ role: 'user' as const, content: 'What is 6*7?' }], max_tokens: 256 };

describe('SDK retry dedupe', () => {
  for (const engine of ['flaky-vllm', 'flaky-sglang']) {
    it(`links a re-POST carrying x-stainless-retry-count to the earlier record on ${engine}`, async () => {
      const s = await newSession(engine);
      const url = `${s.urls.openai}/chat/completions`;
      const post = (body: unknown, headers: Record<string, string> = {}) =>
        fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-stainless-retry-count': '0', ...headers }, body: JSON.stringify(body) });
      expect((await post(chatBody)).status).toBe(200);
      expect((await post(chatBody, { 'x-stainless-retry-count': '1' })).status).toBe(200);
      expect((await post(chatBody, { 'x-stainless-retry-count': '2' })).status).toBe(200);
      // A retry header on a different body, and the same body sent again without one, are new turns.
      expect((await post({ ...chatBody, max_tokens: 255 }, { 'x-stainless-retry-count': '1' })).status).toBe(200);
      expect((await post(chatBody)).status).toBe(200);
      const cs = await completionsOf(s.id);
      expect(cs.map((c) => c.seq)).toEqual([...cs.map((c) => c.seq)].sort((a, b) => a - b));
      expect(cs).toHaveLength(5);
      const [first, retry1, retry2, other, again] = cs;
      expect(first.retryOf).toBeNull();
      expect(retry1.retryOf).toBe(first.id);
      expect(retry2.retryOf).toBe(retry1.id);
      expect(other.retryOf).toBeNull();
      expect(again.retryOf).toBeNull();
      for (const c of cs) {
        expect(c.status).toBe('ok');
        expect(c.promptIds.length).toBeGreaterThan(0);
        expect(c.outputIds.length).toBeGreaterThan(0);
      }
      // Retries repeat a turn: same prompt as the attempt they repeat.
      expect(retry1.promptIds).toEqual(first.promptIds);
      // The same body in another session is not a retry of this one.
      const s2 = await newSession(engine);
      await fetch(`${s2.urls.openai}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-stainless-retry-count': '1' }, body: JSON.stringify(chatBody) });
      expect((await completionsOf(s2.id))[0].retryOf).toBeNull();
    });
  }

  it('openai SDK: an engine failure, then the SDK\'s own retry, is recorded as error + linked ok', async () => {
    const s = await newSession('flaky-vllm');
    vllm.setKnobs({ failureRate: 1 });
    const seen: string[] = [];
    const client = new OpenAI({
      baseURL: s.urls.openai, apiKey: s.key, maxRetries: 2,
      fetch: async (input, init) => {
        const res = await fetch(input as string, init);
        seen.push(`${new Headers(init?.headers).get('x-stainless-retry-count')}:${res.status}`);
        vllm.setKnobs({ failureRate: 0 }); // the next attempt goes through
        return res;
      },
    });
    const r = await client.chat.completions.create({ ...chatBody, messages: [{ role: 'user', content: 'What is 5*9?' }] });
    expect(r.choices[0]!.message.content).toContain('45');
    expect(seen[0]).toMatch(/^0:5\d\d$/);
    expect(seen[1]).toBe('1:200');
    const [failed, retried] = await completionsOf(s.id);
    expect(failed.status).toBe('error');
    expect(failed.error).toMatch(/failure/i);
    expect(retried.status).toBe('ok');
    expect(retried.retryOf).toBe(failed.id);
  });

  it('anthropic SDK (streaming, as Claude Code calls it): the retry is linked', async () => {
    const s = await newSession('flaky-sglang');
    sglang.setKnobs({ failureRate: 1 });
    const client = new Anthropic({
      baseURL: s.urls.anthropic, apiKey: s.key, maxRetries: 2,
      fetch: async (input, init) => {
        const res = await fetch(input as string, init);
        sglang.setKnobs({ failureRate: 0 });
        return res;
      },
    });
    const m = await client.beta.messages.stream({ model: MODEL, max_tokens: 512, messages: [{ role: 'user', content: 'What is 8*7?' }] }).finalMessage();
    expect(m.content.find((b) => b.type === 'text')).toMatchObject({ text: expect.stringContaining('56') });
    const [failed, retried] = await completionsOf(s.id);
    expect(failed.status).toBe('error');
    expect(retried.status).toBe('ok');
    expect(retried.retryOf).toBe(failed.id);
    expect(retried.dialect).toBe('anthropic');
  });

  it('a retry after the client gave up mid-stream links to the aborted attempt', async () => {
    const s = await newSession('flaky-vllm');
    vllm.setKnobs({ perTokenMs: 40 });
    try {
      const body = { ...chatBody, stream: true };
      const ac = new AbortController();
      const res = await fetch(`${s.urls.openai}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-stainless-retry-count': '0' }, body: JSON.stringify(body), signal: ac.signal });
      const reader = res.body!.getReader();
      await reader.read();
      ac.abort();
      await new Promise((r) => setTimeout(r, 100));
      vllm.setKnobs({ perTokenMs: 2 });
      const again = await fetch(`${s.urls.openai}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-stainless-retry-count': '1' }, body: JSON.stringify(body) });
      expect(again.status).toBe(200);
      await again.text();
      const [aborted, retried] = await completionsOf(s.id);
      expect(aborted.status).toBe('aborted');
      expect(retried.status).toBe('ok');
      expect(retried.retryOf).toBe(aborted.id);
    } finally {
      vllm.setKnobs({ perTokenMs: 2 });
    }
  });
});

// ---------------------------------------------------------------------------------------------------

type Outcome = { threw: unknown; streamed: number };

/** One streaming call per dialect with its official SDK; counts visible pieces received before the error. */
const dialectCalls: Record<string, (s: Awaited<ReturnType<typeof newSession>>) => Promise<Outcome>> = {
  'OpenAI chat': async (s) => {
    const client = new OpenAI({ baseURL: s.urls.openai, apiKey: s.key, maxRetries: 0 });
    let streamed = 0;
    try {
      const stream = await client.chat.completions.create({ ...chatBody, stream: true });
      for await (const c of stream) if (c.choices[0]?.delta.content || (c.choices[0]?.delta as any)?.reasoning) streamed++;
      return { threw: null, streamed };
    } catch (e) { return { threw: e, streamed }; }
  },
  Responses: async (s) => {
    const client = new OpenAI({ baseURL: s.urls.openai, apiKey: s.key, maxRetries: 0 });
    let streamed = 0;
    try {
      const stream = client.responses.stream({ model: MODEL, input: 'What is 6*7?', max_output_tokens: 256 });
      stream.on('event', (e) => { if (e.type.endsWith('.delta')) streamed++; });
      await stream.finalResponse();
      return { threw: null, streamed };
    } catch (e) { return { threw: e, streamed }; }
  },
  Anthropic: async (s) => {
    const client = new Anthropic({ baseURL: s.urls.anthropic, apiKey: s.key, maxRetries: 0 });
    let streamed = 0;
    try {
      const stream = client.messages.stream({ model: MODEL, max_tokens: 256, messages: [{ role: 'user', content: 'What is 6*7?' }] });
      stream.on('streamEvent', (e) => { if (e.type === 'content_block_delta') streamed++; });
      await stream.finalMessage();
      return { threw: null, streamed };
    } catch (e) { return { threw: e, streamed }; }
  },
  Gemini: async (s) => {
    const ai = new GoogleGenAI({ apiKey: s.key, httpOptions: { baseUrl: s.urls.gemini } });
    let streamed = 0;
    try {
      for await (const c of await ai.models.generateContentStream({ model: MODEL, contents: 'What is 6*7?', config: { maxOutputTokens: 256, thinkingConfig: { includeThoughts: true } } })) {
        if (c.candidates?.[0]?.content?.parts?.length) streamed++;
      }
      return { threw: null, streamed };
    } catch (e) { return { threw: e, streamed }; }
  },
};

function expectDialectError(dialect: string, err: unknown) {
  if (dialect === 'Anthropic') {
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect((err as any).error).toMatchObject({ type: 'error', error: { type: expect.any(String), message: expect.any(String) } });
  } else if (dialect === 'Gemini') {
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBeGreaterThanOrEqual(500);
  } else {
    expect(err, String(err)).toBeInstanceOf(OpenAI.APIError);
    expect((err as any).message).toBeTruthy();
  }
}

describe('engine failing mid-stream', () => {
  for (const engine of ['flaky-vllm', 'flaky-sglang']) {
    for (const kind of ['midStreamErrorRate', 'midStreamDropRate'] as const) {
      for (const dialect of Object.keys(dialectCalls)) {
        it(`${dialect} on ${engine}: ${kind === 'midStreamErrorRate' ? 'an engine error event' : 'a dropped connection'} becomes the dialect's error event`, async () => {
          const sim = engine === 'flaky-vllm' ? vllm : sglang;
          const s = await newSession(engine);
          sim.setKnobs({ [kind]: 1 });
          const out = await dialectCalls[dialect]!(s);
          sim.setKnobs({ [kind]: 0 });
          expectDialectError(dialect, out.threw);
          const cs = await completionsOf(s.id);
          // A failure before any byte reached the agent may be retried on the (only) replica; the last attempt is the error.
          expect(cs.length).toBeGreaterThanOrEqual(1);
          const last = cs.at(-1);
          // Custody: once the agent had part of the answer, the capture is incomplete (never trainable).
          if (out.streamed > 0) expect(last).toMatchObject({ status: 'incomplete', incompleteReason: 'engine-error-mid-stream' });
          else expect(['error', 'incomplete']).toContain(last.status);
          expect(last.error).toBeTruthy();
          // The server is fine afterwards.
          const ok = await dialectCalls[dialect]!(s);
          expect(ok.threw).toBeNull();
          expect((await completionsOf(s.id)).at(-1).status).toBe('ok');
        });
      }
    }
  }

  it('mostly breaks after text reached the agent (the mid-stream path, not the pre-stream one)', async () => {
    let midStream = 0;
    let total = 0;
    for (const dialect of Object.keys(dialectCalls)) {
      for (const engine of ['flaky-vllm', 'flaky-sglang']) {
        const sim = engine === 'flaky-vllm' ? vllm : sglang;
        const s = await newSession(engine);
        sim.setKnobs({ midStreamErrorRate: 1 });
        const out = await dialectCalls[dialect]!(s);
        sim.setKnobs({ midStreamErrorRate: 0 });
        total++;
        if (out.streamed > 0 && out.threw) midStream++;
      }
    }
    expect(midStream).toBeGreaterThanOrEqual(total / 2);
  });

  it('non-streaming calls get a 5xx in the dialect shape and an error record', async () => {
    const s = await newSession('flaky-vllm');
    vllm.setKnobs({ midStreamErrorRate: 1 });
    const res = await fetch(`${s.urls.anthropic}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, max_tokens: 256, messages: [{ role: 'user', content: 'What is 6*7?' }] }) });
    expect(res.status).toBeGreaterThanOrEqual(500);
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: expect.any(String) } });
    const g = await fetch(`${s.urls.gemini}/v1beta/models/m:generateContent`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'What is 6*7?' }] }] }) });
    expect(g.status).toBeGreaterThanOrEqual(500);
    expect((await g.json()).error).toMatchObject({ code: g.status, status: expect.any(String) });
    vllm.setKnobs({ midStreamErrorRate: 0 });
    const cs = await completionsOf(s.id);
    expect(cs.every((c) => c.status === 'error')).toBe(true);
  });
});
