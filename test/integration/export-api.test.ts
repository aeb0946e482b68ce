// GET /api/export (issue 4): streaming JSONL in the train (DESIGN §8) and SFT formats, filters, and proof
// that the export streams (rows leave before the last session is read; backpressure stops the reader).
import { randomBytes } from 'node:crypto';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportLines, newProgress, type ExportSource } from '../../src-main/api/export.js';
import { foldConversations, messageKey } from '../../src-main/core/export/session-traces.js';
import type { ChatMessage } from '../../src-main/core/types.js';
import type { CompletionRecord, NewSession } from '../../src-main/core/types.js';
import type { CompletionIterateFilter } from '../../src-main/store/index.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { agentTurn, startAgent, toolSession, type TraceJson } from './traces-agent.js';

let app: TestApp;
const ids: Record<string, string> = {};
beforeAll(async () => {
  app = await startTestApp({ simSkill: 1 });
  // b1: two vLLM samples of task "arith" (rewards 1 and 0); b2: one SGLang sample (reward 0.5);
  // a loose SGLang session with no batch and no reward.
  ids.v1 = (await toolSession(app, 'sim-vllm', { reward: 1, body: { taskId: 'arith', metadata: { sampleIndex: 0 } } })).sessionId;
  ids.v2 = (await toolSession(app, 'sim-vllm', { reward: 0, body: { taskId: 'arith', metadata: { sampleIndex: 1 } } })).sessionId;
  ids.s1 = (await toolSession(app, 'sim-sglang', { reward: 0.5, body: { taskId: 'arith' } })).sessionId;
  const loose = await startAgent(app, 'sim-sglang');
  await agentTurn(loose, 'What is 6*7? Use the calculator.', { stream: true });
  ids.s2 = loose.sessionId;
  for (const id of [ids.v1, ids.v2]) await app.store.writer.updateSession(id, { batchId: 'b1' });
  await app.store.writer.updateSession(ids.s1, { batchId: 'b2' });
});
afterAll(async () => { await app?.stop(); });

async function exportRows(query: string): Promise<{ res: Response; text: string; rows: any[] }> {
  const res = await fetch(`${app.url}/api/export${query}`);
  const text = await res.text();
  if (!res.ok) return { res, text, rows: [] };
  expect(text === '' || text.endsWith('\n')).toBe(true);
  const rows = text.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  return { res, text, rows };
}

async function apiTraces(sessionId: string, builder = 'prefix-merge'): Promise<TraceJson[]> {
  return (await app.api<{ traces: TraceJson[] }>(`/api/sessions/${sessionId}/traces?builder=${builder}`)).traces;
}

