import { describe, expect, it } from 'vitest';
import {
  buildPerRequest,
  buildPrefixMerge,
  buildTraces,
  verifyTrace,
  type Trace,
  type TrajectoryInput,
} from '../../src-main/core/trajectory/index.js';
import { EOS, NL, rec, tip } from './trajectory-fixtures.js';

const SYS = [4, 100, 101, 102, 103, 104, 105, 106];
const byId = (rs: TrajectoryInput[]) => new Map(rs.map((r) => [r.id, r]));
const full = (t: Trace) => [...t.promptIds, ...t.responseIds];
function expectValid(traces: Trace[], rs: TrajectoryInput[]) {
  const m = byId(rs);
  for (const t of traces) {
    expect(t.proof.ok).toBe(true);
    expect(verifyTrace(t, m)).toEqual({ ok: true });
  }
}

describe('prefix-merge: merging', () => {
  it('merges a tool loop into one trace: sampled ids mask 1 with logprobs, interstitial mask 0 / logprob 0', () => {
    const a = rec('a', 0, [...SYS, 7, 8], [20, 21, EOS]);
    const b = rec('b', 1, [...tip(a), NL, 4, 9, 300, 301, EOS, NL, 4, 5], [22, EOS]);
    const c = rec('c', 2, [...tip(b), NL, 4, 9, 302, EOS, NL, 4, 5], [23, 24, EOS]);
    const { traces, unplaced } = buildPrefixMerge([c, a, b]);
    expect(unplaced).toEqual([]);
    expect(traces).toHaveLength(1);
    const t = traces[0];
    expect(t.completionIds).toEqual(['a', 'b', 'c']);
    expect(t.promptIds).toEqual([...a.promptIds]);
    expect(full(t)).toEqual(tip(c));
    expect(t.lossMask).toEqual([1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1]);
    expect(t.responseLogprobs.slice(0, 3)).toEqual([...a.outputLogprobs]);
    expect(t.responseLogprobs.slice(3, 12).every((x) => x === 0)).toBe(true);
    expect(t.responseLogprobs.slice(12, 14)).toEqual([...b.outputLogprobs]);
    expect(t.breaks).toEqual([]);
    expect(t.origin).toEqual({ kind: 'root' });
    expect(t.id).toBe('s1/pm/a');
    expect(t.proof.turns.map((x) => x.promptLength)).toEqual([a.promptIds.length, b.promptIds.length, c.promptIds.length]);
    expectValid(traces, [a, b, c]);
  });

  it('handles a length-cut output: the EOS the template adds is interstitial (mask 0)', () => {
    const a = rec('a', 0, [...SYS, 7], [20, 21, 22], { finishReason: 'length' });
    const b = rec('b', 1, [...tip(a), EOS, NL, 4, 5], [30, EOS]);
    const [t] = buildPrefixMerge([a, b]).traces;
    expect(t.completionIds).toEqual(['a', 'b']);
    expect(t.lossMask).toEqual([1, 1, 1, 0, 0, 0, 0, 1, 1]);
    expect(t.responseIds[3]).toBe(EOS);
  });

  it('records prompt-diverged when the template re-renders the last output (e.g. reasoning stripped)', () => {
    const a = rec('a', 0, [...SYS, 7], [150, 151, 152, 20, EOS]); // 150..152 = "<think>…</think>"
    const b = rec('b', 1, [...SYS, 7, 20, EOS, NL, 4, 5], [30, EOS]);
    const { traces } = buildPrefixMerge([a, b]);
    expect(traces.map((t) => t.completionIds)).toEqual([['a'], ['b']]);
    expect(traces[0].breaks).toEqual([
      { reason: 'prompt-diverged', atCompletionId: 'b', tokenIndex: SYS.length + 1, continuedIn: 's1/pm/b' },
    ]);
    expect(traces[1].origin).toEqual({ kind: 'root' });
    expectValid(traces, [a, b]);
  });

  it('records rewritten-history when an earlier turn changes', () => {
    const a = rec('a', 0, [...SYS, 7], [150, 20, EOS]);
    const b = rec('b', 1, [...tip(a), NL, 4, 5], [151, 30, EOS]);
    // c drops a's reasoning (token 150) from the history but keeps b's
    const c = rec('c', 2, [...SYS, 7, 20, EOS, NL, 4, 5, 151, 30, EOS, NL, 4, 5, 6], [40, EOS]);
    const { traces } = buildPrefixMerge([a, b, c]);
    expect(traces.map((t) => t.completionIds)).toEqual([['a', 'b'], ['c']]);
    expect(traces[0].breaks).toEqual([
      { reason: 'rewritten-history', atCompletionId: 'c', tokenIndex: SYS.length + 1, continuedIn: 's1/pm/c' },
    ]);
  });

  it('records compaction (system prompt kept, history summarised)', () => {
    const a = rec('a', 0, [...SYS, 7, 8], [20, EOS]);
    const b = rec('b', 1, [...tip(a), NL, 4, 5, 6], [30, EOS]);
    const c = rec('c', 2, [...SYS, 900, 901], [40, EOS]);
    const { traces } = buildPrefixMerge([a, b, c]);
    expect(traces.map((t) => t.completionIds)).toEqual([['a', 'b'], ['c']]);
    expect(traces[0].breaks).toEqual([{ reason: 'compaction', atCompletionId: 'c', tokenIndex: SYS.length, continuedIn: 's1/pm/c' }]);
  });

  it('records compaction when old tool results are pruned (prompt shrinks after the first prompt)', () => {
    const a = rec('a', 0, [...SYS, 7], [20, EOS]);
    const b = rec('b', 1, [...tip(a), NL, 500, 501, 502, 503, 504, EOS, NL], [30, EOS]);
    const c = rec('c', 2, [...tip(b), NL, 4, 5], [31, EOS]);
    const d = rec('d', 3, [...tip(a), NL, 505, EOS, NL, 30, EOS, NL, 4, 5, 31, EOS, NL, 6], [32, EOS]);
    const { traces } = buildPrefixMerge([a, b, c, d]);
    // d extends a's tip, so a's trace continues with d; b, c become a branch that d abandoned
    expect(traces.map((t) => t.completionIds)).toEqual([['a', 'd'], ['b', 'c']]);
    expect(traces[1].origin).toMatchObject({ kind: 'branch', fromTraceId: 's1/pm/a', afterCompletionId: 'a', tokenIndex: tip(a).length });
    expect(traces[1].breaks).toEqual([]); // a sibling branch: recorded by its origin
    expectValid(traces, [a, b, c, d]);
  });

  it('a branch that forks off the history is its own trace (origin branch), never merged', () => {
    const a = rec('a', 0, [...SYS, 7], [20, EOS]);
    const b = rec('b', 1, [...tip(a), NL, 4, 5, 700], [30, EOS]); // sub-agent forked from the main context
    const c = rec('c', 2, [...tip(b), NL, 4, 5, 701], [31, EOS]);
    const d = rec('d', 3, [...tip(a), NL, 4, 9, 800, EOS, NL], [32, EOS]); // main goes on with the tool result
    const { traces } = buildPrefixMerge([a, b, c, d]);
    expect(traces.map((t) => t.completionIds)).toEqual([['a', 'd'], ['b', 'c']]);
    expect(traces[1].origin).toEqual({ kind: 'branch', fromTraceId: 's1/pm/a', afterCompletionId: 'a', tokenIndex: tip(a).length });
  });
});

