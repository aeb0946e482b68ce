// Sticky least-loaded routing over replicas, failover when a replica dies, and its return (issue 6).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimEngine, type SimEngine } from '../../src-main/engines/sim/index.js';
import type { TestApp } from '../helpers/app.js';
import { calculatorTool, chat, engine, startFleetApp, startSims } from '../helpers/fleet.js';

let vllm: SimEngine[];
let sglang: SimEngine[];
let app: TestApp;

beforeAll(async () => {
  vllm = await startSims('vllm', 2, { ttftMs: 5, perTokenMs: 1 });
  sglang = await startSims('sglang', 1, { ttftMs: 5, perTokenMs: 1 });
  app = await startFleetApp([engine('vllm', 'vllm', vllm, 'chat'), engine('sglang', 'sglang', sglang, 'token')]);
});
afterAll(async () => {
  await app?.stop();
  await Promise.all([...vllm, ...sglang].map((s) => s.close()));
});

async function twoTurnSession(engineId: string) {
  const session = await app.createSession({ engine: engineId });
  const messages: any[] = [{ role: 'user', content: 'What is 12*12? Use the calculator.' }];
  const first = await chat(session.urls.openai, { messages, tools: [calculatorTool] });
  expect(first.status, first.text).toBe(200);
  const call = first.json.choices[0].message.tool_calls[0];
  messages.push(first.json.choices[0].message, { role: 'tool', tool_call_id: call.id, content: '144' });
  const second = await chat(session.urls.openai, { messages, tools: [calculatorTool] });
  expect(second.status, second.text).toBe(200);
  return session;
}

async function replicasOf(sessionId: string): Promise<string[]> {
  const { completions } = await app.api(`/api/sessions/${sessionId}/completions`);
  return completions.map((c: any) => c.replica);
}

describe('fleet routing', () => {
  it('spreads 50 concurrent sessions over both replicas, each session on one replica', async () => {
    const sessions = await Promise.all(Array.from({ length: 50 }, (_, i) => twoTurnSession(i % 5 === 0 ? 'sglang' : 'vllm')));
    const perReplica = new Map<string, number>();
    for (const s of sessions) {
      const used = await replicasOf(s.id);
      expect(used).toHaveLength(2);
      expect(new Set(used).size, 'a session stays on one replica').toBe(1);
      perReplica.set(used[0]!, (perReplica.get(used[0]!) ?? 0) + 1);
    }
    expect(perReplica.get(vllm[0]!.url)).toBeGreaterThanOrEqual(10);
    expect(perReplica.get(vllm[1]!.url)).toBeGreaterThanOrEqual(10);
    expect(perReplica.get(sglang[0]!.url)).toBe(10);
  });

  it('moves sessions and not-yet-answered requests off a killed replica, and takes it back when it returns', async () => {
    for (const s of vllm) s.setKnobs({ perTokenMs: 15 });
    const victim = vllm[0]!;
    const port = Number(new URL(victim.url).port);
    const sessions = await Promise.all(Array.from({ length: 12 }, () => app.createSession({ engine: 'vllm' })));
    // Non-streaming agents have received no byte until the answer, so every one of their calls may fail over.
    const load = sessions.map(async (s) => {
      const results = [];
      for (let turn = 0; turn < 3; turn++) {
        results.push(await chat(s.urls.openai, { messages: [{ role: 'user', content: `What is ${turn + 2}*7? Use the calculator.` }], tools: [calculatorTool] }));
      }
      return results;
    });
    await new Promise((r) => setTimeout(r, 150));
    await victim.close();
    const results = (await Promise.all(load)).flat();
    expect(results.map((r) => r.status)).toEqual(results.map(() => 200));
    const engines0 = (await app.api('/api/engines')).engines.find((e: any) => e.id === 'vllm');
    expect(engines0.failovers, 'calls in flight on the killed replica moved to the other').toBeGreaterThan(0);
    const engines = await app.api('/api/engines');
    const dead = engines.engines.find((e: any) => e.id === 'vllm').replicas.find((r: any) => r.url === victim.url);
    expect(dead.healthy).toBe(false);

    // New sessions avoid the dead replica.
    const after = await twoTurnSession('vllm');
    expect(new Set(await replicasOf(after.id))).toEqual(new Set([vllm[1]!.url]));

    // Restart it on the same port: the health checks bring it back and new sessions use it again.
    const revived = await startSimEngine({ flavor: 'vllm', port, seed: 11, skill: 1, maxModelLen: 131072, ttftMs: 5, perTokenMs: 1 });
    vllm[0] = revived;
    vllm[1]!.setKnobs({ perTokenMs: 1 });
    const deadline = Date.now() + 15_000;
    for (;;) {
      const e = (await app.api('/api/engines')).engines.find((x: any) => x.id === 'vllm');
      if (e.replicas.every((r: any) => r.healthy)) break;
      if (Date.now() > deadline) throw new Error('replica did not come back');
      await new Promise((r) => setTimeout(r, 100));
    }
    const fresh = await Promise.all(Array.from({ length: 6 }, () => twoTurnSession('vllm')));
    const used = new Set((await Promise.all(fresh.map((s) => replicasOf(s.id)))).flat());
    expect(used.has(revived.url)).toBe(true);
  });

  it('gives streaming agents that already got bytes a dialect-shaped error, and records it', async () => {
    const flaky = await startSimEngine({ flavor: 'vllm', seed: 3, skill: 1, maxModelLen: 131072, ttftMs: 5, perTokenMs: 20 });
    const solo = await startFleetApp([engine('solo', 'vllm', [flaky], 'chat')]);
    try {
      const s = await solo.createSession();
      const pending = chat(s.urls.openai, { messages: [{ role: 'user', content: 'Tell me about the weather in a few sentences.' }], stream: true });
      await new Promise((r) => setTimeout(r, 150));
      await flaky.close();
      const r = await pending;
      expect(r.status).toBe(200);
      expect(r.text).toMatch(/data: \{"error":\{"message":/);
      expect(r.text.trim().endsWith('data: [DONE]')).toBe(true);
      const { completions } = await solo.api(`/api/sessions/${s.id}/completions`);
      // The agent already had part of the answer: a capture with a hole (custody), never trained on.
      expect(completions.map((c: any) => c.status)).toEqual(['incomplete']);
    } finally {
      await solo.stop();
    }
  });

  it('pins each session to one data-parallel rank of a replica (X-data-parallel-rank)', async () => {
    const dp = await startSimEngine({ flavor: 'vllm', seed: 2, skill: 1, maxModelLen: 131072, ttftMs: 0, perTokenMs: 0 });
    const dpApp = await startFleetApp([{ ...engine('dp', 'vllm', [dp], 'chat'), dataParallelSize: 2 }]);
    try {
      for (let i = 0; i < 4; i++) {
        const s = await dpApp.createSession();
        for (let turn = 0; turn < 3; turn++) expect((await chat(s.urls.openai, { messages: [{ role: 'user', content: `hi ${turn}` }] })).status).toBe(200);
      }
      expect(dp.stats().dpRanks).toEqual({ 0: 6, 1: 6 });
    } finally {
      await dpApp.stop();
      await dp.close();
    }
  });
});
