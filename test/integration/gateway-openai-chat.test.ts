// The gateway end to end with the official openai SDK against both sim engines (issue: foundation).
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseQwen3Output } from '../../src-main/core/families/qwen3/output-parser.js';
import { loadTokenizer, type ChatTokenizer } from '../../src-main/engines/tokenizer/index.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

const calculator = {
  type: 'function' as const,
  function: {
    name: 'calculator',
    description: 'Evaluate an arithmetic expression',
    parameters: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] },
  },
};

let app: TestApp;
let tok: ChatTokenizer;
beforeAll(async () => {
  app = await startTestApp({ simSkill: 1 });
  tok = await loadTokenizer();
});
afterAll(async () => { await app?.stop(); });

async function collectStream(stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>) {
  let content = '';
  const calls: Record<number, { id?: string; name: string; arguments: string }> = {};
  let finish: string | null = null;
  let usage: OpenAI.CompletionUsage | undefined;
  let chunks = 0;
  for await (const chunk of stream) {
    chunks++;
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices[0];
    if (!choice) continue;
    content += choice.delta.content ?? '';
    for (const tc of choice.delta.tool_calls ?? []) {
      const c = (calls[tc.index] ??= { name: '', arguments: '' });
      if (tc.id) c.id = tc.id;
      c.name += tc.function?.name ?? '';
      c.arguments += tc.function?.arguments ?? '';
    }
    finish = choice.finish_reason ?? finish;
  }
  return { content, calls: Object.values(calls), finish, usage, chunks };
}

for (const engine of ['sim-vllm', 'sim-sglang']) {
  describe(`OpenAI chat through Rollgate to ${engine}`, () => {
    for (const stream of [false, true]) {
      it(`runs a tool-calling conversation (${stream ? 'streaming' : 'non-streaming'}) and records ids the engine produced`, async () => {
        const session = await app.createSession({ engine });
        const client = new OpenAI({ baseURL: session.urls.openai, apiKey: 'not-a-real-key', maxRetries: 0 });
        const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
          { role: 'system', content: 'You are a careful assistant. Use tools.' },
          { role: 'user', content: 'What is 17*23? Use the calculator.' },
        ];

        let first: { content: string | null; calls: Array<{ id?: string; name: string; arguments: string }>; finish: string | null };
        if (stream) {
          const s = await client.chat.completions.create({ model: 'Qwen/Qwen3-8B', messages, tools: [calculator], stream: true, stream_options: { include_usage: true } });
          const r = await collectStream(s);
          expect(r.chunks).toBeGreaterThan(2);
          expect(r.usage?.completion_tokens).toBeGreaterThan(0);
          expect(r.usage?.completion_tokens_details?.reasoning_tokens).toBeGreaterThan(0); // the sim thinks first
          expect(r.usage!.completion_tokens_details!.reasoning_tokens).toBeLessThan(r.usage!.completion_tokens);
          first = r;
        } else {
          const r = await client.chat.completions.create({ model: 'Qwen/Qwen3-8B', messages, tools: [calculator] });
          const m = r.choices[0]!.message;
          first = { content: m.content, calls: (m.tool_calls ?? []).map((c) => ({ id: c.id, name: (c as any).function.name, arguments: (c as any).function.arguments })), finish: r.choices[0]!.finish_reason };
        }
        expect(first.finish).toBe('tool_calls');
        expect(first.calls).toHaveLength(1);
        expect(first.calls[0]!.name).toBe('calculator');
        expect(JSON.parse(first.calls[0]!.arguments).expression.replace(/\s/g, '')).toBe('17*23');

        messages.push({ role: 'assistant', content: null, tool_calls: [{ id: first.calls[0]!.id!, type: 'function', function: { name: 'calculator', arguments: first.calls[0]!.arguments } }] });
        messages.push({ role: 'tool', tool_call_id: first.calls[0]!.id!, content: '391' });
        let answer: string;
        if (stream) {
          const r = await collectStream(await client.chat.completions.create({ model: 'Qwen/Qwen3-8B', messages, tools: [calculator], stream: true }));
          expect(r.finish).toBe('stop');
          answer = r.content;
        } else {
          const r = await client.chat.completions.create({ model: 'Qwen/Qwen3-8B', messages, tools: [calculator] });
          expect(r.choices[0]!.finish_reason).toBe('stop');
          answer = r.choices[0]!.message.content ?? '';
        }
        expect(answer).toContain('391');

        const { completions } = await app.api(`/api/sessions/${session.id}/completions`);
        expect(completions).toHaveLength(2);
        const [c1, c2] = completions;
        for (const c of completions) {
          expect(c.status).toBe('ok');
          expect(c.engineId).toBe(engine);
          expect(c.promptIds.length).toBeGreaterThan(10);
          expect(c.outputIds.at(-1)).toBe(tok.eosTokenId);
          expect(c.outputLogprobs).toHaveLength(c.outputIds.length);
        }
        // The recorded prompt is the real Qwen3 rendering of what the agent sent.
        expect(tok.decode(c1.promptIds)).toContain('<|im_start|>user\nWhat is 17*23? Use the calculator.<|im_end|>');
        // Decoding the recorded output ids reproduces what the agent got.
        const parsed = parseQwen3Output(tok.decode(c1.outputIds, { skipSpecialTokens: true }));
        expect(parsed.toolCalls[0]!.name).toBe('calculator');
        expect(JSON.parse(parsed.toolCalls[0]!.arguments)).toEqual(JSON.parse(first.calls[0]!.arguments));
        const parsed2 = parseQwen3Output(tok.decode(c2.outputIds, { skipSpecialTokens: true }));
        expect(parsed2.content).toBe(answer);
        expect(c2.response.message.reasoning).toBe(parsed2.reasoning);
        // The tool call and its result are in the next prompt's ids.
        const prompt2 = tok.decode(c2.promptIds);
        expect(prompt2).toContain('<tool_response>\n391\n</tool_response>');
        expect(prompt2).toContain('"name": "calculator"');
        if (engine === 'sim-sglang') {
          // Token mode reuses the sampled ids verbatim: prompt 2 extends prompt 1 + output 1.
          expect(c2.promptIds.slice(0, c1.promptIds.length + c1.outputIds.length)).toEqual([...c1.promptIds, ...c1.outputIds]);
        }
      });
    }
  });
}

