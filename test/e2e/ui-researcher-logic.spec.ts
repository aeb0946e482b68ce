// Pure logic behind issue 16's views (no page needed): the table query language and sorting, the
// bootstrap / Wilson intervals of Compare, stable engine colours, Δlogprob buckets, the matching pair
// Compare opens on, and dated timestamps.
import { expect, test } from '@playwright/test';
import type { BatchSummary } from '../../src-renderer/backend/types.js';
import { defaultPair } from '../../src-renderer/lib/batch.js';
import { deltaBucket, deltaClass } from '../../src-renderer/lib/delta.js';
import { engineColorIndex } from '../../src-renderer/lib/engineColor.js';
import { formatTime } from '../../src-renderer/lib/format.js';
import { bootstrapDiff, wilson } from '../../src-renderer/lib/stats.js';
import { filterRows, nextSort, parseQuery, sortRows, unknownFields, type Column } from '../../src-renderer/lib/tableQuery.js';

interface R { id: string; status: string; reward: number | null; turns: number }
const rows: R[] = [
  { id: 'a', status: 'finished', reward: 1, turns: 2 },
  { id: 'b', status: 'failed', reward: 0, turns: 5 },
  { id: 'c', status: 'finished', reward: 0, turns: 3 },
  { id: 'd', status: 'active', reward: null, turns: 1 },
];
const cols: Column<R>[] = [
  { key: 'session', label: 'Session', value: (r) => r.id },
  { key: 'status', label: 'Status', value: (r) => r.status },
  { key: 'reward', label: 'Reward', num: true, value: (r) => r.reward },
  { key: 'turns', label: 'Turns', num: true, value: (r) => r.turns },
];
const ids = (xs: R[]) => xs.map((r) => r.id).join('');

test('table query: field:value, comparisons, negation, words; unknown fields match nothing', () => {
  expect(parseQuery('reward:0 status:failed calc')).toEqual([
    { field: 'reward', op: '=', value: '0' },
    { field: 'status', op: '=', value: 'failed' },
    { field: null, op: '=', value: 'calc' },
  ]);
  expect(ids(filterRows(rows, cols, 'reward:0'))).toBe('bc');
  expect(ids(filterRows(rows, cols, 'reward:0 status:failed'))).toBe('b');
  expect(ids(filterRows(rows, cols, 'turns:>2'))).toBe('bc');
  expect(ids(filterRows(rows, cols, 'turns:<=2'))).toBe('ad');
  expect(ids(filterRows(rows, cols, 'status:!finished'))).toBe('bd');
  expect(ids(filterRows(rows, cols, 'reward:none'))).toBe('d');
  expect(ids(filterRows(rows, cols, 'FAIL'))).toBe('b');
  expect(ids(filterRows(rows, cols, ''))).toBe('abcd');
  expect(filterRows(rows, cols, 'nope:1')).toEqual([]);
  expect(unknownFields(cols, 'nope:1 reward:0')).toEqual(['nope']);
});

test('sorting: numbers and text, empty values last both ways, stable; header clicks cycle', () => {
  expect(ids(sortRows(rows, cols, { key: 'reward', dir: 'desc' }))).toBe('abcd');
  expect(ids(sortRows(rows, cols, { key: 'reward', dir: 'asc' }))).toBe('bcad');
  expect(ids(sortRows(rows, cols, { key: 'turns', dir: 'asc' }))).toBe('dacb');
  expect(ids(sortRows(rows, cols, { key: 'status', dir: 'asc' }))).toBe('dbac');
  expect(nextSort(null, 'reward', true)).toEqual({ key: 'reward', dir: 'desc' });
  expect(nextSort({ key: 'reward', dir: 'desc' }, 'reward', true)).toEqual({ key: 'reward', dir: 'asc' });
  expect(nextSort({ key: 'reward', dir: 'asc' }, 'reward', true)).toBeNull();
  expect(nextSort(null, 'status', false)).toEqual({ key: 'status', dir: 'asc' });
});

