// Cross-engine re-scoring (issue 4): engines/rescore.ts against the sims over loopback, and
// POST /api/traces/rescore on sessions driven through the gateway.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sequenceLogprobs } from '../../src-main/engines/sim/logprobs.js';
import { startSimEngine, type SimEngine } from '../../src-main/engines/sim/index.js';
import { parseSglangInputLogprobs, sglangScoreBody } from '../../src-main/engines/drivers/sglang/scoring.js';
import { parseVllmPromptLogprobs, vllmScoreBody } from '../../src-main/engines/drivers/vllm/scoring.js';
import { scoreTokens } from '../../src-main/engines/rescore.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { toolSession, type TraceJson } from './traces-agent.js';

const MODEL = 'Qwen/Qwen3-8B';

describe('scoreTokens against the sim engines', () => {
  const sims: SimEngine[] = [];
  afterAll(async () => { for (const s of sims) await s.close(); });

  for (const flavor of ['vllm', 'sglang'] as const) {
    it(`${flavor}: returns the logprob of every position (null at 0), as the engine computes it`, async () => {
      const sim = await startSimEngine({ flavor, seed: 11, model: MODEL, ttftMs: 0, perTokenMs: 0 });
      sims.push(sim);
      const ids = [151644, 872, 198, 3838, 374, 220, 17, 9, 17, 18, 30, 151645, 198];
      const r = await scoreTokens({ engine: { id: `x-${flavor}`, kind: flavor, model: MODEL }, replica: sim.url, ids });
      expect(r.logprobs).toEqual(sequenceLogprobs(flavor, ids, 11));
      expect(r.requestServed).toEqual(flavor === 'vllm' ? vllmScoreBody(MODEL, ids) : sglangScoreBody(ids, 0));
      // The engine generated no (sglang) or one ignored (vllm) token.
      expect(sim.stats().completionTokens).toBeLessThanOrEqual(1);
    });
  }

  it('rejects answers that do not match the ids sent', () => {
    const ids = [1, 2, 3];
    expect(() => parseVllmPromptLogprobs({ choices: [{ prompt_token_ids: [1, 2, 4], prompt_logprobs: [null, { 2: { logprob: -1 } }, { 3: { logprob: -1 } }] }] }, ids))
      .toThrow(/changed the prompt ids/);
    expect(() => parseVllmPromptLogprobs({ choices: [{ prompt_logprobs: [null, { 2: { logprob: -1 } }, { 9: { logprob: -1 } }] }] }, ids)).toThrow(/lacks token 3/);
    expect(() => parseSglangInputLogprobs({ meta_info: { input_token_logprobs: [[null, 1, null], [-0.5, 2, null], [-0.1, 7, null]] } }, ids)).toThrow(/scored token 7/);
    expect(parseSglangInputLogprobs({ meta_info: { input_token_logprobs: [[-0.5, 2, null], [-0.25, 3, null]] } }, ids)).toEqual([null, -0.5, -0.25]);
  });

  it('reports an engine error with the engine message', async () => {
    const sim = await startSimEngine({ flavor: 'vllm', seed: 1, model: MODEL, maxModelLen: 8 });
    sims.push(sim);
    await expect(scoreTokens({ engine: { id: 'small', kind: 'vllm', model: MODEL }, replica: sim.url, ids: [1, 2, 3, 4, 5, 6, 7, 8, 9] }))
      .rejects.toThrow(/maximum context length/);
  });
});

