// Engines behind a router (issue 15 part 4, DESIGN §12). The "router" here is a loopback proxy written for
// this test (test/helpers/routing-proxy.ts) in front of the sim engines: it records the headers each call
// arrived with and, in strip mode, drops the engine's token fields. It tests Rollgate's behaviour — the
// session id goes out in the router's header on every call of a session, nothing the agent sent goes out,
// and stripped token fields fail the capture loudly — not the real vLLM or SGLang routers.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimEngine, type SimEngine } from '../../src-main/engines/sim/index.js';
import type { EngineConfig } from '../../src-main/engines/types.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { startRoutingProxy, type RoutingProxy } from '../helpers/routing-proxy.js';

const MODEL = 'Qwen/Qwen3-8B';
/** Headers an agent sends that must never reach an engine or a router, including a forged routing key. */
const AGENT_HEADERS = { 'x-api-key': 'agent-secret', cookie: 'sid=agent', 'x-user-id': 'forged-by-agent', 'x-smg-routing-key': 'forged-by-agent', 'x-rollout-session': 'forged-by-agent' };
const GENERATION_PATHS = new Set(['/v1/chat/completions', '/v1/completions', '/generate']);

let vllm: SimEngine;
let sglang: SimEngine;
const proxies: Record<string, RoutingProxy> = {};
let app: TestApp;

/** Engine id → [engine kind, mode, router kind, header the router expects, strip]. */
const ENGINES = {
  'vllm-chat': ['vllm', 'chat', 'vllm-router', 'x-user-id', false],
  'vllm-token': ['vllm', 'token', 'vllm-router', 'x-rollout-session', false],
  'sglang-token': ['sglang', 'token', 'sglang-router', 'x-smg-routing-key', false],
  'vllm-chat-stripped': ['vllm', 'chat', 'vllm-router', 'x-user-id', true],
  'vllm-token-stripped': ['vllm', 'token', 'vllm-router', 'x-user-id', true],
  'sglang-token-stripped': ['sglang', 'token', 'sglang-gateway', 'x-smg-routing-key', true],
} as const;

beforeAll(async () => {
  vllm = await startSimEngine({ flavor: 'vllm', seed: 3, skill: 1, perTokenMs: 1, ttftMs: 2 });
  sglang = await startSimEngine({ flavor: 'sglang', seed: 3, skill: 1, perTokenMs: 1, ttftMs: 2 });
  const engines: EngineConfig[] = [];
  for (const [id, [kind, mode, routerKind, header, strip]] of Object.entries(ENGINES)) {
    proxies[id] = await startRoutingProxy(kind === 'vllm' ? vllm.url : sglang.url, { strip });
    // The default header of each router kind is left implicit; the custom one is configured.
    const router = header === 'x-rollout-session' ? { kind: routerKind, header } : { kind: routerKind };
    engines.push({ id, kind, mode, model: MODEL, replicas: [proxies[id]!.url], tokenizer: 'builtin:qwen3', router });
  }
  app = await startTestApp({ sim: false, engines });
});
afterAll(async () => {
  await app?.stop();
  await Promise.all(Object.values(proxies).map((p) => p.close()));
  await vllm?.close();
  await sglang?.close();
});

function openai(s: { key: string; urls: { openai: string } }) {
  return new OpenAI({ baseURL: s.urls.openai, apiKey: s.key, maxRetries: 0, defaultHeaders: AGENT_HEADERS });
}

/** Three turns, streaming and not, over the OpenAI and Anthropic dialects. */
async function threeTurns(engine: string): Promise<string> {
  const s = await app.createSession({ engine });
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Say hello.' }];
  const first = await openai(s).chat.completions.create({ model: MODEL, messages, max_tokens: 32 });
  messages.push({ role: 'assistant', content: first.choices[0]!.message.content ?? '' }, { role: 'user', content: 'Again.' });
  let text = '';
  for await (const chunk of await openai(s).chat.completions.create({ model: MODEL, messages, max_tokens: 32, stream: true })) text += chunk.choices[0]?.delta?.content ?? '';
  const anthropic = new Anthropic({ baseURL: s.urls.anthropic, apiKey: s.key, maxRetries: 0, defaultHeaders: AGENT_HEADERS });
  await anthropic.messages.create({ model: MODEL, max_tokens: 32, messages: [{ role: 'user', content: 'Say hello.' }, { role: 'assistant', content: text || 'hello' }, { role: 'user', content: 'Once more.' }] });
  return s.id;
}

