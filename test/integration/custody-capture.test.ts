// Fail-closed custody (issue 14, DESIGN §9): fault-injected captures — no ids, a missing logprob, an engine
// error after the agent had part of the answer — are recorded `incomplete` with their own reason; the
// session says so; traces that go on from them are masked with that reason and left out of the export.
// Runs on both stores (issue 15): the SQLite file, and a Rollgate node on a private Postgres.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startSimEngine, type SimEngine } from '../../src-main/engines/sim/index.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { freePort, startPostgres, type PostgresServer } from '../helpers/postgres.js';

const MODEL = 'Qwen/Qwen3-8B';

describe.each(['sqlite', 'postgres'] as const)('%s store', (kind) => {
  let sim: SimEngine;
  let tokenSim: SimEngine;
  let app: TestApp;
  let pg: PostgresServer | null = null;

  beforeAll(async () => {
    sim = await startSimEngine({ flavor: 'vllm', seed: 5, skill: 1, maxModelLen: 131072, perTokenMs: 1 });
    tokenSim = await startSimEngine({ flavor: 'sglang', seed: 5, skill: 1, maxModelLen: 131072, perTokenMs: 1 });
    let store = {};
    if (kind === 'postgres') {
      pg = await startPostgres();
      store = { store: await pg.createDatabase(), nodeId: 'capture-node', port: await freePort() };
    }
    app = await startTestApp({ sim: false, ...store, engines: [
      { id: 'faulty', kind: 'vllm', replicas: [sim.url], model: MODEL, mode: 'chat', tokenizer: 'builtin:qwen3' },
      { id: 'tokens', kind: 'sglang', replicas: [tokenSim.url], model: MODEL, mode: 'token', tokenizer: 'builtin:qwen3' },
    ] });
  });
  afterAll(async () => {
    await app?.stop();
    await sim?.close();
    await tokenSim?.close();
    await pg?.stop();
  });

  type Msg = OpenAI.Chat.ChatCompletionMessageParam;

  /** Turn 1 clean, turn 2 under the fault, turn 3 clean and extending turn 2's conversation. */
  async function session(fault: Record<string, number>, stream: boolean, engine = 'faulty') {
    const s = await app.createSession({ engine });
    const client = new OpenAI({ baseURL: s.urls.openai, apiKey: 'unused', maxRetries: 0 });
    const messages: Msg[] = [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'Say hello.' }];
    const call = async () => {
      if (!stream) return (await client.chat.completions.create({ model: MODEL, messages, max_tokens: 24 })).choices[0]!.message.content ?? '';
      let text = '';
      for await (const chunk of await client.chat.completions.create({ model: MODEL, messages, max_tokens: 24, stream: true })) text += chunk.choices[0]?.delta?.content ?? '';
      return text;
    };
    messages.push({ role: 'assistant', content: await call() }, { role: 'user', content: 'Again.' });
    sim.setKnobs(fault);
    let partial = '';
    await expect(async () => { partial = await call(); }).rejects.toThrow();
    sim.setKnobs({ missingIdsRate: 0, shortLogprobsRate: 0, midStreamErrorRate: 0 });
    messages.push({ role: 'assistant', content: partial || 'hello' }, { role: 'user', content: 'Once more.' });
    await call();
    return s.id;
  }

  describe('fault-injected captures', () => {
    const cases: Array<[string, Record<string, number>, boolean]> = [
      ['missing-ids', { missingIdsRate: 1 }, false],
      ['logprob-count', { shortLogprobsRate: 1 }, true],
      ['engine-error-mid-stream', { midStreamErrorRate: 1 }, true],
    ];
    for (const [reason, fault, stream] of cases) {
      it(`${reason}: recorded incomplete, the session says so, the trace that went on is masked and not exported`, async () => {
        const id = await session(fault, stream);
        const { completions } = await app.api(`/api/sessions/${id}/completions`);
        expect(completions.map((c: any) => c.status)).toEqual(['ok', 'incomplete', 'ok']);
        expect(completions[1].incompleteReason).toBe(reason);
        expect(completions[1].error).toMatch(new RegExp(`^${reason}: `));

        const s = await app.api(`/api/sessions/${id}`);
        expect(s.custody).toBe('incomplete');
        expect(s.incompleteCalls).toEqual([expect.objectContaining({ completionId: completions[1].id, reason })]);

        const { traces } = await app.api(`/api/sessions/${id}/traces`);
        const last = traces.find((t: any) => t.completionIds.includes(completions[2].id));
        expect(last).toMatchObject({ masked: true, maskReason: reason, maskedBy: completions[1].id });

        const lines = (await (await fetch(`${app.url}/api/export?session=${id}&status=all`)).text()).split('\n').filter(Boolean).map((l) => JSON.parse(l));
        expect(lines.some((r) => r.trace_id === last.id)).toBe(false);
        expect(lines.every((r) => r.masked === false)).toBe(true);
        const kept = (await (await fetch(`${app.url}/api/export?session=${id}&status=all&includeMasked=1`)).text()).split('\n').filter(Boolean).map((l) => JSON.parse(l));
        expect(kept.find((r) => r.trace_id === last.id)).toMatchObject({ masked: true, mask_reason: reason });
      });
    }
  });

  describe('capture health', () => {
    it('per engine: masked traces and incomplete sessions with reasons, chain breaks, retries, prompt reuse in token mode', async () => {
      // three clean turns in token mode: each prompt reuses the previous sampled ids
      const t = await app.createSession({ engine: 'tokens' });
      const client = new OpenAI({ baseURL: t.urls.openai, apiKey: 'unused', maxRetries: 0 });
      const messages: Msg[] = [{ role: 'user', content: 'Say hello.' }];
      for (let i = 0; i < 3; i++) {
        const r = await client.chat.completions.create({ model: MODEL, messages, max_tokens: 400 });
        messages.push({ role: 'assistant', content: r.choices[0]!.message.content ?? '' }, { role: 'user', content: 'Again.' });
      }
      const h = await app.api('/api/capture-health');
      expect(h.scope).toEqual({ batchId: null, engineId: null, builder: 'prefix-merge' });
      const faulty = h.byEngine.faulty;
      expect(faulty).toMatchObject({ sessions: 3, incompleteSessions: 3, completions: 9, incompleteCompletions: 3, retries: 0 });
      // Each faulty session: the trace that went on past the bad call, and the one it extended (cut short there).
      expect(faulty.maskReasons).toEqual({ 'missing-ids': 2, 'logprob-count': 2, 'engine-error-mid-stream': 2 });
      expect(faulty.maskedFraction).toBeCloseTo(faulty.maskedTraces / faulty.traces);
      expect(faulty.promptReuse).toEqual({ turns: 0, reused: 0, rate: null }); // chat mode: not measured
      const tokens = h.byEngine.tokens;
      expect(tokens).toMatchObject({ sessions: 1, incompleteSessions: 0, traces: 1, maskedTraces: 0, maskedFraction: 0, meanCompletionsPerTrace: 3 });
      expect(tokens.promptReuse).toEqual({ turns: 2, reused: 2, rate: 1 });
      expect(h.overall.sessions).toBe(4);
      expect(h.overall.maskedTraces).toBe(6);
      const only = await app.api('/api/capture-health?engine=tokens');
      expect(Object.keys(only.byEngine)).toEqual(['tokens']);
      expect((await fetch(`${app.url}/api/capture-health?batch=nope`)).status).toBe(404);
    });
  });
});