describe('POST /api/traces/rescore', () => {
  let app: TestApp;
  let vllmA: string;
  let vllmB: string;
  let sglang: string;
  beforeAll(async () => {
    app = await startTestApp({ simSkill: 1 });
    vllmA = (await toolSession(app, 'sim-vllm', { reward: 1 })).sessionId;
    vllmB = (await toolSession(app, 'sim-vllm', { reward: 0 })).sessionId;
    sglang = (await toolSession(app, 'sim-sglang', { reward: 1 })).sessionId;
    for (const id of [vllmA, vllmB]) await app.store.writer.updateSession(id, { batchId: 'batch-vllm', taskId: 'arith' });
  });
  afterAll(async () => { await app?.stop(); });

  const rescore = (body: Record<string, unknown>) => fetch(`${app.url}/api/traces/rescore`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
  });

  async function maskOnes(sessionId: string, builder = 'prefix-merge'): Promise<{ traces: TraceJson[]; n: number }> {
    const { traces } = await app.api<{ traces: TraceJson[] }>(`/api/sessions/${sessionId}/traces?builder=${builder}`);
    return { traces, n: traces.reduce((a, t) => a + t.lossMask.filter((m) => m === 1).length, 0) };
  }

  it('sim-vllm traces re-scored on sim-vllm match exactly (Δ only from float32 storage)', async () => {
    const res = await rescore({ sessionId: vllmA, engine: 'sim-vllm', includeLogprobs: true });
    expect(res.status).toBe(200);
    const body = await res.json();
    const { traces, n } = await maskOnes(vllmA);
    expect(body.engine).toBe('sim-vllm');
    expect(body.errors).toEqual([]);
    expect(body.traces.map((t: { traceId: string }) => t.traceId)).toEqual(traces.map((t) => t.id));
    expect(body.overall.n).toBe(n);
    expect(n).toBeGreaterThan(50);
    expect(body.overall.meanAbsDelta).toBeLessThan(1e-6);
    expect(body.overall.maxAbsDelta).toBeLessThan(1e-6);
    expect(Math.abs(body.overall.klEstimate)).toBeLessThan(1e-6);
    expect(body.overall.shareAbove0_5).toBe(0);
    console.log(`sim-vllm → sim-vllm: n=${body.overall.n} mean|Δ|=${body.overall.meanAbsDelta.toExponential(2)} max|Δ|=${body.overall.maxAbsDelta.toExponential(2)}`);
    for (const [i, t] of body.traces.entries()) {
      const tr = traces[i];
      expect(t.sourceEngine).toBe('sim-vllm');
      expect(t.positions).toEqual(tr.lossMask.flatMap((m, j) => (m === 1 ? [j] : [])));
      expect(t.deltas).toHaveLength(t.positions.length);
      expect(t.sampled).toEqual(t.positions.map((p: number) => tr.responseLogprobs[p]));
      expect(t.summary.n).toBe(t.positions.length);
    }
  });

  it('sim-vllm traces re-scored on sim-sglang differ a little', async () => {
    const res = await rescore({ sessionId: vllmA, engine: 'sim-sglang', bins: 10 });
    expect(res.status).toBe(200);
    const body = await res.json();
    const { n } = await maskOnes(vllmA);
    expect(body.engineKind).toBe('sglang');
    expect(body.overall.n).toBe(n);
    expect(body.overall.meanAbsDelta).toBeGreaterThan(1e-4);
    expect(body.overall.meanAbsDelta).toBeLessThan(0.5);
    expect(body.overall.maxAbsDelta).toBeGreaterThanOrEqual(body.overall.meanAbsDelta);
    expect(body.overall.klK3).toBeGreaterThanOrEqual(0);
    expect(body.overall.histogram).toHaveLength(10);
    expect(body.overall.histogram.reduce((a: number, b: { count: number }) => a + b.count, 0)).toBe(n);
    expect(body.traces.every((t: { deltas: number[] }) => t.deltas.some((d) => d !== 0))).toBe(true);
    const o = body.overall;
    console.log(`sim-vllm → sim-sglang: n=${o.n} mean|Δ|=${o.meanAbsDelta.toFixed(5)} max|Δ|=${o.maxAbsDelta.toFixed(5)} KL k1=${o.klEstimate.toFixed(5)} k3=${o.klK3.toFixed(6)} share>0.5=${o.shareAbove0_5}`);
  });

  it('sim-sglang (token mode) traces: exact on sim-sglang, small non-zero Δ on sim-vllm', async () => {
    const same = await (await rescore({ sessionId: sglang, engine: 'sim-sglang' })).json();
    const { n } = await maskOnes(sglang);
    expect(same.traces).toHaveLength(1);
    expect(same.overall.n).toBe(n);
    expect(same.overall.maxAbsDelta).toBeLessThan(1e-6);
    const other = await (await rescore({ sessionId: sglang, engine: 'sim-vllm', builder: 'per-request', concurrency: 2 })).json();
    expect(other.builder).toBe('per-request');
    expect(other.traces.length).toBeGreaterThanOrEqual(4);
    expect(other.overall.n).toBe(n);
    expect(other.overall.meanAbsDelta).toBeGreaterThan(1e-4);
    expect(other.overall.meanAbsDelta).toBeLessThan(0.5);
  });

  it('re-scores a whole batch, reporting progress as events under the caller\'s progressId', async () => {
    const seen: any[] = [];
    const unsubscribe = app.events.subscribe((e) => { if (e.type === 'rescore') seen.push(e); });
    const body = await (await rescore({ batchId: 'batch-vllm', engine: 'sim-vllm', concurrency: 3, progressId: 'p-1' })).json();
    unsubscribe();
    expect(body.sessions).toBe(2);
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(seen.every((e) => e.id === 'p-1' && e.sessions === 2)).toBe(true);
    expect(seen[0]).toMatchObject({ sessionsRead: 0, tracesDone: 0, tokens: 0, done: false });
    expect(seen.at(-1)).toMatchObject({ sessionsRead: 2, tracesDone: body.traces.length, tokens: body.overall.n, done: true });
    expect(seen.filter((e) => e.done)).toHaveLength(1);
    for (let i = 1; i < seen.length; i++) expect(seen[i].tracesDone).toBeGreaterThanOrEqual(seen[i - 1].tracesDone);
    const a = await maskOnes(vllmA);
    const b = await maskOnes(vllmB);
    expect(new Set(body.traces.map((t: { sessionId: string }) => t.sessionId))).toEqual(new Set([vllmA, vllmB]));
    expect(body.overall.n).toBe(a.n + b.n);
    expect(body.overall.maxAbsDelta).toBeLessThan(1e-6);
  });

  it('answers clear 4xx errors', async () => {
    const unknownEngine = await rescore({ sessionId: vllmA, engine: 'no-such-engine' });
    expect(unknownEngine.status).toBe(400);
    expect((await unknownEngine.json()).error.message).toMatch(/unknown engine no-such-engine; known: sim-vllm, sim-sglang/);
    const unknownSession = await rescore({ sessionId: 'ses_missing', engine: 'sim-vllm' });
    expect(unknownSession.status).toBe(404);
    expect((await unknownSession.json()).error.message).toMatch(/session ses_missing not found/);
    const unknownBatch = await rescore({ batchId: 'nope', engine: 'sim-vllm' });
    expect(unknownBatch.status).toBe(404);
    const neither = await rescore({ engine: 'sim-vllm' });
    expect(neither.status).toBe(400);
    expect((await neither.json()).error.message).toMatch(/exactly one of sessionId and batchId/);
    const both = await rescore({ engine: 'sim-vllm', sessionId: vllmA, batchId: 'batch-vllm' });
    expect(both.status).toBe(400);
    const badBuilder = await rescore({ engine: 'sim-vllm', sessionId: vllmA, builder: 'x' });
    expect(badBuilder.status).toBe(400);
  });

  it('waits or answers 429 while engines are paused for a weight update', async () => {
    const paused = await app.pool.pause('reject', 100);
    expect(paused.mode).toBe('reject');
    try {
      const res = await rescore({ sessionId: vllmA, engine: 'sim-vllm' });
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toBeTruthy();
    } finally {
      app.pool.resume();
    }
    const ok = await rescore({ sessionId: vllmA, engine: 'sim-vllm' });
    expect(ok.status).toBe(200);
  });
});
