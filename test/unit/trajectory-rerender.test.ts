// Chat-mode re-renders (core/trajectory/rerender.ts): a prompt that re-renders the previous output with
// only whitespace changed continues the trace; the spans are recorded and the proof checks them.
import { describe, expect, it } from 'vitest';
import { buildPrefixMerge, verifyTrace, type Trace, type TrajectoryInput } from '../../src-main/core/trajectory/index.js';
import { alignRerender } from '../../src-main/core/trajectory/rerender.js';
import { EOS, rec, tip } from './trajectory-fixtures.js';

// A tiny vocabulary: 50 "a", 51 "\n\n", 52 "\n\n\n", 53 "<tool_call>", 54 "X", 55 '{"k":', 56 '{"k"', 57 ': '
const TEXT: Record<number, string> = { 50: 'a', 51: '\n\n', 52: '\n\n\n', 53: '<tool_call>', 54: 'X', 55: '{"k":', 56: '{"k"', 57: ': ', [EOS]: '<eos>' };
const tokenText = (id: number) => TEXT[id] ?? `<${id}>`;
const byId = (rs: TrajectoryInput[]) => new Map(rs.map((r) => [r.id, r]));
const full = (t: Trace) => [...t.promptIds, ...t.responseIds];

const SYS = [10, 11, 12];
const a = rec('a', 0, SYS, [50, 51, 53, EOS]);
// b's prompt holds a's output re-rendered with one more newline (52 for 51), then a tool result
const b = rec('b', 1, [...SYS, 50, 52, 53, EOS, 20, 21], [54, 55, EOS]);
// c extends b's prompt + output exactly (the re-render of a's turn is in it too), then re-renders b's JSON spacing
const c = rec('c', 2, [...SYS, 50, 52, 53, EOS, 20, 21, 54, 56, 57, EOS, 22], [50, EOS]);

describe('alignRerender', () => {
  it('finds whitespace-only spans and where the sampled output ends in the served prompt', () => {
    expect(alignRerender(a.outputIds, 1, b.promptIds, 4, tokenText)).toEqual({ spans: [{ sampledFrom: 1, sampledTo: 2, servedFrom: 4, servedTo: 5 }], servedEnd: 7 });
    expect(alignRerender([55, EOS], 0, [56, 57, EOS, 9], 0, tokenText)).toEqual({ spans: [{ sampledFrom: 0, sampledTo: 1, servedFrom: 0, servedTo: 2 }], servedEnd: 3 });
  });

  it('refuses a difference in text', () => {
    expect(alignRerender([50, 51, 53], 1, [50, 54, 53], 1, tokenText)).toBeNull();
    expect(alignRerender([50, 51, 53], 1, [50, 52, 54], 1, tokenText)).toBeNull();
  });
});

describe('prefix-merge across chat-mode re-renders', () => {
  it('keeps the sampled ids, records each re-rendered span, and the proof checks every turn against its engine prompt', () => {
    const { traces } = buildPrefixMerge([a, b, c], { tokenText });
    expect(traces).toHaveLength(1);
    const t = traces[0];
    expect(t.completionIds).toEqual(['a', 'b', 'c']);
    expect(t.breaks).toEqual([]);
    expect(full(t)).toEqual([...SYS, 50, 51, 53, EOS, 20, 21, 54, 55, EOS, 22, 50, EOS]);
    expect(t.lossMask).toEqual([1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 1, 1]);
    expect(t.rerendered).toEqual([
      { at: 4, sampled: [51], served: [52], completionId: 'a', servedIn: 'b' },
      { at: 10, sampled: [55], served: [56, 57], completionId: 'b', servedIn: 'c' },
    ]);
    expect(t.proof.turns.map((x) => [x.promptLength, x.rerendered, x.outputStart])).toEqual([[3, undefined, undefined], [9, 1, 9], [14, 2, 13]]);
    expect(verifyTrace(t, byId([a, b, c]), tokenText)).toEqual({ ok: true });
  });

  it('splits with prompt-diverged without token texts, or when the re-render changes text', () => {
    const exact = buildPrefixMerge([a, b, c]);
    expect(exact.traces.map((t) => t.completionIds)).toEqual([['a'], ['b'], ['c']]);
    expect(exact.traces[0].breaks[0]).toMatchObject({ reason: 'prompt-diverged', atCompletionId: 'b', tokenIndex: 4 });
    const edited = rec('e', 1, [...SYS, 50, 54, 53, EOS, 20, 21], [50, EOS]);
    const r = buildPrefixMerge([a, edited], { tokenText });
    expect(r.traces).toHaveLength(2);
    expect(r.traces[0].breaks[0].reason).toBe('prompt-diverged');
  });

  it('verifyTrace rejects a span that is not what the engine read, or that hides a text change', () => {
    const [t] = buildPrefixMerge([a, b, c], { tokenText }).traces;
    const m = byId([a, b, c]);
    const wrongServed = structuredClone(t);
    wrongServed.rerendered[0].served = [54];
    expect(verifyTrace(wrongServed, m).ok).toBe(false);
    expect(verifyTrace(wrongServed, m, tokenText).error).toMatch(/more than whitespace/);
    const hidden = structuredClone(t);
    hidden.proof.turns[1].rerendered = 0;
    expect(verifyTrace(hidden, m).ok).toBe(false);
    const notSampled = structuredClone(t);
    notSampled.rerendered[0].at = 1;
    expect(verifyTrace(notSampled, m).error).toMatch(/not sampled ids/);
  });
});