describe('stop strings', () => {
  for (const engine of ['sim-vllm', 'sim-sglang']) {
    for (const stream of [false, true]) {
      it(`end the answer before the stop string on ${engine} (${stream ? 'streaming' : 'non-streaming'})`, async () => {
        const session = await app.createSession({ engine });
        const client = new OpenAI({ baseURL: session.urls.openai, apiKey: session.key, maxRetries: 0 });
        const body = { model: 'Qwen/Qwen3-8B', messages: [{ role: 'user' as const, content: 'What is 6*7?' }], stop: ['answer'], chat_template_kwargs: { enable_thinking: false } };
        let content: string;
        if (stream) {
          content = (await collectStream(await client.chat.completions.create({ ...body, stream: true }))).content;
        } else {
          content = (await client.chat.completions.create(body)).choices[0]!.message.content ?? '';
        }
        expect(content).toContain('42');
        expect(content).not.toContain('answer');
        expect(content.endsWith('The ')).toBe(true);
        const { completions } = await app.api(`/api/sessions/${session.id}/completions`);
        expect(completions[0].status).toBe('ok');
      });
    }
  }
});

describe('sampling parameters reach the engine as the agent set them', () => {
  it('min_p and the penalties (OpenAI chat) in the vLLM chat body and SGLang sampling_params', async () => {
    const sampling = { temperature: 0.6, top_p: 0.95, top_k: 20, min_p: 0.05, presence_penalty: 1.5, frequency_penalty: 0.25, repetition_penalty: 1.1 };
    for (const engine of ['sim-vllm', 'sim-sglang']) {
      const session = await app.createSession({ engine });
      const client = new OpenAI({ baseURL: session.urls.openai, apiKey: session.key, maxRetries: 0 });
      await client.chat.completions.create({ model: 'Qwen/Qwen3-8B', messages: [{ role: 'user', content: 'Hello' }], ...sampling } as OpenAI.ChatCompletionCreateParamsNonStreaming);
      const { completions } = await app.api(`/api/sessions/${session.id}/completions`);
      const served = completions[0].requestServed;
      // vLLM takes them at the top level of the body; SGLang's /generate inside sampling_params.
      expect(engine === 'sim-vllm' ? served : served.sampling_params, engine).toMatchObject(sampling);
    }
  });

  it('Gemini presencePenalty / frequencyPenalty', async () => {
    const session = await app.createSession({ engine: 'sim-sglang' });
    const res = await fetch(`${session.urls.gemini}/v1beta/models/Qwen3-8B:generateContent`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': session.key },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Hello' }] }], generationConfig: { presencePenalty: 0.5, frequencyPenalty: 0.7 } }),
    });
    expect(res.status).toBe(200);
    const { completions } = await app.api(`/api/sessions/${session.id}/completions`);
    expect(completions[0].requestServed.sampling_params).toMatchObject({ presence_penalty: 0.5, frequency_penalty: 0.7 });
  });
});

describe('gateway rejects bad input in the OpenAI shape', () => {
  it('rejects an unknown session key with a 401 the SDK understands', async () => {
    const client = new OpenAI({ baseURL: `${app.url}/s/${'0'.repeat(32)}/v1`, apiKey: 'x', maxRetries: 0 });
    await expect(client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] })).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('accepts the session key as a Bearer token on the bare origin', async () => {
    const session = await app.createSession();
    const client = new OpenAI({ baseURL: `${app.url}/v1`, apiKey: session.key, maxRetries: 0 });
    const r = await client.chat.completions.create({ model: 'Qwen/Qwen3-8B', messages: [{ role: 'user', content: 'say hi' }] });
    expect(r.choices[0]!.message.content).toBeTruthy();
    const models = await client.models.list();
    expect(models.data[0]!.id).toBe('Qwen/Qwen3-8B');
    await app.createSession();
    const page = await app.api('/api/sessions?limit=1');
    expect(page.sessions).toHaveLength(1);
    expect(page.total).toBeGreaterThan(1);
    expect(page.sessions[0]).not.toHaveProperty('key');
  });

  it('answers malformed JSON, wrong types and oversized bodies with 4xx in the OpenAI error shape', async () => {
    const session = await app.createSession();
    const url = `${session.urls.openai}/chat/completions`;
    const post = (body: string) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const bad = await post('{"model": "m", "messages": [');
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.message).toBeTruthy();
    const wrong = await post(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 42 }] }));
    expect(wrong.status).toBe(400);
    expect((await wrong.json()).error.message).toMatch(/messages\.0\.content/);
    const missing = await post(JSON.stringify({ model: 'm' }));
    expect(missing.status).toBe(400);
    const huge = await post(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x'.repeat(33 * 1024 * 1024) }] }));
    expect(huge.status).toBe(413);
    expect((await huge.json()).error.type).toBe('invalid_request_error');
    const { completions } = await app.api(`/api/sessions/${session.id}/completions`);
    expect(completions).toHaveLength(0);
  });
});