describe('prefix-merge: siblings', () => {
  it('an SDK retry with identical prompt: separate traces by default, the retry continues the chain', () => {
    const p = rec('p', 0, [...SYS, 7], [20, EOS]);
    const x = rec('x', 1, [...tip(p), NL, 4, 5], [30, EOS]);
    const r = rec('r', 2, [...tip(p), NL, 4, 5], [31, EOS], { retryOf: 'x' });
    const y = rec('y', 3, [...tip(r), NL, 4, 6], [40, EOS]);
    const all = [p, x, r, y];
    const { traces } = buildPrefixMerge(all);
    expect(traces.map((t) => t.completionIds)).toEqual([['p', 'r', 'y'], ['x']]);
    expect(traces[1].origin).toEqual({
      kind: 'branch', fromTraceId: 's1/pm/p', afterCompletionId: 'p', tokenIndex: tip(p).length, samePromptAs: 'r',
    });
    expect(traces.flatMap((t) => t.breaks)).toEqual([]);
    expectValid(traces, all);

    const replaced = buildPrefixMerge(all, { retries: 'replace' }).traces;
    expect(replaced.map((t) => t.completionIds)).toEqual([['p', 'r', 'y']]);
    expect(replaced[0].skipped).toEqual([{ completionId: 'x', reason: 'retried', replacedBy: 'r' }]);
  });

  it('a retry that produced the same output as the original still continues once', () => {
    const p = rec('p', 0, [...SYS, 7], [20, EOS]);
    const x = rec('x', 1, [...tip(p), NL], [30, EOS]);
    const r = rec('r', 2, [...tip(p), NL], [30, EOS], { retryOf: 'x' });
    const y = rec('y', 3, [...tip(r), NL, 4], [40, EOS]);
    const { traces } = buildPrefixMerge([p, x, r, y]);
    expect(traces.map((t) => t.completionIds)).toEqual([['p', 'r', 'y'], ['x']]);
  });

  it('n>1 samples of the same prompt are separate traces', () => {
    const p = rec('p', 0, [...SYS, 7], [20, EOS]);
    const q = [...tip(p), NL, 4, 5];
    const s = [1, 2, 3].map((i) => rec(`s${i}`, i, q, [30 + i, EOS]));
    const { traces } = buildPrefixMerge([p, ...s]);
    expect(traces.map((t) => t.completionIds)).toEqual([['p', 's3'], ['s1'], ['s2']]);
    expect(traces[1].origin).toMatchObject({ kind: 'branch', samePromptAs: 's2' });
    expect(traces.flatMap((t) => t.breaks)).toEqual([]);
  });

  it('identical first requests (parallel agents, opencode title beside main) are separate roots', () => {
    const m = rec('m', 0, [...SYS, 7], [20, EOS]);
    const title = rec('title', 1, [4, 600, 601, 7], [61, EOS]);
    const twin = rec('twin', 2, [...SYS, 7], [21, EOS]);
    const m2 = rec('m2', 3, [...tip(m), NL, 4, 5], [22, EOS]);
    const { traces } = buildPrefixMerge([m, title, twin, m2]);
    expect(traces.map((t) => t.completionIds)).toEqual([['m', 'm2'], ['title'], ['twin']]);
    expect(traces[2].origin).toEqual({ kind: 'root', samePromptAs: 'm' });
    expect(traces[0].origin).toEqual({ kind: 'root', samePromptAs: 'twin' });
    expect(traces.flatMap((t) => t.breaks)).toEqual([]);
  });
});

