// The routes the workbench reads (issue 16): kept re-scoring results (listed, reopened token by token,
// exported, still there after a restart), trace health per session, and a session's transcript.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src-main/app.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { toolSession } from './traces-agent.js';

describe('workbench routes', () => {
  let app: TestApp;
  let vllm: string;
  let rescoreId: string;
  beforeAll(async () => {
    app = await startTestApp({ simSkill: 1 });
    vllm = (await toolSession(app, 'sim-vllm', { reward: 1 })).sessionId;
  });
  afterAll(async () => { await app?.stop(); });

  it('keeps a re-scoring: listed for the session, reopened per token with pieces, exported as JSONL', async () => {
    const r = await app.api<{ id: string; overall: { n: number }; traces: Array<{ traceId: string; deltas: number[] }> }>('/api/traces/rescore', {
      method: 'POST', body: JSON.stringify({ sessionId: vllm, engine: 'sim-sglang' }),
    });
    expect(r.id).toMatch(/^rsc_/);
    rescoreId = r.id;
    expect(r.overall.n).toBeGreaterThan(0);

    const { rescores } = await app.api<{ rescores: Array<{ id: string; engine: string; sourceEngine: string; overall: { n: number } }> }>(`/api/rescores?session=${vllm}`);
    expect(rescores.map((x) => x.id)).toEqual([r.id]);
    expect(rescores[0]).toMatchObject({ engine: 'sim-sglang', sourceEngine: 'sim-vllm', overall: { n: r.overall.n } });

    const detail = await app.api<{ traces: Array<{ traceId: string; positions: number[]; tokenIds: number[]; pieces: string[]; sampled: number[]; rescored: number[]; deltas: number[] }> }>(
      `/api/rescores/${r.id}/tokens?session=${vllm}`);
    expect(detail.traces.map((t) => t.traceId)).toEqual(r.traces.map((t) => t.traceId));
    const traces = await app.api<{ traces: Array<{ id: string; responseIds: number[]; responseLogprobs: number[]; lossMask: number[] }> }>(`/api/sessions/${vllm}/traces`);
    for (const t of detail.traces) {
      const trace = traces.traces.find((x) => x.id === t.traceId)!;
      expect(t.positions.length).toBeGreaterThan(0);
      t.positions.forEach((p, i) => {
        expect(trace.lossMask[p]).toBe(1);
        expect(t.tokenIds[i]).toBe(trace.responseIds[p]);
        expect(t.sampled[i]).toBeCloseTo(trace.responseLogprobs[p], 5);
        expect(t.deltas[i]).toBeCloseTo(t.sampled[i] - t.rescored[i], 6);
      });
      expect(t.pieces.length).toBe(t.tokenIds.length);
      // The same deltas the run returned.
      const returned = r.traces.find((x) => x.traceId === t.traceId)!;
      t.deltas.forEach((d, i) => expect(d).toBeCloseTo(returned.deltas[i], 5));
    }

    // The sampled tokens, as text: the tool call and the answer.
    expect(detail.traces.map((t) => t.pieces.join('')).join('')).toMatch(/calculator[\s\S]*391/);

    const res = await fetch(`${app.url}/api/rescores/${r.id}/export`);
    expect(res.headers.get('content-type')).toContain('ndjson');
    const lines = (await res.text()).split('\n').filter(Boolean).map((l) => JSON.parse(l) as { rescore_id: string; trace_id: string; deltas: number[]; rescore_engine: string });
    expect(lines.map((l) => l.trace_id)).toEqual(r.traces.map((t) => t.traceId));
    expect(lines.every((l) => l.rescore_id === r.id && l.rescore_engine === 'sim-sglang')).toBe(true);

    const missing = await fetch(`${app.url}/api/rescores/rsc_nope`);
    expect(missing.status).toBe(404);
    const bad = await fetch(`${app.url}/api/rescores/${r.id}/tokens`);
    expect(bad.status).toBe(400);
  });

  it('trace health: a vLLM chat-mode session breaks its chain with a recorded reason', async () => {
    const { sessions } = await app.api<{ sessions: Array<{ sessionId: string; traces: number; breaks: number; breakReasons: Record<string, number>; policyVersion: number }> }>(
      `/api/trace-health?sessions=${vllm},ses_unknown`);
    expect(sessions).toHaveLength(1);
    const h = sessions[0];
    expect(h.sessionId).toBe(vllm);
    expect(h.traces).toBeGreaterThanOrEqual(2);
    expect(h.breaks).toBeGreaterThanOrEqual(1);
    expect(Object.values(h.breakReasons).reduce((a, b) => a + b, 0)).toBe(h.breaks);
    expect(h.policyVersion).toBe(0);
  });

  it('transcript: user, assistant with tool calls, tool results, final answer', async () => {
    const { conversations } = await app.api<{ conversations: Array<{ messages: Array<{ role: string; content: unknown; tool_calls?: Array<{ function: { name: string; arguments: string } }> }> }> }>(
      `/api/sessions/${vllm}/transcript`);
    expect(conversations.length).toBeGreaterThanOrEqual(1);
    const longest = conversations.reduce((a, b) => (b.messages.length > a.messages.length ? b : a));
    const roles = longest.messages.map((m) => m.role);
    expect(roles).toContain('user');
    expect(roles).toContain('tool');
    expect(roles[roles.length - 1]).toBe('assistant');
    expect(longest.messages.some((m) => m.tool_calls?.some((c) => c.function.name === 'calculator' && c.function.arguments.length > 0))).toBe(true);
  });

  it('a kept re-scoring survives a restart', async () => {
    await app.close();
    const again = await createApp({ dataDir: app.dataDir, port: 0, sim: true });
    try {
      const res = await fetch(`${again.url}/api/rescores/${rescoreId}`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { rescore: { id: string }; traces: unknown[] };
      expect(body.rescore.id).toBe(rescoreId);
      expect(body.traces.length).toBeGreaterThan(0);
    } finally {
      await again.close();
    }
  });
});
