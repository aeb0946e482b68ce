// Pause/resume around weight updates and policy versions (issue 6).
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimEngine } from '../../src-main/engines/sim/index.js';
import { buildTraces } from '../../src-main/core/trajectory/index.js';
import type { TestApp } from '../helpers/app.js';
import { chat, engine, MODEL, startFleetApp, startSims } from '../helpers/fleet.js';

let sims: SimEngine[];
let app: TestApp;
beforeAll(async () => {
  sims = await startSims('vllm', 1, { ttftMs: 5, perTokenMs: 4 });
  app = await startFleetApp([engine('vllm', 'vllm', sims, 'chat')]);
});
afterAll(async () => {
  await app?.stop();
  await Promise.all(sims.map((s) => s.close()));
});

const ask = (url: string, i: number, stream = false) => chat(url, { messages: [{ role: 'user', content: `What is ${i}+${i}?` }], stream });
const post = (path: string, body: unknown) => app.api(path, { method: 'POST', body: JSON.stringify(body) });

describe('pause for weight sync', () => {
  it('queue: holds new calls during the pause and fails none; every queued call completes after resume', async () => {
    const sessions = await Promise.all(Array.from({ length: 8 }, () => app.createSession()));
    let stop = false;
    const agents = sessions.map(async (s, i) => {
      const statuses: number[] = [];
      for (let turn = 0; !stop && turn < 50; turn++) statuses.push((await ask(s.urls.openai, i * 10 + turn)).status);
      return statuses;
    });
    await new Promise((r) => setTimeout(r, 200));
    const paused = await post('/api/engines/pause', { mode: 'queue', timeoutMs: 10_000 });
    expect(paused.remaining).toBe(0);
    expect(paused.drained).toBe(paused.inFlightAtPause);
    await new Promise((r) => setTimeout(r, 300));
    const during = await app.api('/api/engines');
    expect(during.pause.mode).toBe('queue');
    expect(during.pause.queued).toBe(8);
    expect(during.engines[0].queued).toBe(8);
    expect(during.engines[0].replicas[0].inFlight).toBe(0);
    const resumed = await post('/api/engines/resume', {});
    expect(resumed.released).toBe(8);
    expect((await app.api('/api/engines')).engines[0].queued).toBe(0);
    await new Promise((r) => setTimeout(r, 200));
    stop = true;
    const statuses = (await Promise.all(agents)).flat();
    expect(statuses.length).toBeGreaterThan(8);
    expect(new Set(statuses)).toEqual(new Set([200]));
    for (const s of sessions) {
      const { completions } = await app.api(`/api/sessions/${s.id}/completions`);
      expect(completions.every((c: any) => c.status === 'ok')).toBe(true);
      expect(completions.some((c: any) => c.timings.queueMs >= 250), 'a call waited in the queue').toBe(true);
    }
  });

  it('reject: answers new calls with a 429 and Retry-After in the agent’s dialect', async () => {
    const s = await app.createSession();
    await post('/api/engines/pause', { mode: 'reject', timeoutMs: 1000 });
    try {
      const r = await ask(s.urls.openai, 1);
      expect(r.status).toBe(429);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(r.json.error.type).toBe('rate_limit_error');
      const claude = new Anthropic({ baseURL: s.urls.anthropic, apiKey: s.key, maxRetries: 0 });
      const err = await claude.messages.create({ model: MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e);
      expect(err).toBeInstanceOf(Anthropic.RateLimitError);
      expect(err.error.type).toBe('error');
      expect(err.error.error.type).toBe('rate_limit_error');
    } finally {
      await post('/api/engines/resume', {});
    }
    expect((await ask(s.urls.openai, 2)).status).toBe(200);
  });

  it('abort: cancels in-flight calls, records them aborted, and the trace builders exclude them', async () => {
    sims[0]!.setKnobs({ perTokenMs: 30 });
    const s = await app.createSession();
    const first = await ask(s.urls.openai, 3);
    expect(first.status).toBe(200);
    const inflight = [ask(s.urls.openai, 4, true), ask(s.urls.openai, 5)];
    await new Promise((r) => setTimeout(r, 120));
    const paused = await post('/api/engines/pause', { mode: 'abort', timeoutMs: 5000 });
    expect(paused.inFlightAtPause).toBe(2);
    expect(paused.remaining).toBe(0);
    const [streamed, plain] = await Promise.all(inflight);
    expect(streamed.text).toMatch(/"error"/);
    expect(plain.status).toBe(503);
    await post('/api/engines/resume', {});
    sims[0]!.setKnobs({ perTokenMs: 4 });

    const records = (await app.store.completions.listBySession(s.id));
    expect(records.map((r) => r.status).sort()).toEqual(['aborted', 'aborted', 'ok']);
    for (const builder of ['prefix-merge', 'per-request'] as const) {
      const { traces } = buildTraces(builder, records, {});
      const used = new Set(traces.flatMap((t) => t.completionIds));
      for (const r of records.filter((x) => x.status === 'aborted')) expect(used.has(r.id)).toBe(false);
      expect(traces.flatMap((t) => t.lossMask).filter((m) => m === 1).length).toBe(records.find((r) => r.status === 'ok')!.outputIds.length);
    }
  });

  it('stamps the policy version each call ran under: calls held by a queue pause get the version set before resume', async () => {
    const s = await app.createSession();
    await post('/api/policy-version', { version: 3 });
    await ask(s.urls.openai, 6);
    await post('/api/policy-version', { version: 4 });
    await ask(s.urls.openai, 7);
    // The trainer's cycle: pause (queue) → calls arrive and wait → new weights, version 5 → resume.
    await post('/api/engines/pause', { mode: 'queue', timeoutMs: 10_000 });
    const held = [ask(s.urls.openai, 8), ask(s.urls.openai, 9)];
    await new Promise((r) => setTimeout(r, 200));
    expect((await app.api('/api/engines')).pause.queued).toBe(2);
    await post('/api/policy-version', { version: 5 });
    await post('/api/engines/resume', {});
    await Promise.all(held);
    const { completions } = await app.api(`/api/sessions/${s.id}/completions`);
    expect(completions.map((c: any) => c.policyVersion)).toEqual([3, 4, 5, 5]);
    expect(completions.slice(2).every((c: any) => c.timings.queueMs >= 150)).toBe(true);
    expect((await app.api('/api/engines')).policyVersion).toBe(5);
  });

  it('forwards pause and resume to the engines’ own routes when asked', async () => {
    const paused = await post('/api/engines/pause', { mode: 'queue', timeoutMs: 1000, forward: true });
    expect(paused.forwarded).toEqual([expect.objectContaining({ engineId: 'vllm', replica: sims[0]!.url, ok: true })]);
    expect(sims[0]!.stats().paused).toBe(true);
    const resumed = await post('/api/engines/resume', { forward: true });
    expect(resumed.forwarded[0].ok).toBe(true);
    expect(sims[0]!.stats().paused).toBe(false);
    const s = await app.createSession();
    expect((await ask(s.urls.openai, 8)).status).toBe(200);
  });

  it('rejects bad pause bodies clearly', async () => {
    const r = await fetch(`${app.url}/api/engines/pause`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ mode: 'sleep' }) });
    expect(r.status).toBe(400);
    expect((await r.json()).error.message).toMatch(/mode/);
  });
});
