// The builtin agent on demo:calculator through the real gateway, on both sim engines, submitted and
// polled over the control API like a trainer would; progress arrives as `batch` events over SSE.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';

const SKILL = 0.8;
const N = 4;
const TOLERANCE = 0.15; // 64 samples per engine: 3 standard errors of a Bernoulli(0.8) mean is ~0.15

let app: TestApp;
beforeAll(async () => { app = await startTestApp({ simSkill: SKILL }); });
afterAll(async () => { await app?.stop(); });

async function poll(id: string, timeoutMs = 150_000): Promise<any> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const view = await app.api(`/api/batches/${id}`);
    if (!['queued', 'running'].includes(view.status)) return view;
    if (Date.now() > end) throw new Error(`batch ${id} still ${view.status}: ${JSON.stringify(view.counts)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Collects `batch` events from GET /api/events (SSE) until `stop()`. */
function listen() {
  const events: any[] = [];
  const ac = new AbortController();
  const done = (async () => {
    const res = await fetch(`${app.url}/api/events`, { signal: ac.signal });
    const dec = new TextDecoder();
    let buf = '';
    try {
      for await (const chunk of res.body as any) {
        buf += dec.decode(chunk, { stream: true });
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const frame = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const data = /^data: (.*)$/m.exec(frame)?.[1];
          if (/^event: batch$/m.test(frame) && data) events.push(JSON.parse(data));
        }
      }
    } catch { /* aborted */ }
  })();
  return { events, stop: async () => { ac.abort(); await done; } };
}

describe.each(['sim-vllm', 'sim-sglang'])('builtin agent on demo:calculator via %s', (engine) => {
  it(`finishes every sample with rewards matching the sim skill (${SKILL} ± ${TOLERANCE})`, async () => {
    const sse = listen();
    await new Promise((r) => setTimeout(r, 100));
    const { id } = await app.api('/api/batches', { method: 'POST', body: JSON.stringify({ dataset: 'demo:calculator', harness: 'builtin', engine, n: N, concurrency: 4 }) });
    expect(id).toMatch(/^bat_/);
    const view = await poll(id);
    await sse.stop();

    expect(view.status).toBe('completed');
    expect(view.spec).toMatchObject({ dataset: 'demo:calculator', harness: 'builtin', engine, n: N, concurrency: 4, simulated: true });
    expect(view.tasks.length).toBeGreaterThanOrEqual(12);
    const total = view.tasks.length * N;
    expect(view.counts).toEqual({ total, queued: 0, running: 0, finished: total, failed: 0, interrupted: 0, done: total });

    const rewards = view.tasks.flatMap((t: any) => t.rewards);
    expect(rewards.every((r: number) => r === 0 || r === 1)).toBe(true);
    expect(rewards.filter((r: number) => r === 0).length, 'some samples are wrong (skill < 1)').toBeGreaterThan(0);
    expect(Math.abs(view.meanReward - SKILL), `mean reward ${view.meanReward}`).toBeLessThanOrEqual(TOLERANCE);
    expect(Object.keys(view.passAtK)).toEqual(['1', '2', '4']);
    expect(view.passAtK['1']).toBeCloseTo(view.meanReward, 5);
    expect(view.passAtK['4']).toBeGreaterThanOrEqual(view.passAtK['1']);
    for (const t of view.tasks) {
      expect(t.groupId).toBe(`${id}:${t.taskId}`);
      expect(t.samples.map((s: any) => s.sampleIndex)).toEqual([0, 1, 2, 3]);
      expect(t.samples.every((s: any) => s.outcome === 'ok' && s.completionCount >= 2)).toBe(true);
      expect(t.usage.completions).toBe(t.samples.reduce((a: number, s: any) => a + s.completionCount, 0));
    }
    expect(view.usage.completions).toBe(view.tasks.reduce((a: number, t: any) => a + t.usage.completions, 0));
    expect(view.usage.promptTokens).toBeGreaterThan(view.usage.completions * 100);
    expect(view.usage.outputTokens).toBeGreaterThan(0);

    // Sessions carry the batch, task, group and sample index; rewards were set on them.
    const { sessions } = await app.api(`/api/sessions?batch=${id}`);
    expect(sessions).toHaveLength(total);
    for (const s of sessions) {
      expect(s).toMatchObject({ batchId: id, harness: 'builtin', engineId: engine, status: 'finished' });
      expect(s.metadata.groupId).toBe(`${id}:${s.taskId}`);
      expect([0, 1, 2, 3]).toContain(s.metadata.sampleIndex);
      expect(s.metadata.evaluator.type).toBe('exact');
      expect(s.reward).toBe(view.tasks.find((t: any) => t.taskId === s.taskId).rewards[s.metadata.sampleIndex]);
      // the gateway's record names the response the answer came from: that trace earns the reward (issue 14)
      if (s.metadata.outcome === 'ok') {
        const { completions } = await app.api(`/api/sessions/${s.id}/completions`);
        expect(s.metadata.finalResponseId).toBe(completions.filter((c: any) => c.status === 'ok').at(-1).id);
      }
    }

    // The run record: the agent's stdout/stderr and the evaluator's verdict.
    const run = await app.api(`/api/sessions/${sessions[0].id}/run`);
    expect(run).toMatchObject({ status: 'done', outcome: 'ok', exitCode: 0 });
    expect(run.stdout).toMatch(/The answer is -?[\d.]+\./);
    expect(run.stderr).toMatch(/\[builtin-agent\] turn 1: calculator\(/);
    expect(run.evaluator).toMatchObject({ type: 'exact', reward: sessions[0].reward });

    // Progress events: done counts climb to the total, ending with `completed`.
    const mine = sse.events.filter((e) => e.id === id);
    expect(mine[0].status).toBe('queued');
    expect(mine.at(-1)).toMatchObject({ status: 'completed', done: total, total });
    const dones = mine.map((e) => e.done).filter((d) => d !== undefined);
    expect(dones).toEqual([...dones].sort((a, b) => a - b));
    expect(new Set(dones).size).toBeGreaterThan(3);

    const { batches } = await app.api('/api/batches');
    expect(batches.find((b: any) => b.id === id)).toMatchObject({ status: 'completed', meanReward: view.meanReward });
  }, 180_000);
});
