// A client that goes away mid-call (issue 8): the engine request is cancelled (the sim stops generating for
// it) and the completion is recorded as `aborted`, in every dialect, streaming or not.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimEngine, type SimEngine } from '../../src-main/engines/sim/index.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { AGENT_DIALECTS, dialectCall, MODEL, streamUntilOutput, waitFor } from './fault-helpers.js';

let sim: SimEngine;
let app: TestApp;
beforeAll(async () => {
  // 40 ms per token and a long answer: a full generation takes seconds, a cancelled one stops at once.
  sim = await startSimEngine({ flavor: 'vllm', seed: 3, skill: 1, ttftMs: 20, perTokenMs: 40, maxModelLen: 131072 });
  app = await startTestApp({ sim: false, healthIntervalMs: 60_000, engines: [{ id: 'sim', kind: 'vllm', replicas: [sim.url], model: MODEL, mode: 'chat', tokenizer: 'builtin:qwen3' }] });
});
afterAll(async () => {
  await app?.stop();
  await sim?.close();
});

async function recordOf(sessionId: string) {
  return waitFor('the aborted record', async () => {
    await app.store.writer.flush();
    return (await app.store.completions.listBySession(sessionId))[0] ?? null;
  });
}

describe('a client that disconnects mid-stream', () => {
  for (const d of AGENT_DIALECTS) {
    it(`${d}: the engine call is cancelled and the record says aborted`, async () => {
      const session = await app.createSession({ engine: 'sim' });
      const before = sim.stats();
      const stream = await streamUntilOutput(d, dialectCall(d, app.url, session.key, { stream: true, maxTokens: 2000 }));
      expect(sim.stats().running).toBe(1);
      const cancelledAt = Date.now();
      await stream.cancel();
      // The engine's generation ends within a few token times, not after the whole answer.
      await waitFor('the sim to stop generating', () => sim.stats().running === 0, 3000);
      expect(Date.now() - cancelledAt).toBeLessThan(3000);
      const after = sim.stats();
      expect(after.generations).toBe(before.generations + 1);
      // A generation the client abandoned is not counted as completed output by the engine.
      expect(after.completionTokens).toBe(before.completionTokens);
      const rec = await recordOf(session.id);
      expect(rec.status).toBe('aborted');
      expect(rec.error).toMatch(/client disconnected/);
    });
  }
});

describe('a client that disconnects before a non-streaming answer', () => {
  it('openai-chat: the engine call is cancelled and the record says aborted', async () => {
    const session = await app.createSession({ engine: 'sim' });
    const c = dialectCall('openai-chat', app.url, session.key, { stream: false, maxTokens: 2000 });
    const abort = new AbortController();
    const pending = fetch(c.url, { ...c.init, signal: abort.signal }).catch((e: Error) => e);
    await waitFor('the engine to start', () => sim.stats().running === 1, 5000);
    await new Promise((r) => setTimeout(r, 200));
    abort.abort();
    expect(await pending).toBeInstanceOf(Error);
    await waitFor('the sim to stop generating', () => sim.stats().running === 0, 3000);
    const rec = await recordOf(session.id);
    expect(rec.status).toBe('aborted');
  });
});
