// Custody when the incomplete call is the last turn (issue 14 review): a call that went on from a trace's tip
// and was lost (or came back malformed) leaves that trace cut short; exported with the outcome reward it would
// teach the policy a truncated episode. A lost call without ids cannot be placed, so it masks the whole session.
import { describe, expect, it } from 'vitest';
import { applyCustody, type CustodyInput } from '../../src-main/core/trajectory/custody.js';
import { buildSessionTraces, type SessionInfo } from '../../src-main/core/export/session-traces.js';
import type { CompletionRecord, IncompleteReason } from '../../src-main/core/types.js';

let seq = 0;
function rec(id: string, prompt: number[], output: number[], incomplete?: IncompleteReason): CompletionRecord {
  return {
    id, sessionId: 's', seq: seq++, dialect: 'openai-chat', engineId: 'e', replica: 'r', policyVersion: 0, requestReceived: null, requestServed: null,
    response: null, finishReason: 'stop', usage: null, timings: { queueMs: 0, ttftMs: null, totalMs: 1 },
    status: incomplete ? 'incomplete' : 'ok', error: incomplete ?? null, retryOf: null, ...(incomplete ? { incompleteReason: incomplete } : {}),
    createdAt: seq, promptIds: Int32Array.from(prompt), outputIds: Int32Array.from(output), outputLogprobs: Float32Array.from(output, () => -0.5),
  };
}
const range = (a: number, n: number) => Array.from({ length: n }, (_, i) => a + i);
const SYS = range(1, 20);
const title = rec('title', range(900, 10), [901]);
const m1 = rec('m1', [...SYS, ...range(100, 5)], [7, 8]);
const m2 = rec('m2', [...SYS, ...range(100, 5), 7, 8, 60, 61], [12, 13]);
const session: SessionInfo = { id: 's', engineId: 'e', harness: 'builtin', taskId: 't', batchId: 'b', metadata: {}, status: 'finished', reward: 1 };

const masks = (records: CompletionRecord[]) => Object.fromEntries(buildSessionTraces('prefix-merge', session, records).traces
  .map((st) => [st.trace.completionIds.join('+'), { masked: st.trace.masked, reason: st.trace.maskReason, by: st.trace.maskedBy }]));

describe('custody of a trace whose continuation was lost', () => {
  it('a malformed last turn that extends the main chain\'s tip masks that chain; an unrelated trace keeps its data', () => {
    const m3 = rec('m3', [...SYS, ...range(100, 5), 7, 8, 60, 61, 12, 13, 70], [99], 'logprob-count');
    // The builder may place it in no trace at all (no usable output): the tip rule must still catch it.
    const traces = buildSessionTraces('prefix-merge', session, [title, m1, m2]).traces.map((st) => st.trace);
    applyCustody(traces, [title, m1, m2, m3]);
    const got = Object.fromEntries(traces.map((t) => [t.completionIds.join('+'), { masked: t.masked, reason: t.maskReason, by: t.maskedBy }]));
    expect(got['m1+m2']).toEqual({ masked: true, reason: 'logprob-count', by: 'm3' });
    expect(got.title).toEqual({ masked: false, reason: null, by: null });
  });

  it('a lost call without ids after the last turn masks every trace of the session', () => {
    const lost = rec('lost', [], [], 'lost-in-crash');
    const got = masks([title, m1, m2, lost]);
    expect(Object.keys(got).length).toBeGreaterThan(1);
    for (const t of Object.values(got)) expect(t).toEqual({ masked: true, reason: 'lost-in-crash', by: 'lost' });
  });

  it('without incomplete calls nothing is masked', () => {
    const traces = buildSessionTraces('prefix-merge', session, [title, m1, m2]).traces.map((st) => st.trace);
    applyCustody(traces, [title, m1, m2] satisfies CustodyInput[]);
    expect(traces.every((t) => t.masked === false)).toBe(true);
  });
});
