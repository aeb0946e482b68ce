// Small gateway behaviours (issue 19): unknown routes under a session URL answer in the caller's own
// error shape (Gemini, Anthropic, OpenAI), and `logprobs: true` returns the recorded logprobs in OpenAI chat.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';

let app: TestApp;
beforeAll(async () => { app = await startTestApp(); });
afterAll(async () => { await app?.stop(); });

describe('unknown routes under a session URL', () => {
  it('answer 404 in the dialect the URL or the SDK headers name', async () => {
    const s = await app.createSession();
    const gemini = await fetch(`${s.urls.gemini}/v1beta/cachedContents`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(gemini.status).toBe(404);
    const g = await gemini.json();
    expect(g.error).toMatchObject({ code: 404, status: 'NOT_FOUND' });
    expect(g.error.message).toMatch(/Unknown route POST \/s\/<key>\/v1beta\/cachedContents/);
    expect(JSON.stringify(g)).not.toContain(s.key);

    const anthropic = await fetch(`${s.urls.anthropic}/v1/messages/batches`, { method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, body: '{}' });
    expect(anthropic.status).toBe(404);
    expect(await anthropic.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    const byHeader = await fetch(`${s.urls.anthropic}/v1/models/claude-sonnet-4-5`, { headers: { 'anthropic-version': '2023-06-01' } });
    expect(await byHeader.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });

    const openai = await fetch(`${s.urls.openai}/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(openai.status).toBe(404);
    expect((await openai.json()).error).toMatchObject({ type: 'not_found_error', code: 404 });
  });
});

describe('OpenAI chat logprobs', () => {
  it('logprobs: true returns the recorded logprobs of the sampled tokens, streaming or not', async () => {
    const s = await app.createSession({ engine: 'sim-sglang' });
    const client = new OpenAI({ baseURL: s.urls.openai, apiKey: 'x', maxRetries: 0 });
    const body = { model: 'Qwen/Qwen3-8B', messages: [{ role: 'user' as const, content: 'What is 6*7?' }], max_tokens: 64, logprobs: true };
    const plain = await client.chat.completions.create(body);
    const streamed: number[] = [];
    for await (const chunk of await client.chat.completions.create({ ...body, stream: true })) {
      for (const t of chunk.choices[0]?.logprobs?.content ?? []) streamed.push(t.logprob);
    }
    const without = await client.chat.completions.create({ ...body, logprobs: false });
    expect(without.choices[0]!.logprobs).toBeNull();

    const { completions } = await app.api(`/api/sessions/${s.id}/completions`);
    const [first, second] = completions;
    const content = plain.choices[0]!.logprobs!.content!;
    expect(content.map((t) => t.logprob)).toEqual(first.outputLogprobs);
    expect(content.map((t) => t.token)).toEqual(first.outputIds.map((id: number) => `token_id:${id}`));
    expect(streamed).toEqual(second.outputLogprobs);
    expect(JSON.stringify(first.response)).not.toContain('token_id:');
  });
});