describe('GET /api/export, train format', () => {
  it('streams one snake_case row per trace, equal to the traces API', async () => {
    const { res, rows } = await exportRows('?format=train&status=all');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="rollgate-all-train-prefix-merge.jsonl"');
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    const expected = (await Promise.all([ids.v1, ids.v2, ids.s1, ids.s2].map((id) => apiTraces(id)))).flat();
    expect(rows.map((r) => r.trace_id).sort()).toEqual(expected.map((t) => t.id).sort());
    for (const row of rows) {
      expect(Object.keys(row)).toEqual([
        'trace_id', 'session_id', 'task_id', 'batch_id', 'group_id', 'sample_index', 'engine', 'policy_versions',
        'prompt_ids', 'response_ids', 'loss_mask', 'response_logprobs', 'reward', 'masked', 'mask_reason', 'credit', 'digest',
        'is_final', 'num_traces', 'finish_reason', 'truncated', 'turns', 'sampling', 'model', 'tokenizer', 'metadata',
      ]);
      const t = expected.find((x) => x.id === row.trace_id)!;
      expect(row.prompt_ids).toEqual(t.promptIds);
      expect(row.response_ids).toEqual(t.responseIds);
      expect(row.loss_mask).toEqual(t.lossMask);
      expect(row.response_logprobs).toEqual(t.responseLogprobs);
      expect(row.response_ids.length).toBe(row.loss_mask.length);
      expect(row.response_ids.length).toBe(row.response_logprobs.length);
      expect(row.policy_versions).toHaveLength(t.completionIds.length);
      expect(row.reward).toBe(t.reward);
      expect(row.engine).toBe(t.engine);
      expect(row.group_id).toBe(t.groupId);
      expect(row.metadata).toMatchObject({ builder: 'prefix-merge', completion_ids: t.completionIds, proof_ok: true });
    }
    const s1 = rows.find((r) => r.session_id === ids.s1)!;
    expect(s1).toMatchObject({ task_id: 'arith', batch_id: 'b2', group_id: 'b2:arith', engine: 'sim-sglang', reward: 0.5, sample_index: null });
    expect(s1.metadata).toMatchObject({ reward_source: 'session', session_status: 'finished' });
    const v2 = rows.find((r) => r.session_id === ids.v2)!;
    expect(v2).toMatchObject({ batch_id: 'b1', group_id: 'b1:arith', sample_index: 1, reward: 0 });
    expect(rows.find((r) => r.session_id === ids.s2)).toMatchObject({ reward: null, batch_id: null, group_id: null });
    expect(rows.every((r) => !('messages' in r))).toBe(true);
  });

  it('filters by batch, engine, reward range and builder', async () => {
    const sessionsOf = (rows: any[]) => [...new Set(rows.map((r) => r.session_id))].sort();
    expect(sessionsOf((await exportRows('?batch=b1')).rows)).toEqual([ids.v1, ids.v2].sort());
    expect(sessionsOf((await exportRows('?engine=sim-sglang&status=all')).rows)).toEqual([ids.s1, ids.s2].sort());
    expect(sessionsOf((await exportRows('?batch=b1&engine=sim-sglang')).rows)).toEqual([]);
    expect(sessionsOf((await exportRows('?minReward=0.5')).rows)).toEqual([ids.v1, ids.s1].sort());
    expect(sessionsOf((await exportRows('?maxReward=0.5')).rows)).toEqual([ids.v2, ids.s1].sort());
    expect(sessionsOf((await exportRows('?minReward=0.2&maxReward=0.7')).rows)).toEqual([ids.s1]);
    const unknown = await exportRows('?batch=nope');
    expect(unknown.res.status).toBe(404);
    expect((await exportRows('?status=all')).rows.some((r) => r.session_id === ids.s2)).toBe(true);
    expect((await exportRows('')).rows.some((r) => r.session_id === ids.s2)).toBe(false);
    const perRequest = await exportRows('?builder=per-request&batch=b2');
    const recs = (await app.store.completions.listBySession(ids.s1)).filter((c) => c.status === 'ok');
    expect(perRequest.rows.map((r) => r.metadata.completion_ids[0])).toEqual(recs.map((c) => c.id));
    expect(perRequest.res.headers.get('content-disposition')).toContain('rollgate-b2-train-per-request.jsonl');
    for (const [i, r] of perRequest.rows.entries()) {
      expect(r.prompt_ids).toEqual(Array.from(recs[i].promptIds));
      expect(r.response_ids).toEqual(Array.from(recs[i].outputIds));
      expect(r.loss_mask.every((m: number) => m === 1)).toBe(true);
    }
  });

  it('adds the canonical conversation with messages=1', async () => {
    const { rows } = await exportRows(`?session=${ids.s1}&messages=1`);
    expect(rows).toHaveLength(1);
    const roles = rows[0].messages.map((m: { role: string }) => m.role);
    expect(roles[0]).toBe('system');
    expect(roles.at(-1)).toBe('assistant');
    expect(roles).toContain('tool');
  });

  it('answers 400 for bad parameters', async () => {
    for (const q of ['?format=csv', '?builder=x', '?minReward=abc', '?minReward=1&maxReward=0']) {
      const res = await fetch(`${app.url}/api/export${q}`);
      expect(res.status, q).toBe(400);
      expect((await res.json()).error.type).toBe('invalid_request_error');
    }
  });
});

