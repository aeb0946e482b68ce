// The tip index of the prefix-merge builder (tip-trie.ts), against brute force: for every prompt, the
// parent (latest longest earlier tip that is a prefix), the longest common prefix with any earlier tip,
// the latest tip sharing all of it, and the earliest identical prompt — with and without the caller's
// "extends X's tip" hint. Plus the exact range comparison it and the proof use.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { commonLength, TipTrie } from '../../src-main/core/trajectory/tip-trie.js';
import { rng } from './trajectory-fixtures.js';

interface Brute {
  parent: number;
  lcp: number;
  rel: number;
  same: number;
}

function brute(tips: number[][], prompts: number[][], q: number[]): Brute {
  let parent = -1;
  let lcp = 0;
  let rel = -1;
  let same = -1;
  const common = (a: number[]) => {
    let k = 0;
    while (k < a.length && k < q.length && a[k] === q[k]) k++;
    return k;
  };
  tips.forEach((t, i) => {
    const k = common(t);
    if (k === t.length && (parent < 0 || t.length >= tips[parent].length)) parent = i;
    if (k > lcp) lcp = k;
  });
  if (lcp > 0) tips.forEach((t, i) => common(t) >= lcp && (rel = i));
  for (let i = prompts.length - 1; i >= 0; i--) {
    const p = prompts[i];
    if (p.length === q.length && common(p) === q.length) same = i;
  }
  return { parent, lcp, rel, same };
}

describe('TipTrie', () => {
  it('answers parent / lcp / rel / same exactly like brute force (with and without the tip hint)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.integer({ min: 1, max: 80 }),
        fc.constantFrom(2, 3, 30),
        fc.boolean(),
        (seed, n, alphabet, hinted) => {
          const r = rng(seed);
          const int = (lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
          const toks = (k: number) => Array.from({ length: k }, () => int(1, alphabet));
          const trie = new TipTrie(4, 2); // tiny capacities: exercise growth
          const tips: number[][] = [];
          const prompts: number[][] = [];
          const seen: number[][] = [];
          for (let i = 0; i < n; i++) {
            let base: number[] = [];
            if (seen.length > 0 && r() < 0.9) {
              const from = seen[int(0, seen.length - 1)];
              base = from.slice(0, r() < 0.5 ? from.length : int(0, from.length));
            }
            const q = [...base, ...toks(r() < 0.3 ? 0 : int(1, 3))];
            const o = toks(int(0, 3));
            const insert = r() < 0.85;
            const mark = insert ? tips.length : -1;
            // the hint: an inserted completion whose tip is a prefix of q (the newest such, or a random one)
            let hint = -1;
            if (hinted) {
              const ok = tips.map((t, j) => (t.length <= q.length && t.every((x, k) => x === q[k]) ? j : -1)).filter((j) => j >= 0);
              if (ok.length > 0) hint = r() < 0.5 ? ok[ok.length - 1] : ok[int(0, ok.length - 1)];
            }
            const want = brute(tips, prompts, q);
            trie.query(Int32Array.from(q), mark, hint);
            expect({ parent: trie.parent, lcp: trie.lcp, rel: trie.rel, same: trie.same }).toEqual(want);
            if (insert) {
              trie.insert(mark, Int32Array.from(q), Int32Array.from(o));
              tips.push([...q, ...o]);
              prompts.push(q);
            }
            seen.push(q, [...q, ...o]);
          }
          expect(trie.stored).toBeLessThanOrEqual(tips.reduce((a, t) => a + t.length, 0));
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe('commonLength (exact comparison used by the tip index and the proof)', () => {
  it('agrees with a scalar loop at every mismatch position, alignment and value (incl. 0 / -2^31 halves)', () => {
    const naive = (a: Int32Array, af: number, b: Int32Array, bf: number, n: number) => {
      let k = 0;
      while (k < n && a[af + k] === b[bf + k]) k++;
      return k;
    };
    const buf = new ArrayBuffer(4 * 400);
    const base = new Int32Array(buf);
    for (let i = 0; i < base.length; i++) base[i] = i % 7 === 0 ? 0 : i % 11 === 0 ? -(2 ** 31) : 1000 + i;
    for (const aShift of [0, 1, 2, 3]) {
      const a = new Int32Array(buf, 4 * aShift, 300); // byteOffset 0, 4, 8, 12: aligned or not
      for (const bFrom of [0, 1, 2]) {
        for (const n of [0, 1, 63, 64, 65, 200]) {
          const b = new Int32Array(n + bFrom + 2);
          b.set(a.subarray(0, n), bFrom);
          expect(commonLength(a, 0, b, bFrom, n)).toBe(n);
          for (let at = 0; at < n; at += n > 70 ? 7 : 1) {
            for (const bad of [a[at] ^ 1, a[at] === 0 ? -(2 ** 31) : 0, a[at] + 2 ** 16]) {
              const c = b.slice();
              c[bFrom + at] = bad;
              expect(commonLength(a, 0, c, bFrom, n)).toBe(naive(a, 0, c, bFrom, n));
              expect(commonLength(c, bFrom, a, 0, n)).toBe(at);
            }
          }
        }
      }
    }
  });
});
