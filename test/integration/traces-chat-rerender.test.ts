// Chat mode on vLLM (issue 19): vLLM answers a Qwen3 tool-call turn with `content: "\n\n"`, the agent sends
// it back, and the template renders one more newline. The calculator batch on sim-vllm (the default
// engine, chat mode) must still give one trace per sample, its re-rendered spans recorded and checked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTraces, verifyTrace } from '../../src-main/core/trajectory/index.js';
import { loadTokenizer } from '../../src-main/engines/tokenizer/index.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

let app: TestApp;
beforeAll(async () => { app = await startTestApp({ simSkill: 0.8 }); });
afterAll(async () => { await app?.stop(); });

async function runBatch(engine: string, n: number): Promise<any> {
  const { id } = await app.api('/api/batches', { method: 'POST', body: JSON.stringify({ dataset: 'demo:calculator', harness: 'builtin', engine, n, concurrency: 4 }) });
  const end = Date.now() + 150_000;
  for (;;) {
    const view = await app.api(`/api/batches/${id}`);
    if (!['queued', 'running'].includes(view.status)) return view;
    if (Date.now() > end) throw new Error(`batch ${id} still ${view.status}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('calculator batch on sim-vllm in chat mode', () => {
  it('merges every multi-turn session into one trace, with whitespace-only re-renders recorded', async () => {
    const engine = (await app.api('/api/engines')).engines.find((e: any) => e.id === 'sim-vllm');
    expect(engine.mode).toBe('chat');
    const view = await runBatch('sim-vllm', 2);
    expect(view.status).toBe('completed');
    const tok = await loadTokenizer('builtin:qwen3');
    const text = (ids: number[]) => tok.decode(ids);
    const sessions = (await app.store.sessions.list({ batchId: view.id }));
    expect(sessions.length).toBe(view.counts.total);

    let multiTurn = 0;
    let spans = 0;
    for (const s of sessions) {
      const res = await app.api(`/api/sessions/${s.id}/traces`);
      const records = (await app.store.completions.listBySession(s.id));
      expect(res.traces.length, `session ${s.id}`).toBe(1);
      const [trace] = res.traces;
      expect(trace.breaks).toEqual([]);
      expect(trace.completionIds.length).toBe(records.length);
      expect(verifyTrace(trace, new Map(records.map((r) => [r.id, r])), (id) => tok.tokenText(id))).toEqual({ ok: true });
      if (records.length > 1) multiTurn++;
      for (const span of trace.rerendered) {
        spans++;
        expect(text(span.sampled).trim()).toBe(text(span.served).trim());
        expect(trace.completionIds).toContain(span.servedIn);
      }

      // Without token texts the same records split where the template re-rendered the output.
      const exact = buildTraces('prefix-merge', records);
      if (trace.rerendered.length > 0) {
        expect(exact.traces.length).toBeGreaterThan(1);
        expect(exact.traces[0].breaks[0].reason).toBe('prompt-diverged');
      }
    }
    expect(multiTurn).toBeGreaterThan(sessions.length / 2);
    expect(spans).toBeGreaterThan(0);

    const exported = await (await fetch(`${app.url}/api/export?batch=${view.id}`)).text();
    const rows = exported.trim().split('\n').map((l) => JSON.parse(l));
    expect(rows.length).toBe(sessions.length);
    expect(new Set(rows.map((r) => r.session_id)).size).toBe(sessions.length);
  }, 200_000);
});