describe('GET /api/export, SFT format', () => {
  it('one messages row per trace, for chat mode (vLLM) and token mode (SGLang) alike', async () => {
    const { res, rows } = await exportRows('?format=sft&status=all');
    expect(res.headers.get('content-disposition')).toContain('rollgate-all-sft-prefix-merge.jsonl');
    const traces = (await Promise.all([ids.v1, ids.v2, ids.s1, ids.s2].map((id) => apiTraces(id)))).flat();
    // One row per conversation: chat-mode chains that broke while the conversation went on are folded
    // into the row of the longest conversation (every session here is one conversation).
    expect(rows.map((r) => r.session_id).sort()).toEqual([ids.v1, ids.v2, ids.s1, ids.s2].sort());
    expect(rows.some((r) => r.metadata.folded_trace_ids?.length > 0)).toBe(true);
    for (const row of rows) {
      const own = traces.filter((t) => t.sessionId === row.session_id).map((t) => t.id);
      expect([row.trace_id, ...(row.metadata.folded_trace_ids ?? [])].sort()).toEqual(own.sort());
    }
    for (const row of rows) {
      expect(Object.keys(row).sort()).toEqual(['batch_id', 'finish_reason', 'is_final', 'messages', 'metadata', 'model', 'num_traces', 'reward', 'sampling', 'session_id',
        'task_id', 'tokenizer', 'tools', 'trace_id', 'truncated', 'turns']);
      const t = traces.find((x) => x.id === row.trace_id)!;
      const last = (await app.store.completions.get(t.completionIds.at(-1)!))!;
      const msgs = row.messages as Array<{ role: string; content: unknown; tool_calls?: unknown[]; reasoning?: string }>;
      expect(msgs[0]).toEqual({ role: 'system', content: 'You are a careful assistant. Use tools.' });
      const final = msgs.at(-1)!;
      expect(final.role).toBe('assistant');
      expect(final.content).toBe(last.response!.message.content);
      expect(row.tools[0].function.name).toBe('calculator');
      expect(row.reward).toBe(t.reward);
    }
    // Token mode: the conversation comes from the agent's request (the engine got ids, not messages).
    const s1 = rows.find((r) => r.session_id === ids.s1)!;
    const lastS1 = (await app.store.completions.listBySession(ids.s1)).at(-1)!;
    expect((lastS1.requestServed as { messages?: unknown }).messages).toBeUndefined();
    expect(s1.messages.filter((m: { role: string }) => m.role === 'user').map((m: { content: string }) => m.content))
      .toEqual(['What is 17*23? Use the calculator.', 'Now what is 12+30? Use the calculator.']);
    expect(s1.messages.filter((m: { role: string }) => m.role === 'tool').map((m: { content: string }) => m.content)).toEqual(['391', '42']);
    expect(s1.messages.at(-1).content).toContain('42');
  });
});

describe('SFT from another dialect in token mode', () => {
  it('recovers canonical messages from an Anthropic request served as ids', async () => {
    const session = await app.createSession({ engine: 'sim-sglang' });
    const client = new Anthropic({ baseURL: session.urls.anthropic, apiKey: session.key, maxRetries: 0 });
    const msg = await client.messages.create({
      model: 'Qwen/Qwen3-8B', max_tokens: 512, system: 'Be brief.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is 2+2?' }] }],
    });
    const { rows } = await exportRows(`?session=${session.id}&format=sft&status=all`);
    expect(rows).toHaveLength(1);
    const msgs = rows[0].messages as Array<{ role: string; content: unknown }>;
    expect(msgs[0]).toMatchObject({ role: 'system' });
    expect(JSON.stringify(msgs[0].content)).toContain('Be brief.');
    expect(msgs[1].role).toBe('user');
    expect(JSON.stringify(msgs[1].content)).toContain('What is 2+2?');
    const text = msg.content.filter((b) => b.type === 'text').map((b) => (b as { text: string }).text).join('');
    expect(msgs[2]).toMatchObject({ role: 'assistant', content: text });
  });
});

