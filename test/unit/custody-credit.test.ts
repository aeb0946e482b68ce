// Reward attribution (issue 14): a session with a title call, two sub-agent chains and the main agent's final
// answer. The declared final response (or, without one, the main chain) earns the outcome reward; the credit
// policy says what the others get; each export row records the policy and its source.
import { describe, expect, it } from 'vitest';
import { toTrainRow } from '../../src-main/core/export/rows.js';
import { buildSessionTraces, type SessionInfo } from '../../src-main/core/export/session-traces.js';
import type { CompletionRecord } from '../../src-main/core/types.js';

let seq = 0;
function rec(id: string, prompt: number[], output: number[]): CompletionRecord {
  return {
    id, sessionId: 's', seq: seq++, dialect: 'openai-chat', engineId: 'e', replica: 'r', policyVersion: 0, requestReceived: null, requestServed: null,
    response: null, finishReason: 'stop', usage: null, timings: { queueMs: 0, ttftMs: null, totalMs: 1 }, status: 'ok', error: null, retryOf: null,
    createdAt: seq, promptIds: Int32Array.from(prompt), outputIds: Int32Array.from(output), outputLogprobs: Float32Array.from(output, () => -0.5),
  };
}
const range = (a: number, n: number) => Array.from({ length: n }, (_, i) => a + i);

// title call (its own prompt), main turn 1, sub-agent A (2 turns), sub-agent B (1 turn), main turn 2 = final answer
const SYS = range(1, 20);
const title = rec('title', range(900, 10), [901]);
const m1 = rec('m1', [...SYS, ...range(100, 5)], [7, 8]);
const a1 = rec('a1', [...SYS, ...range(300, 5)], [9]);
const a2 = rec('a2', [...SYS, ...range(300, 5), 9, 50, 51], [10]);
const b1 = rec('b1', [...SYS, ...range(400, 6)], [11]);
const m2 = rec('m2', [...SYS, ...range(100, 5), 7, 8, 60, 61], [12, 13]);
const records = [title, m1, a1, a2, b1, m2];

const session = (metadata: Record<string, unknown>): SessionInfo => ({
  id: 's', engineId: 'e', harness: 'builtin', taskId: 't', batchId: 'b', metadata, status: 'finished', reward: 1,
});
const rewards = (metadata: Record<string, unknown>) => {
  const built = buildSessionTraces('prefix-merge', session(metadata), records);
  return Object.fromEntries(built.traces.map((st) => [st.trace.completionIds.join('+'), { reward: st.trace.reward, row: toTrainRow(st.trace, st.context) }]));
};

describe('reward attribution', () => {
  it('the final answer\'s trace earns the reward under each credit policy', () => {
    const traces = ['title', 'm1+m2', 'a1+a2', 'b1'];
    const final = rewards({ credit: 'final', finalResponseId: 'm2' });
    expect(Object.keys(final).sort()).toEqual([...traces].sort());
    expect(Object.fromEntries(traces.map((t) => [t, final[t]!.reward]))).toEqual({ title: null, 'm1+m2': 1, 'a1+a2': null, b1: null });
    expect(final['m1+m2']!.row.credit).toEqual({ policy: 'final', source: 'final-response', earner: true });
    expect(final.b1!.row.credit).toEqual({ policy: 'final', source: 'final-response', earner: false });

    const broadcast = rewards({ credit: 'broadcast', finalResponseId: 'm2' });
    expect(traces.map((t) => broadcast[t]!.reward)).toEqual([1, 1, 1, 1]);
    expect(broadcast['m1+m2']!.row.credit).toEqual({ policy: 'broadcast', source: 'final-response', earner: true });

    const split = rewards({ credit: 'split', finalResponseId: 'm2' });
    expect(traces.map((t) => split[t]!.reward)).toEqual([0.25, 0.25, 0.25, 0.25]);
  });

  it('without a declared final response the main chain (last completion, not a branch) earns it', () => {
    const r = rewards({ credit: 'final' });
    expect(r['m1+m2']).toMatchObject({ reward: 1, row: { credit: { policy: 'final', source: 'main-chain', earner: true } } });
    expect(r.title!.reward).toBeNull();
  });

  it('a declared final response that is in no trace masks the session\'s traces as unattributed', () => {
    const r = rewards({ credit: 'final', finalResponseId: 'nope' });
    for (const t of Object.values(r)) expect(t.row).toMatchObject({ reward: null, masked: true, mask_reason: 'unattributed', credit: { source: 'unattributed', earner: false } });
  });

  it('per-trace rewards still win, and the default policy is broadcast', () => {
    const r = rewards({ traceRewards: { b1: 0.5 } });
    expect(r.b1!.reward).toBe(0.5);
    expect(r.title!.reward).toBe(1);
    expect(r.title!.row.credit).toMatchObject({ policy: 'broadcast', source: 'main-chain' });
  });
});
