// A node whose Postgres cannot be reached (issue 15, DESIGN §9 custody): agents get a 503 with Retry-After in
// their own dialect — the key lookup, the seq and the intent all need the store — never a 500 and never an
// engine call that could not be recorded; once the store is back the same session goes on and nothing
// recorded before the outage is lost.
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimEngine, type SimEngine } from '../../src-main/engines/sim/index.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { freePort, startPostgres, type PostgresServer } from '../helpers/postgres.js';
import { CuttableProxy } from '../helpers/stores.js';

const MODEL = 'Qwen/Qwen3-8B';

describe('gateway on a Postgres store that goes away', () => {
  let pg: PostgresServer;
  let relay: CuttableProxy;
  let sim: SimEngine;
  let app: TestApp;
  let cut = false;

  beforeAll(async () => {
    pg = await startPostgres();
    const url = new URL(await pg.createDatabase());
    relay = new CuttableProxy(Number(url.port));
    await relay.listen();
    url.port = String(relay.port);
    sim = await startSimEngine({ flavor: 'vllm', seed: 3, skill: 1, maxModelLen: 131072 });
    app = await startTestApp({ sim: false, store: url.toString(), nodeId: 'lonely', port: await freePort(), engines: [
      { id: 'e', kind: 'vllm', replicas: [sim.url], model: MODEL, mode: 'chat', tokenizer: 'builtin:qwen3' },
    ] });
  }, 120_000);

  afterAll(async () => {
    if (cut) await relay.listen(relay.port); // a failed check left the store away: give it back so the app can close
    await app?.stop();
    await relay?.close();
    await sim?.close();
    await pg?.stop();
  });

  it('answers 503 + Retry-After in each dialect while the store is away, then goes on', async () => {
    const s = await app.createSession({ engine: 'e' });
    const openai = new OpenAI({ baseURL: s.urls.openai, apiKey: 'unused', maxRetries: 0 });
    const first = await openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Say hi.' }], max_tokens: 16 });
    expect(first.choices[0]!.message).toBeTruthy();
    const engineCalls = sim.stats().requests;

    await relay.cut();
    cut = true;
    const oa = await fetch(`${s.urls.openai}/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Again.' }], max_tokens: 16 }),
    });
    expect(oa.status).toBe(503);
    expect(Number(oa.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await oa.json()).error.message).toMatch(/store/);
    const anthropic = new Anthropic({ baseURL: s.urls.anthropic, apiKey: 'unused', maxRetries: 0 });
    const err = await anthropic.messages.create({ model: MODEL, max_tokens: 16, messages: [{ role: 'user', content: 'Again.' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect((err as InstanceType<typeof Anthropic.APIError>).status).toBe(503);
    // Nothing that could not be recorded reached the engine.
    expect(sim.stats().requests).toBe(engineCalls);

    await relay.listen(relay.port);
    cut = false;
    const again = await openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Again.' }], max_tokens: 16 });
    expect(again.choices[0]!.message).toBeTruthy();
    const { completions } = await (await fetch(`${app.url}/api/sessions/${s.id}/completions`)).json() as { completions: Array<{ status: string }> };
    expect(completions.map((c) => c.status)).toEqual(['ok', 'ok']);
  }, 120_000);
});