describe('SFT folding (pure)', () => {
  const sys: ChatMessage = { role: 'system', content: 'S' };
  const u1: ChatMessage = { role: 'user', content: 'q1' };
  const a1: ChatMessage = { role: 'assistant', content: '\n\n', reasoning: 'r', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"b":2, "a":1}' } }] };
  const a1echo: ChatMessage = { role: 'assistant', content: [{ type: 'text', text: '' }], tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1,"b":2}' } }] };
  const t1: ChatMessage = { role: 'tool', tool_call_id: 'c1', content: '3' };
  const a2: ChatMessage = { role: 'assistant', content: 'done' };
  const a2b: ChatMessage = { role: 'assistant', content: 'other' };

  it('compares messages without reasoning, whitespace or JSON key order', () => {
    expect(messageKey(a1)).toBe(messageKey(a1echo));
    expect(messageKey(a2)).not.toBe(messageKey(a2b));
  });

  it('folds a conversation into a longer one that continues it, keeps siblings and different rewards apart', () => {
    const out = foldConversations([
      { id: 'A', reward: 1, messages: [sys, u1, a1] },
      { id: 'B', reward: 1, messages: [sys, u1, a1echo, t1, a2] },
      { id: 'C', reward: 1, messages: [sys, u1, a1echo, t1, a2b] },
      { id: 'D', reward: 0, messages: [sys, u1, a1] },
    ]);
    expect(out.map((o) => [o.item.id, o.folded])).toEqual([['B', ['A']], ['C', []], ['D', []]]);
  });
});

// ---- streaming ----

function session(id: string, batchId: string | null): NewSession {
  return {
    id, key: randomBytes(16).toString('hex'), engineId: 'sim-vllm', harness: null, taskId: 't', batchId,
    metadata: {}, status: 'finished', reward: 1, createdAt: Date.now(), finishedAt: Date.now(),
  };
}

function completion(sessionId: string, seq: number, promptLen: number, outLen: number): CompletionRecord {
  const promptIds = new Int32Array(promptLen).map((_, i) => 1000 + ((i * 7919) % 90000));
  const outputIds = new Int32Array(outLen).map((_, i) => 2000 + ((i * 104729) % 90000));
  return {
    id: `${sessionId}-c${seq}`, sessionId, seq, dialect: 'openai-chat', engineId: 'sim-vllm', replica: 'http://127.0.0.1:1',
    policyVersion: 0, requestReceived: { model: 'm', messages: [{ role: 'user', content: 'hi' }] }, requestServed: null,
    response: null, finishReason: 'stop', usage: null, timings: { queueMs: 0, ttftMs: 1, totalMs: 2 }, status: 'ok', error: null,
    retryOf: null, createdAt: Date.now(), promptIds, outputIds, outputLogprobs: new Float32Array(outLen).fill(-0.123),
  };
}