describe('prefix-merge: failures and policy', () => {
  it('an aborted last attempt ends the trace with an aborted break; its partial output never gets mask 1', () => {
    const a = rec('a', 0, [...SYS, 7], [20, EOS]);
    const f = rec('f', 1, [...tip(a), NL, 4], [30, 31], { status: 'aborted' });
    const { traces, unplaced } = buildPrefixMerge([a, f]);
    expect(traces).toHaveLength(1);
    expect(traces[0].completionIds).toEqual(['a']);
    expect(traces[0].breaks).toEqual([{ reason: 'aborted', atCompletionId: 'f', tokenIndex: tip(a).length }]);
    expect(unplaced).toEqual([]);
  });

  it('an errored attempt that was retried is listed as skipped; the retry continues the chain', () => {
    const a = rec('a', 0, [...SYS, 7], [20, EOS]);
    const f = rec('f', 1, [...tip(a), NL, 4], [], { status: 'error' });
    const r = rec('r', 2, [...tip(a), NL, 4], [30, EOS], { retryOf: 'f' });
    const { traces } = buildPrefixMerge([a, f, r]);
    expect(traces).toHaveLength(1);
    expect(traces[0].completionIds).toEqual(['a', 'r']);
    expect(traces[0].skipped).toEqual([{ completionId: 'f', reason: 'error' }]);
    expect(traces[0].breaks).toEqual([]);
  });

  it('an aborted stream whose partial text the agent kept: those ids are interstitial (mask 0)', () => {
    const a = rec('a', 0, [...SYS, 7], [20, EOS]);
    const f = rec('f', 1, [...tip(a), NL, 4], [30, 31], { status: 'aborted' });
    const b = rec('b', 2, [...tip(a), NL, 4, 30, 31, EOS, NL, 4, 5], [40, EOS]);
    const { traces } = buildPrefixMerge([a, f, b]);
    expect(traces).toHaveLength(1);
    const t = traces[0];
    expect(t.completionIds).toEqual(['a', 'b']);
    const i30 = t.responseIds.indexOf(30);
    expect(t.lossMask[i30]).toBe(0);
    expect(t.responseLogprobs[i30]).toBe(0);
    expect(t.skipped).toEqual([{ completionId: 'f', reason: 'aborted' }]);
  });

  it('a failed first request has no trace and is returned as unplaced', () => {
    const f = rec('f', 0, [...SYS, 7], [], { status: 'error' });
    const r = rec('r', 1, [...SYS, 7], [20, EOS], { retryOf: 'f' });
    const { traces, unplaced } = buildPrefixMerge([f, r]);
    expect(traces.map((t) => t.completionIds)).toEqual([['r']]);
    expect(unplaced).toEqual([{ completionId: 'f', reason: 'error' }]);
  });

  it('policy versions: recorded per turn by default, split on request', () => {
    const a = rec('a', 0, [...SYS, 7], [20, EOS], { policyVersion: 1 });
    const b = rec('b', 1, [...tip(a), NL, 4], [30, EOS], { policyVersion: 2 });
    const [t] = buildPrefixMerge([a, b]).traces;
    expect(t.policyVersions).toEqual([1, 2]);
    const split = buildPrefixMerge([a, b], { onPolicyChange: 'split' }).traces;
    expect(split.map((x) => x.completionIds)).toEqual([['a'], ['b']]);
    expect(split[0].breaks).toEqual([
      { reason: 'policy-changed', atCompletionId: 'b', tokenIndex: tip(a).length, continuedIn: 's1/pm/b' },
    ]);
    expect(split[1].origin).toEqual({ kind: 'split', fromTraceId: 's1/pm/a', afterCompletionId: 'a', reason: 'policy-changed' });
    expectValid(split, [a, b]);
  });

  it('rewards: broadcast or per trace', () => {
    const a = rec('a', 0, [...SYS, 7], [20, EOS]);
    const b = rec('b', 1, [4, 600], [21, EOS]);
    expect(buildPrefixMerge([a, b], { reward: 0.5 }).traces.map((t) => t.reward)).toEqual([0.5, 0.5]);
    expect(buildPrefixMerge([a, b], { reward: (t) => t.completionIds.length }).traces.map((t) => t.reward)).toEqual([1, 1]);
    expect(buildPrefixMerge([a, b]).traces.map((t) => t.reward)).toEqual([null, null]);
  });

  it('groups records of several sessions', () => {
    const a = rec('a', 0, [...SYS, 7], [20, EOS]);
    const b = rec('b', 0, [...SYS, 7], [20, EOS], { sessionId: 's2' });
    const { traces } = buildPrefixMerge([a, b]);
    expect(traces.map((t) => [t.sessionId, t.id])).toEqual([['s1', 's1/pm/a'], ['s2', 's2/pm/b']]);
  });

  it('rejects a record whose logprobs and ids differ in length', () => {
    const a = rec('a', 0, [1], [2, 3], { outputLogprobs: new Float32Array(1) });
    expect(() => buildPrefixMerge([a])).toThrow(RangeError);
  });
});