test('bootstrap interval of a reward difference: contains the difference, deterministic, narrows with n', () => {
  const a = [0, 0, 1, 0, 1, 0];
  const b = [1, 1, 1, 0, 1, 1];
  const ci = bootstrapDiff(a, b)!;
  expect(ci.diff).toBeCloseTo(5 / 6 - 2 / 6, 10);
  expect(ci.lo).toBeLessThanOrEqual(ci.diff);
  expect(ci.hi).toBeGreaterThanOrEqual(ci.diff);
  expect(ci).toMatchObject({ nA: 6, nB: 6 });
  expect(bootstrapDiff(a, b)).toEqual(ci);
  const wide = ci.hi - ci.lo;
  const many = bootstrapDiff([...a, ...a, ...a, ...a], [...b, ...b, ...b, ...b])!;
  expect(many.hi - many.lo).toBeLessThan(wide);
  expect(bootstrapDiff([], b)).toBeNull();
  expect(bootstrapDiff([1, 1], [1, 1])).toMatchObject({ diff: 0, lo: 0, hi: 0 });
  const w = wilson(8, 10)!;
  expect(w.p).toBe(0.8);
  expect(w.lo).toBeGreaterThan(0.4);
  expect(w.hi).toBeLessThan(1);
  expect(wilson(0, 0)).toBeNull();
});

test('engine colours are stable: the same id gets the same slot whatever order the engines come in', () => {
  const known = ['sim-vllm', 'sim-sglang', 'vllm-main'];
  const slot = engineColorIndex('sim-vllm', known, 6);
  expect(engineColorIndex('sim-vllm', [...known].reverse(), 6)).toBe(slot);
  expect(engineColorIndex('sim-sglang', known, 6)).not.toBe(slot);
  expect(engineColorIndex('other', known, 6)).toBe(engineColorIndex('other', known, 6));
});

test('Δ buckets and classes: sign and size', () => {
  expect(deltaBucket(0.001)).toBe(0);
  expect(deltaBucket(-0.03)).toBe(1);
  expect(deltaBucket(0.3)).toBe(3);
  expect(deltaBucket(-2)).toBe(5);
  expect(deltaClass(0.3)).toBe('dlt dlt-3 dlt-pos');
  expect(deltaClass(-0.3)).toBe('dlt dlt-3 dlt-neg');
  expect(deltaClass(0)).toBe('dlt dlt-0');
});

test('Compare opens on a matching pair: same dataset and harness, different engines, newest first', () => {
  const b = (id: string, dataset: string, engine: string, createdAt: number, status = 'completed') =>
    ({ id, status, spec: { dataset, harness: 'builtin', engine }, createdAt, counts: { total: 1, queued: 0, running: 0, finished: 1, failed: 0, interrupted: 0, done: 1 }, meanReward: 1, passAtK: {}, error: null, startedAt: 0, finishedAt: 1 }) as BatchSummary;
  const list = [b('new-repo', 'demo:repo-fix', 'sim-vllm', 5), b('calc-s', 'demo:calculator', 'sim-sglang', 4), b('calc-v2', 'demo:calculator', 'sim-vllm', 3), b('calc-v1', 'demo:calculator', 'sim-vllm', 2)];
  expect(defaultPair(list)).toEqual(['calc-s', 'calc-v2']);
  expect(defaultPair(list, 'calc-v1')).toEqual(['calc-v1', 'calc-s']);
  expect(defaultPair(list, 'new-repo')).toEqual(['new-repo', undefined]);
});

test('timestamps always carry their date', () => {
  const t = new Date(2026, 10, 24, 7, 5, 9).getTime();
  expect(formatTime(t)).toBe('2026-11-24 07:05:09');
  expect(formatTime(Date.now())).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
  expect(formatTime(null)).toBe('—');
});
