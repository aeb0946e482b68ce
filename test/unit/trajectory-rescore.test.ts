import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mergeRescoreStats, rescoreStats } from '../../src-main/core/trajectory/rescore-stats.js';

describe('rescoreStats', () => {
  it('computes deltas, means, KL estimators and the share above 0.5', () => {
    const A = [-1, -0.5, -2, -0.1];
    const B = [-1.5, -0.5, -1, -0.1];
    const s = rescoreStats(A, B);
    expect(s.n).toBe(4);
    expect(s.deltas).toEqual([0.5, 0, -1, 0]);
    expect(s.meanAbsDelta).toBeCloseTo(1.5 / 4);
    expect(s.maxAbsDelta).toBe(1);
    expect(s.klEstimate).toBeCloseTo(-0.5 / 4);
    const k3 = [0.5, 0, -1, 0].map((d) => Math.exp(-d) - 1 + d).reduce((x, y) => x + y) / 4;
    expect(s.klK3).toBeCloseTo(k3);
    expect(s.shareAbove0_5).toBe(0.25);
    expect(s.histogram.reduce((n, b) => n + b.count, 0)).toBe(4);
  });

  it('respects the mask and drops non-finite pairs', () => {
    const s = rescoreStats([-1, -2, -Infinity, -3], [-1, -1, -1, -3], { mask: [1, 0, 1, 1] });
    expect(s.n).toBe(2);
    expect(s.deltas).toEqual([0, 0]);
    expect(s.klK3).toBe(0);
  });

  it('empty input gives zeros; mismatched lengths throw', () => {
    expect(rescoreStats([], [])).toMatchObject({ n: 0, meanAbsDelta: 0, maxAbsDelta: 0, klEstimate: 0, klK3: 0, shareAbove0_5: 0 });
    expect(() => rescoreStats([1], [])).toThrow(RangeError);
    expect(() => rescoreStats([1], [1], { mask: [] })).toThrow(RangeError);
  });

  it('histogram over a fixed range clamps outliers into the edge bins', () => {
    const s = rescoreStats([0, 0, 0], [-5, 0.05, 5], { bins: 4, range: 1 });
    expect(s.histogram.map((b) => b.count)).toEqual([1, 1, 0, 1]); // Δ = A − B = 5, −0.05, −5
    expect(s.histogram[0].lo).toBe(-1);
    expect(s.histogram[3].hi).toBe(1);
  });

  it('properties: k3 ≥ 0, |mean| ≤ meanAbs ≤ maxAbs, histogram counts all, identical inputs give zero', () => {
    const lp = fc.double({ min: -30, max: 0, noNaN: true });
    fc.assert(
      fc.property(fc.array(fc.tuple(lp, lp), { maxLength: 200 }), (pairs) => {
        const A = pairs.map((p) => p[0]);
        const B = pairs.map((p) => p[1]);
        const s = rescoreStats(A, B);
        expect(s.klK3).toBeGreaterThanOrEqual(-1e-12);
        expect(Math.abs(s.klEstimate)).toBeLessThanOrEqual(s.meanAbsDelta + 1e-9);
        expect(s.meanAbsDelta).toBeLessThanOrEqual(s.maxAbsDelta + 1e-9);
        expect(s.histogram.reduce((n, b) => n + b.count, 0)).toBe(s.n);
        const same = rescoreStats(A, A);
        expect(same.maxAbsDelta).toBe(0);
        expect(same.klK3).toBe(0);
        const merged = mergeRescoreStats([rescoreStats(A.slice(0, 3), B.slice(0, 3)), rescoreStats(A.slice(3), B.slice(3))]);
        expect(merged.n).toBe(s.n);
        expect(merged.meanAbsDelta).toBeCloseTo(s.meanAbsDelta, 9);
        expect(merged.klK3).toBeCloseTo(s.klK3, 9);
      }),
      { numRuns: 200 },
    );
  });
});