describe('per-request builder and verifyTrace', () => {
  it('one trace per ok completion', () => {
    const a = rec('a', 0, [...SYS, 7], [20, EOS]);
    const b = rec('b', 1, [...tip(a), NL], [30, EOS], { policyVersion: 3 });
    const f = rec('f', 2, [...tip(b)], [9], { status: 'aborted' });
    const { traces, unplaced } = buildTraces('per-request', [a, b, f], { reward: 1 });
    expect(traces.map((t) => t.id)).toEqual(['s1/pr/a', 's1/pr/b']);
    expect(traces[1]).toMatchObject({
      builder: 'per-request',
      promptIds: [...b.promptIds],
      responseIds: [30, EOS],
      lossMask: [1, 1],
      responseLogprobs: [...b.outputLogprobs],
      policyVersions: [3],
      reward: 1,
    });
    expect(unplaced).toEqual([{ completionId: 'f', reason: 'aborted' }]);
    expectValid(traces, [a, b, f]);
    expect(buildPerRequest([]).traces).toEqual([]);
  });

  it('verifyTrace catches tampering', () => {
    const a = rec('a', 0, [...SYS, 7], [20, EOS]);
    const b = rec('b', 1, [...tip(a), NL, 4], [30, EOS]);
    const m = byId([a, b]);
    const [t] = buildPrefixMerge([a, b]).traces;
    expect(verifyTrace(t, m).ok).toBe(true);
    expect(verifyTrace({ ...t, lossMask: t.lossMask.map((x, i) => (i === 2 ? 1 : x)) }, m).ok).toBe(false);
    expect(verifyTrace({ ...t, responseIds: t.responseIds.map((x, i) => (i === 3 ? 999 : x)) }, m).ok).toBe(false);
    expect(verifyTrace({ ...t, responseLogprobs: t.responseLogprobs.map((x, i) => (i === 0 ? x + 1 : x)) }, m).ok).toBe(false);
    expect(verifyTrace({ ...t, lossMask: t.lossMask.slice(1) }, m).ok).toBe(false);
  });
});
