// Property-based tests of the trace builders over simulated agent sessions: tool turns, user turns,
// SDK retries, identical-prompt siblings (n>1), parallel and forked sub-agents, a title request,
// length-cut outputs, compactions, rewritten / re-rendered history, aborts, errors, policy bumps.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  buildPerRequest,
  buildPrefixMerge,
  verifyTrace,
  type BuildOptions,
  type BuildResult,
  type TrajectoryInput,
} from '../../src-main/core/trajectory/index.js';
import { EOS, NL, rng } from './trajectory-fixtures.js';
import { buildPrefixMergeReference } from './trajectory-reference.js';

const ACTIONS = [
  'tool',
  'user',
  'truncated',
  'retry-ok',
  'retry-after-error',
  'n-samples',
  'subagent',
  'fork-agent',
  'parallel-forks',
  'title',
  'compact',
  'rewrite',
  'rerender',
  'abort-retry',
  'abort-keep',
  'abort-end',
  'policy',
] as const;
type Action = (typeof ACTIONS)[number];

function simulate(seed: number, actions: Action[]): TrajectoryInput[] {
  const r = rng(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
  const toks = (n: number) => Array.from({ length: n }, () => int(100, 140)); // small vocab: many accidental matches
  const out: TrajectoryInput[] = [];
  let seq = 0;
  let policy = 0;
  const system = [4, 10, ...toks(int(2, 6))];

  type Sampled = { rec: TrajectoryInput; ids: number[] };
  const complete = (
    prompt: number[],
    o: { status?: 'ok' | 'error' | 'aborted'; retryOf?: string | null; len?: number; eos?: boolean } = {},
  ): Sampled => {
    const status = o.status ?? 'ok';
    const n = o.len ?? int(0, 5);
    const ids = toks(n);
    if (status === 'ok' && (o.eos ?? r() < 0.8)) ids.push(EOS);
    const s = seq++;
    const rec: TrajectoryInput = {
      id: `c${s}`,
      sessionId: 'sess',
      seq: s,
      promptIds: Int32Array.from(prompt),
      outputIds: Int32Array.from(ids),
      outputLogprobs: Float32Array.from(ids, () => -r() * 5),
      status,
      policyVersion: policy,
      retryOf: o.retryOf ?? null,
      createdAt: 1000 + s,
      finishReason: status !== 'ok' ? null : ids.at(-1) === EOS ? 'stop' : 'length',
    };
    out.push(rec);
    return { rec, ids };
  };
  /** What the template renders after a sampled output (EOS re-rendered, newline, or EOS added after a cut). */
  const after = (ids: number[]): number[] => {
    if (ids.at(-1) === EOS) return r() < 0.5 ? [NL] : [];
    return [EOS, NL];
  };
  const interstitial = (): number[] => [4, int(5, 9), ...toks(int(0, 4)), EOS, NL, 4, 11];
  const turn = (ctx: number[], o: Parameters<typeof complete>[1] = {}): number[] => {
    const { ids } = complete(ctx, o);
    return [...ctx, ...ids, ...after(ids), ...interstitial()];
  };

  let ctx = [...system, 4, 12, ...toks(int(1, 4)), EOS, NL, 4, 11];
  for (const a of actions) {
    switch (a) {
      case 'tool':
      case 'user':
        ctx = turn(ctx);
        break;
      case 'truncated':
        ctx = turn(ctx, { eos: false, len: int(1, 5) });
        break;
      case 'retry-ok': {
        const x = complete(ctx);
        const y = complete(ctx, { retryOf: x.rec.id });
        ctx = [...ctx, ...y.ids, ...after(y.ids), ...interstitial()];
        break;
      }
      case 'retry-after-error': {
        const f = complete(ctx, { status: 'error', len: 0 });
        const y = complete(ctx, { retryOf: f.rec.id });
        ctx = [...ctx, ...y.ids, ...after(y.ids), ...interstitial()];
        break;
      }
      case 'n-samples': {
        const k = int(2, 3);
        const samples = Array.from({ length: k }, () => complete(ctx));
        const pick = samples[int(0, k - 1)];
        ctx = [...ctx, ...pick.ids, ...after(pick.ids), ...interstitial()];
        break;
      }
      case 'subagent': {
        let sub = [...system, 4, 13, ...toks(int(1, 3)), EOS, NL, 4, 11];
        for (let i = int(1, 3); i > 0; i--) sub = turn(sub);
        ctx = turn(ctx);
        break;
      }
      case 'fork-agent': {
        let sub = [...ctx, ...toks(int(1, 3))];
        for (let i = int(1, 2); i > 0; i--) sub = turn(sub);
        ctx = [...ctx, ...toks(int(1, 3)), EOS, NL];
        break;
      }
      case 'parallel-forks': {
        let f1 = [...ctx, 20, ...toks(int(0, 2))];
        let f2 = [...ctx, 21, ...toks(int(0, 2))];
        for (let i = int(1, 3); i > 0; i--) {
          f1 = turn(f1);
          if (r() < 0.7) f2 = turn(f2);
        }
        ctx = [...ctx, 22, EOS, NL];
        break;
      }
      case 'title':
        complete([4, 14, ...toks(int(1, 6))]);
        break;
      case 'compact':
        ctx = [...system, 4, 15, ...toks(int(1, 5)), EOS, NL, 4, 11];
        break;
      case 'rewrite': {
        if (ctx.length > 2) {
          const i = int(0, ctx.length - 1);
          ctx = [...ctx.slice(0, i), int(100, 140), ...ctx.slice(i + 1)];
        }
        break;
      }
      case 'rerender': {
        if (ctx.length > 4) {
          const i = int(Math.max(0, ctx.length - 12), ctx.length - 1);
          ctx = [...ctx.slice(0, i), ...ctx.slice(i + 1)];
        }
        break;
      }
      case 'abort-retry': {
        const f = complete(ctx, { status: 'aborted', len: int(0, 3) });
        ctx = turn(ctx, { retryOf: f.rec.id });
        break;
      }
      case 'abort-keep': {
        const f = complete(ctx, { status: 'aborted', len: int(1, 3) });
        ctx = [...ctx, ...f.ids, EOS, NL, ...interstitial()];
        break;
      }
      case 'abort-end':
        complete(ctx, { status: r() < 0.5 ? 'aborted' : 'error', len: int(0, 3) });
        break;
      case 'policy':
        policy++;
        break;
    }
  }
  ctx = turn(ctx);
  return out;
}

function checkInvariants(recs: TrajectoryInput[], res: BuildResult, opts: BuildOptions = {}): void {
  const byId = new Map(recs.map((c) => [c.id, c]));
  const seen = new Map<string, number>();
  for (const t of res.traces) {
    // lengths agree; the proof holds (checked independently of the builder)
    expect(t.lossMask.length).toBe(t.responseIds.length);
    expect(t.responseLogprobs.length).toBe(t.responseIds.length);
    expect(t.policyVersions.length).toBe(t.completionIds.length);
    expect(t.proof.ok).toBe(true);
    expect(verifyTrace(t, byId)).toEqual({ ok: true });
    // every mask-1 token is a sampled token with its real logprob: the mask-1 count equals the
    // sampled-token count of the trace's (ok) completions, and verifyTrace placed each of them
    let ones = 0;
    for (const m of t.lossMask) ones += m;
    let sampled = 0;
    for (const id of t.completionIds) {
      const c = byId.get(id)!;
      expect(c.status).toBe('ok');
      sampled += c.outputIds.length;
      seen.set(id, (seen.get(id) ?? 0) + 1);
    }
    expect(ones).toBe(sampled);
    for (let i = 0; i < t.lossMask.length; i++) if (t.lossMask[i] === 0) expect(t.responseLogprobs[i]).toBe(0);
    for (const b of t.breaks) {
      expect(byId.has(b.atCompletionId)).toBe(true);
      if (b.tokenIndex !== undefined) expect(b.tokenIndex).toBeGreaterThanOrEqual(0);
    }
  }
  // every ok completion appears in exactly one trace (so its sampled ids are mask 1 exactly once);
  // aborted / errored ones in none
  const retried = new Set(res.traces.flatMap((t) => t.skipped.filter((s) => s.reason === 'retried').map((s) => s.completionId)));
  for (const c of recs) {
    if (c.status === 'ok' && !(opts.retries === 'replace' && retried.has(c.id))) expect(seen.get(c.id)).toBe(1);
    else expect(seen.get(c.id)).toBeUndefined();
  }
  if (opts.retries !== 'replace') expect(retried.size).toBe(0);
  // every failed completion is accounted for: skipped, a break, or unplaced
  const failedIds = recs.filter((c) => c.status !== 'ok').map((c) => c.id).sort();
  const accounted = [
    ...res.unplaced.map((u) => u.completionId),
    ...res.traces.flatMap((t) => t.skipped.filter((s) => s.reason !== 'retried').map((s) => s.completionId)),
    ...res.traces.flatMap((t) => t.breaks.filter((b) => b.reason === 'aborted' || b.reason === 'error').map((b) => b.atCompletionId)),
  ].sort();
  expect(accounted).toEqual(failedIds);
  // trace ids are unique; origins point at existing traces
  const ids = new Set(res.traces.map((t) => t.id));
  expect(ids.size).toBe(res.traces.length);
  for (const t of res.traces) if (t.origin.kind !== 'root') expect(ids.has(t.origin.fromTraceId)).toBe(true);
  // linear work: bounded by a constant times the input tokens (structure, not timing)
  expect(res.stats.tokenOps).toBeLessThanOrEqual(12 * res.stats.inputTokens + 16 * recs.length + 16);
}

const sessionArb = fc.record({
  seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  actions: fc.array(fc.constantFrom(...ACTIONS), { minLength: 0, maxLength: 25 }),
});

describe('trace builders: properties', () => {
  it('prefix-merge invariants hold on simulated sessions', () => {
    fc.assert(
      fc.property(sessionArb, ({ seed, actions }) => {
        const recs = simulate(seed, actions);
        checkInvariants(recs, buildPrefixMerge(recs));
      }),
      { numRuns: 400 },
    );
  });

  it('prefix-merge invariants hold with retries replaced and policy splits', () => {
    fc.assert(
      fc.property(sessionArb, ({ seed, actions }) => {
        const recs = simulate(seed, actions);
        const opts: BuildOptions = { retries: 'replace', onPolicyChange: 'split' };
        const res = buildPrefixMerge(recs, opts);
        checkInvariants(recs, res, opts);
        for (const t of res.traces) expect(new Set(t.policyVersions).size).toBe(1);
      }),
      { numRuns: 200 },
    );
  });

  it('the input order does not matter', () => {
    fc.assert(
      fc.property(sessionArb, fc.integer(), ({ seed, actions }, shuffleSeed) => {
        const recs = simulate(seed, actions);
        const r = rng(shuffleSeed);
        const shuffled = [...recs].sort(() => r() - 0.5);
        expect(buildPrefixMerge(shuffled)).toEqual(buildPrefixMerge(recs));
      }),
      { numRuns: 100 },
    );
  });

  it('a plain tool loop (no retries, forks, rewrites or failures) is exactly one trace', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.array(fc.constantFrom<Action>('tool', 'user', 'truncated', 'policy'), { maxLength: 30 }),
        (seed, actions) => {
          const recs = simulate(seed, actions);
          const res = buildPrefixMerge(recs);
          checkInvariants(recs, res);
          expect(res.traces).toHaveLength(1);
          expect(res.traces[0].completionIds).toEqual(recs.map((c) => c.id));
          expect(res.traces[0].breaks).toEqual([]);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('per-request invariants hold', () => {
    fc.assert(
      fc.property(sessionArb, ({ seed, actions }) => {
        const recs = simulate(seed, actions);
        const res = buildPerRequest(recs);
        const byId = new Map(recs.map((c) => [c.id, c]));
        expect(res.traces.length).toBe(recs.filter((c) => c.status === 'ok').length);
        for (const t of res.traces) expect(verifyTrace(t, byId)).toEqual({ ok: true });
      }),
      { numRuns: 100 },
    );
  });

  it('work stays linear on a long session (many turns, long prompts)', () => {
    const recs = simulate(7, Array.from({ length: 150 }, (_, i) => (['tool', 'user', 'n-samples', 'fork-agent', 'retry-ok'] as const)[i % 5]));
    const res = buildPrefixMerge(recs);
    expect(res.stats.inputTokens).toBeGreaterThan(100_000);
    checkInvariants(recs, res);
  });
});

/**
 * Adversarial sessions for the tip index: prompts cut from earlier tips or prompts at any length (so
 * prompts and tips end inside earlier ones, repeat them exactly, or are empty), short suffixes from a tiny
 * or a wide alphabet (wide fan-out at one position), empty outputs, failures, retries, policy bumps.
 */
function adversarial(seed: number, n: number, alphabet: number): TrajectoryInput[] {
  const r = rng(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
  const toks = (k: number) => Array.from({ length: k }, () => int(1, alphabet));
  const seen: number[][] = [];
  const out: TrajectoryInput[] = [];
  for (let i = 0; i < n; i++) {
    let base: number[] = [];
    if (seen.length > 0 && r() < 0.9) {
      const from = seen[int(0, seen.length - 1)];
      base = from.slice(0, r() < 0.5 ? from.length : int(0, from.length));
    }
    const prompt = [...base, ...toks(r() < 0.3 ? 0 : int(1, 3))];
    const x = r();
    const status = x < 0.8 ? 'ok' : x < 0.9 ? 'aborted' : 'error';
    const ids = toks(int(0, 3));
    out.push({
      id: `c${i}`,
      sessionId: 'adv',
      seq: int(0, 2) === 0 && i > 0 ? out[i - 1].seq : i, // some equal seq: createdAt / id order
      promptIds: Int32Array.from(prompt),
      outputIds: Int32Array.from(ids),
      outputLogprobs: Float32Array.from(ids, () => -r() * 5),
      status,
      policyVersion: int(0, 1),
      retryOf: i > 0 && r() < 0.2 ? `c${int(0, i - 1)}` : null,
      createdAt: 1000 + i,
    });
    seen.push(prompt, [...prompt, ...ids]);
  }
  return out;
}

const sameTraces = (a: BuildResult, b: BuildResult) => {
  expect(a.traces).toEqual(b.traces);
  expect(a.unplaced).toEqual(b.unplaced);
};

describe('prefix-merge: identical to the reference builder (hash maps of every prefix, before issue 4)', () => {
  const optionSets: BuildOptions[] = [{}, { retries: 'replace', onPolicyChange: 'split' }, { retries: 'replace' }];

  it('on simulated agent sessions', () => {
    fc.assert(
      fc.property(sessionArb, ({ seed, actions }) => {
        const recs = simulate(seed, actions);
        for (const opts of optionSets) sameTraces(buildPrefixMerge(recs, opts), buildPrefixMergeReference(recs, opts));
      }),
      { numRuns: 300 },
    );
  });

  it('on adversarial sessions (prompts and tips ending inside earlier ones, empty ones, wide fan-out)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.integer({ min: 1, max: 60 }),
        fc.constantFrom(2, 3, 40),
        (seed, n, alphabet) => {
          const recs = adversarial(seed, n, alphabet);
          for (const opts of optionSets) {
            const res = buildPrefixMerge(recs, opts);
            sameTraces(res, buildPrefixMergeReference(recs, opts));
            checkInvariants(recs, res, opts);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('on a wide fan-out: many siblings diverging at one position, then each extended', () => {
    const sys = [4, 10, 11, 12];
    const recs: TrajectoryInput[] = [];
    const mk = (id: string, seq: number, prompt: number[], out: number[]) =>
      recs.push({
        id, sessionId: 'fan', seq, promptIds: Int32Array.from(prompt), outputIds: Int32Array.from(out),
        outputLogprobs: Float32Array.from(out, () => -0.5), status: 'ok', policyVersion: 0, retryOf: null, createdAt: seq,
      });
    for (let i = 0; i < 30; i++) mk(`a${i}`, i, [...sys, 100 + i], [200 + (i % 3), EOS]);
    for (let i = 0; i < 30; i++) mk(`b${i}`, 30 + i, [...sys, 100 + i, 200 + (i % 3), EOS, NL, 4], [300 + i]);
    for (let i = 0; i < 30; i += 3) mk(`c${i}`, 60 + i, [...sys, 100 + i], [200 + (i % 3), EOS]); // identical retries
    const res = buildPrefixMerge(recs);
    sameTraces(res, buildPrefixMergeReference(recs));
    checkInvariants(recs, res);
  });
});

describe('prefix-merge: work on a 1,000-turn session', () => {
  it('stores, indexes and writes only new tokens; reads each prompt token twice (tip check + proof)', () => {
    const r = rng(99);
    const recs: TrajectoryInput[] = [];
    let prompt = Int32Array.from({ length: 256 }, () => 100 + Math.floor(r() * 50_000));
    for (let seq = 0; seq < 1000; seq++) {
      const out = Int32Array.from({ length: 6 }, () => 100 + Math.floor(r() * 50_000));
      recs.push({
        id: `t${seq}`, sessionId: 'long', seq, promptIds: prompt, outputIds: out, outputLogprobs: new Float32Array(6).fill(-0.25),
        status: 'ok', policyVersion: 0, retryOf: null, createdAt: seq,
      });
      const next = new Int32Array(prompt.length + out.length + 2);
      next.set(prompt);
      next.set(out, prompt.length);
      next.set([EOS, NL], prompt.length + out.length);
      prompt = next;
    }
    const res = buildPrefixMerge(recs);
    expect(res.traces).toHaveLength(1);
    expect(res.traces[0].proof.ok).toBe(true);
    const last = recs[recs.length - 1];
    const newTokens = last.promptIds.length + last.outputIds.length; // every token of the session, once
    const n = recs.length;
    const s = res.stats;
    expect(s.inputTokens).toBeGreaterThan(4_000_000);
    expect(s.newTokens).toBe(newTokens);
    // index writes: the new tokens plus a few vertices per completion (no per-prefix hashing or map inserts)
    expect(s.indexOps!).toBeLessThanOrEqual(newTokens + 3 * n + 1);
    // all work other than exact comparisons with tokens already seen: linear in the new tokens
    expect(s.tokenOps - s.compareOps!).toBeLessThanOrEqual(3 * newTokens + 4 * n);
    // the comparisons: each prompt against the previous turn's ids, and against the trace (the proof)
    expect(s.compareOps!).toBeLessThanOrEqual(2 * s.inputTokens + 4 * n);
  });
});