function generationCalls(engine: keyof typeof ENGINES) {
  return proxies[engine]!.seen.filter((r) => r.method === 'POST' && GENERATION_PATHS.has(r.path));
}

describe('routing key', () => {
  it('GET /api/engines shows each router with the header in effect (the topology view shows it)', async () => {
    const { engines } = await app.api('/api/engines');
    const routers = Object.fromEntries(engines.map((e: any) => [e.id, e.router]));
    for (const [id, [, , kind, header]] of Object.entries(ENGINES)) expect(routers[id], id).toEqual({ kind, header });
  });

  for (const engine of ['vllm-chat', 'vllm-token', 'sglang-token'] as const) {
    const header = ENGINES[engine][3];
    it(`${engine}: every call of a session carries its id in ${header}, two sessions two keys, nothing of the agent's`, async () => {
      const a = await threeTurns(engine);
      const b = await threeTurns(engine);
      const calls = generationCalls(engine);
      expect(calls).toHaveLength(6);
      expect(calls.map((c) => c.headers[header])).toEqual([a, a, a, b, b, b]);
      expect(a).not.toBe(b);
      for (const c of calls) {
        for (const h of ['authorization', 'x-api-key', 'cookie']) expect(c.headers[h], h).toBeUndefined();
        for (const [h, v] of Object.entries(c.headers)) expect(v, h).not.toBe('forged-by-agent');
        expect(JSON.stringify(c.headers)).not.toContain('agent-secret');
      }
      for (const id of [a, b]) {
        const { completions } = await app.api(`/api/sessions/${id}/completions`);
        expect(completions.map((c: any) => c.status)).toEqual(['ok', 'ok', 'ok']);
      }
    });
  }
});

describe('token fields a router strips', () => {
  const cases = [
    ['vllm-chat-stripped', 'prompt_token_ids'],
    ['vllm-token-stripped', 'choices[].token_ids'],
    ['sglang-token-stripped', 'output_ids'],
  ] as const;
  for (const [engine, field] of cases) {
    it(`${engine}: a clear error naming the router and \`${field}\` in each dialect, recorded incomplete, never as empty ids`, async () => {
      const routerKind = ENGINES[engine][2];
      const expected = new RegExp(`engine ${engine} is behind a ${routerKind} .*dropped \`${field.replace(/[[\]]/g, '\\$&')}\``);
      const s = await app.createSession({ engine });
      const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Say hello.' }];

      const plain = await openai(s).chat.completions.create({ model: MODEL, messages, max_tokens: 16 }).catch((e) => e);
      expect(plain).toBeInstanceOf(OpenAI.APIError);
      expect(plain.status).toBe(502);
      expect(plain.message).toMatch(expected);

      const streamed = (async () => { for await (const _ of await openai(s).chat.completions.create({ model: MODEL, messages, max_tokens: 16, stream: true })); })();
      await expect(streamed).rejects.toThrow(expected);

      const anthropic = new Anthropic({ baseURL: s.urls.anthropic, apiKey: s.key, maxRetries: 0 });
      const err = await anthropic.messages.create({ model: MODEL, max_tokens: 16, messages: [{ role: 'user', content: 'Say hello.' }] }).catch((e) => e);
      expect(err).toBeInstanceOf(Anthropic.APIError);
      expect(err.error).toMatchObject({ type: 'error', error: { message: expect.stringMatching(expected) } });

      const { completions } = await app.api(`/api/sessions/${s.id}/completions`);
      expect(completions).toHaveLength(3);
      for (const c of completions) {
        expect(c).toMatchObject({ status: 'incomplete', incompleteReason: 'missing-ids' });
        expect(c.error).toMatch(expected);
      }
      expect((await app.api(`/api/sessions/${s.id}`)).custody).toBe('incomplete');
      const rows = (await (await fetch(`${app.url}/api/export?session=${s.id}&status=all`)).text()).split('\n').filter(Boolean);
      expect(rows).toEqual([]);
      // The routing key went out on these calls too.
      expect(generationCalls(engine).map((c) => c.headers[ENGINES[engine][3]])).toEqual([s.id, s.id, s.id]);
    });
  }
});
