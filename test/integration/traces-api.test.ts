// GET /api/sessions/:id/traces on sessions driven through the gateway with the openai SDK (issue 4).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTokenizer, type ChatTokenizer } from '../../src-main/engines/tokenizer/index.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { agentTurn, calculator, checkTraces, startAgent, toolSession, type CompletionJson, type TraceJson } from './traces-agent.js';

let app: TestApp;
let tok: ChatTokenizer;
beforeAll(async () => {
  app = await startTestApp({ simSkill: 1 });
  tok = await loadTokenizer();
});
afterAll(async () => { await app?.stop(); });

interface TracesBody { sessionId: string; builder: string; traces: TraceJson[]; unplaced: Array<{ completionId: string; reason: string }>; stats: { inputTokens: number; tokenOps: number } }

const traces = (id: string, builder = 'prefix-merge') => app.api<TracesBody>(`/api/sessions/${id}/traces?builder=${builder}`);
const completions = async (id: string) => (await app.api<{ completions: CompletionJson[] }>(`/api/sessions/${id}/completions`)).completions;

/** Positions of `needle` as a contiguous run inside `hay`. */
function indexOfRun(hay: number[], needle: number[], from = 0): number {
  outer: for (let i = from; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

describe('traces of a multi-turn tool session on sim-sglang (token mode)', () => {
  for (const stream of [false, true]) {
    it(`merges every turn into one trace: mask 0 on tool results and user turns, mask 1 + real logprobs on sampled ids (${stream ? 'streaming' : 'non-streaming'})`, async () => {
      const run = await toolSession(app, 'sim-sglang', { reward: 0.75, stream });
      const recs = await completions(run.sessionId);
      expect(recs.length).toBeGreaterThanOrEqual(4);
      const body = await traces(run.sessionId);
      expect(body.builder).toBe('prefix-merge');
      expect(body.traces).toHaveLength(1);
      expect(body.unplaced).toEqual([]);
      const [t] = body.traces;
      expect(t.completionIds).toEqual(recs.map((c) => c.id));
      expect(t.breaks).toEqual([]);
      expect(t.origin.kind).toBe('root');
      expect(t.reward).toBe(0.75);
      expect(t.rewardSource).toBe('session');
      expect(t.engine).toBe('sim-sglang');
      // The trace is the last turn's prompt + its sampled ids, with the first turn's prompt as prompt.
      const last = recs[recs.length - 1];
      expect(t.promptIds).toEqual(recs[0].promptIds);
      expect([...t.promptIds, ...t.responseIds]).toEqual([...last.promptIds, ...last.outputIds]);
      checkTraces(body.traces, recs);

      // Tool results and the follow-up user turn sit in mask-0 stretches; sampled ids have real (negative) logprobs.
      const P = t.promptIds.length;
      const full = [...t.promptIds, ...t.responseIds];
      for (const text of ['<tool_response>\n391\n</tool_response>', 'Now what is 12+30? Use the calculator.', '<tool_response>\n42\n</tool_response>']) {
        const ids = tok.encode(text);
        const at = indexOfRun(full, ids, P);
        expect(at, text).toBeGreaterThan(P);
        for (let i = at; i < at + ids.length; i++) {
          expect(t.lossMask[i - P]).toBe(0);
          expect(t.responseLogprobs[i - P]).toBe(0);
        }
      }
      const sampled = t.lossMask.reduce((a, m) => a + m, 0);
      expect(sampled).toBe(recs.reduce((a, c) => a + c.outputIds.length, 0));
      for (let i = 0; i < t.lossMask.length; i++) if (t.lossMask[i] === 1) expect(t.responseLogprobs[i]).toBeLessThan(0);
      expect(t.lossMask.includes(0)).toBe(true);
    });
  }

  it('per-request builder: one trace per completion, all mask 1', async () => {
    const run = await toolSession(app, 'sim-sglang');
    const recs = await completions(run.sessionId);
    const body = await traces(run.sessionId, 'per-request');
    expect(body.traces.map((t) => t.completionIds[0])).toEqual(recs.map((c) => c.id));
    for (const [i, t] of body.traces.entries()) {
      expect(t.promptIds).toEqual(recs[i].promptIds);
      expect(t.responseIds).toEqual(recs[i].outputIds);
      expect(t.lossMask.every((m) => m === 1)).toBe(true);
      expect(t.reward).toBeNull();
      expect(t.rewardSource).toBeNull();
    }
    checkTraces(body.traces, recs);
  });
});

describe('traces of a multi-turn tool session on sim-vllm (chat mode)', () => {
  it('keeps every sampled token in exactly one trace and records why chains break', async () => {
    const run = await toolSession(app, 'sim-vllm', { reward: 1 });
    const recs = await completions(run.sessionId);
    const body = await traces(run.sessionId);
    checkTraces(body.traces, recs);
    expect(body.traces.every((t) => t.reward === 1 && t.engine === 'sim-vllm')).toBe(true);
    // Chat mode re-renders history through the template; wherever the next prompt does not extend the
    // previous prompt + sampled ids, the trace ends with a recorded reason and token index.
    const all = body.traces.flatMap((t) => t.completionIds);
    expect(all.sort()).toEqual(recs.map((c) => c.id).sort());
    for (const t of body.traces) {
      for (const b of t.breaks) {
        expect(['prompt-diverged', 'rewritten-history', 'compaction']).toContain(b.reason);
        expect(recs.some((c) => c.id === b.atCompletionId)).toBe(true);
        expect(typeof b.tokenIndex).toBe('number');
      }
    }
    if (body.traces.length > 1) expect(body.traces.some((t) => t.breaks.length > 0)).toBe(true);
  });
});

describe('siblings, aborts, rewards, groups', () => {
  it('a parallel sibling (the same prompt twice at once) becomes a separate trace', async () => {
    const run = await startAgent(app, 'sim-sglang');
    await agentTurn(run, 'What is 17*23? Use the calculator.');
    run.messages.push({ role: 'user', content: 'Now what is 12+30? Use the calculator.' });
    const ask = () => run.client.chat.completions.create({ model: 'Qwen/Qwen3-8B', messages: run.messages, tools: [calculator] });
    const [a, b] = await Promise.all([ask(), ask()]);
    expect(a.choices[0]!.message.tool_calls?.length).toBe(1);
    expect(b.choices[0]!.message.tool_calls?.length).toBe(1);
    const recs = await completions(run.sessionId);
    const [x, y] = recs.slice(-2);
    expect(x.promptIds).toEqual(y.promptIds);
    const body = await traces(run.sessionId);
    checkTraces(body.traces, recs);
    expect(body.traces).toHaveLength(2);
    const holding = (id: string) => body.traces.find((t) => t.completionIds.includes(id))!;
    expect(holding(x.id).id).not.toBe(holding(y.id).id);
    const branch = body.traces.find((t) => t.origin.kind === 'branch')!;
    expect(branch.origin.fromTraceId).toBe(body.traces.find((t) => t !== branch)!.id);
    // The earlier turns live in the main trace only (mask 1 once), the branch starts after them.
    expect(branch.completionIds).toHaveLength(1);
  });

  it('an aborted completion never appears with mask 1', async () => {
    const run = await startAgent(app, 'sim-sglang');
    await agentTurn(run, 'What is 17*23? Use the calculator.');
    run.messages.push({ role: 'user', content: 'Now what is 12+30? Use the calculator.' });
    const controller = new AbortController();
    const stream = await run.client.chat.completions.create(
      { model: 'Qwen/Qwen3-8B', messages: run.messages, tools: [calculator], stream: true }, { signal: controller.signal });
    let chunks = 0;
    try {
      for await (const _ of stream) if (++chunks === 2) controller.abort();
    } catch { /* the SDK may end the stream quietly or throw an abort error */ }
    expect(chunks).toBeGreaterThanOrEqual(2);
    let recs: CompletionJson[] = [];
    for (let i = 0; i < 100; i++) {
      recs = await completions(run.sessionId);
      if (recs.some((c) => c.status === 'aborted')) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const aborted = recs.find((c) => c.status === 'aborted')!;
    expect(aborted).toBeTruthy();
    for (const builder of ['prefix-merge', 'per-request']) {
      const body = await traces(run.sessionId, builder);
      checkTraces(body.traces, recs);
      for (const t of body.traces) {
        expect(t.proof.turns.some((turn) => turn.completionId === aborted.id)).toBe(false);
        expect(t.completionIds).not.toContain(aborted.id);
      }
      const listed = body.unplaced.some((u) => u.completionId === aborted.id && u.reason === 'aborted')
        || body.traces.some((t) => t.skipped.some((s) => s.completionId === aborted.id) || t.breaks.some((b) => b.atCompletionId === aborted.id && b.reason === 'aborted'));
      expect(listed).toBe(true);
    }
  });

  it('per-trace rewards from session.metadata.traceRewards, group ids from batch + task, sample index', async () => {
    const run = await startAgent(app, 'sim-sglang', { taskId: 'task-7', metadata: { sampleIndex: 3 } });
    await agentTurn(run, 'What is 17*23? Use the calculator.');
    const first = await completions(run.sessionId);
    // A sibling branch so there are two traces.
    await run.client.chat.completions.create({ model: 'Qwen/Qwen3-8B', messages: run.messages.slice(0, 2), tools: [calculator] });
    const recs = await completions(run.sessionId);
    const extra = recs[recs.length - 1];
    await app.store.writer.updateSession(run.sessionId, {
      batchId: 'batch-A', reward: 0.25, status: 'finished', metadata: { sampleIndex: 3, traceRewards: { [extra.id]: 1 } },
    });
    const body = await traces(run.sessionId);
    expect(body.traces).toHaveLength(2);
    const withExtra = body.traces.find((t) => t.completionIds.includes(extra.id))!;
    const other = body.traces.find((t) => t !== withExtra)!;
    expect(withExtra).toMatchObject({ reward: 1, rewardSource: 'trace' });
    expect(other).toMatchObject({ reward: 0.25, rewardSource: 'session' });
    expect(other.completionIds).toContain(first[0].id);
    for (const t of body.traces) expect(t).toMatchObject({ groupId: 'batch-A:task-7', batchId: 'batch-A', taskId: 'task-7', sampleIndex: 3 });
    // Trace-id keys win over completion-id keys.
    await app.store.writer.updateSession(run.sessionId, { metadata: { traceRewards: { [other.id]: -1, [first[0].id]: 5 } } });
    const again = await traces(run.sessionId);
    expect(again.traces.find((t) => t.id === other.id)!.reward).toBe(-1);
  });

  it('POST /api/sessions/:id/finish takes per-trace rewards keyed by the response id the agent saw, or by trace id', async () => {
    const run = await startAgent(app, 'sim-sglang');
    await agentTurn(run, 'What is 17*23? Use the calculator.');
    const sibling = await run.client.chat.completions.create({ model: 'Qwen/Qwen3-8B', messages: run.messages.slice(0, 2), tools: [calculator] });
    expect(sibling.id).toMatch(/^chatcmpl-[0-9a-f]{24}$/);
    const finish = (body: unknown) => fetch(`${app.url}/api/sessions/${run.sessionId}/finish`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await finish({ reward: 0.5, traceRewards: { [sibling.id]: 1 } })).status).toBe(200);
    const body = await traces(run.sessionId);
    expect(body.traces).toHaveLength(2);
    const siblingTrace = body.traces.find((t) => t.completionIds.includes(sibling.id.slice('chatcmpl-'.length)))!;
    const main = body.traces.find((t) => t !== siblingTrace)!;
    expect(siblingTrace).toMatchObject({ reward: 1, rewardSource: 'trace' });
    expect(main).toMatchObject({ reward: 0.5, rewardSource: 'session' });
    // A second finish is refused unless it says overwrite; then it adds to the map, and trace-id keys work too.
    const refused = await finish({ traceRewards: { [main.id]: 0 } });
    expect(refused.status).toBe(409);
    expect((await refused.json()).error.message).toMatch(/already finished .*overwrite/);
    expect((await finish({ traceRewards: { [main.id]: 0 }, overwrite: true })).status).toBe(200);
    const again = await traces(run.sessionId);
    expect(again.traces.map((t) => [t.reward, t.rewardSource])).toEqual(expect.arrayContaining([[1, 'trace'], [0, 'trace']]));
    const bad = await finish({ traceRewards: { x: 'high' } });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.message).toMatch(/traceRewards\.x/);
  });

  it('answers 404 for an unknown session and 400 for an unknown builder', async () => {
    const r404 = await fetch(`${app.url}/api/sessions/ses_nope/traces`);
    expect(r404.status).toBe(404);
    const run = await startAgent(app, 'sim-vllm');
    const r400 = await fetch(`${app.url}/api/sessions/${run.sessionId}/traces?builder=magic`);
    expect(r400.status).toBe(400);
    expect((await r400.json()).error.message).toMatch(/builder/);
    const empty = await traces(run.sessionId);
    expect(empty.traces).toEqual([]);
  });
});