describe('the export streams', () => {
  it('exportLines pulls one session at a time: the first row leaves before the second session is read', async () => {
    const sessions = new Map<string, NewSession>();
    const all: CompletionRecord[] = [];
    for (let s = 0; s < 50; s++) {
      const id = `ses_${String(s).padStart(3, '0')}`;
      sessions.set(id, session(id, null));
      for (let k = 0; k < 3; k++) all.push(completion(id, k, 40, 5));
    }
    let read = 0;
    let sessionLookups = 0;
    const source: ExportSource = {
      sessions: { get: async (id) => { sessionLookups++; return sessions.get(id) ?? null; } },
      completions: {
        async *iterateAll(_filter?: CompletionIterateFilter) {
          for (const r of all) {
            read++;
            yield r;
          }
        },
      },
    };
    const progress = newProgress();
    const gen = exportLines(source, { builder: 'per-request' }, progress);
    const first = await gen.next();
    expect(first.done).toBe(false);
    expect(JSON.parse(first.value as string).session_id).toBe('ses_000');
    // Session 0's three records plus one look-ahead record of session 1; nothing more.
    expect(read).toBe(4);
    expect(sessionLookups).toBe(1);
    let rows = 1;
    for await (const _ of gen) rows++;
    expect(rows).toBe(150);
    expect(read).toBe(150);
    expect(progress).toMatchObject({ sessions: 50, completions: 150, traces: 150, rows: 150 });
  });

  it('over HTTP: the first bytes arrive before the last session is read, and a slow reader stops the reader (backpressure)', async () => {
    const N = 400;
    for (let s = 0; s < N; s++) {
      const id = `ses_big_${String(s).padStart(4, '0')}`;
      await app.store.writer.putSession(session(id, 'big'));
      void app.store.writer.putCompletion(completion(id, 0, 8000, 2000));
    }
    await app.store.writer.flush();
    const original = app.store.completions.iterateAll.bind(app.store.completions);
    let read = 0;
    let done = false;
    app.store.completions.iterateAll = async function* spy(filter?: CompletionIterateFilter) {
      for await (const r of original(filter)) {
        read++;
        yield r;
      }
      done = true;
    } as typeof app.store.completions.iterateAll;
    try {
      const res = await fetch(`${app.url}/api/export?batch=big&builder=per-request`);
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      const first = await reader.read();
      expect(first.done).toBe(false);
      const readAtFirstChunk = read;
      expect(readAtFirstChunk).toBeLessThan(N);
      // Stop reading for a while: the server must stop reading SQLite once the socket buffers are full.
      await new Promise((r) => setTimeout(r, 300));
      const readWhilePaused = read;
      expect(done).toBe(false);
      expect(readWhilePaused).toBeLessThan(N);
      let text = new TextDecoder().decode(first.value);
      const decoder = new TextDecoder();
      let bytes = first.value!.length;
      for (;;) {
        const { done: end, value } = await reader.read();
        if (end) break;
        bytes += value.length;
        text += decoder.decode(value, { stream: true });
      }
      const lines = text.split('\n').filter(Boolean);
      expect(lines).toHaveLength(N);
      expect(read).toBe(N);
      expect(done).toBe(true);
      expect(bytes).toBeGreaterThan(30e6);
      const row = JSON.parse(lines[N - 1]);
      expect(row.prompt_ids).toHaveLength(8000);
      expect(row.response_ids).toHaveLength(2000);
      console.log(`export stream: ${N} rows, ${(bytes / 1e6).toFixed(1)} MB; rows read at first chunk ${readAtFirstChunk}, after a 300 ms pause ${readWhilePaused}`);
    } finally {
      app.store.completions.iterateAll = original;
    }
  });

  it('a client that goes away stops the export and releases the SQLite reader', async () => {
    const original = app.store.completions.iterateAll.bind(app.store.completions);
    let closed = false;
    let read = 0;
    app.store.completions.iterateAll = async function* spy(filter?: CompletionIterateFilter) {
      try {
        for await (const r of original(filter)) {
          read++;
          yield r;
        }
      } finally {
        closed = true;
      }
    } as typeof app.store.completions.iterateAll;
    try {
      const controller = new AbortController();
      const res = await fetch(`${app.url}/api/export?batch=big&builder=per-request`, { signal: controller.signal });
      const reader = res.body!.getReader();
      await reader.read();
      controller.abort();
      for (let i = 0; i < 100 && !closed; i++) await new Promise((r) => setTimeout(r, 20));
      expect(closed).toBe(true);
      expect(read).toBeLessThan(400);
    } finally {
      app.store.completions.iterateAll = original;
    }
  });
});
