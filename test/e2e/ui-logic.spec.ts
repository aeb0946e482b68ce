// Pure logic behind the UI and the desktop shell (no browser page needed): token row layout,
// logprob buckets, routing, window-state handling and the window security policy.
import { expect, test } from '@playwright/test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CSP, isAllowedPermission, isAppUrl, isSafeExternalUrl, withCsp } from '../../src-main/electron/policy.js';
import {
  DEFAULT_WINDOW_STATE,
  fitToDisplays,
  readWindowState,
  sanitizeWindowState,
  writeWindowState,
} from '../../src-main/electron/window-state.js';
import { logprobBucket, logprobStats } from '../../src-renderer/lib/logprob.js';
import type { Completion, Trace } from '../../src-renderer/backend/types.js';
import { diffSequences, sideBySide, splitWords } from '../../src-renderer/lib/diff.js';
import { jsonLines } from '../../src-renderer/lib/jsonLines.js';
import { rewardBuckets, rewardDistribution } from '../../src-renderer/lib/rewards.js';
import { parseRoute, routeHref } from '../../src-renderer/lib/router.js';
import { completionOverlay, traceTokens } from '../../src-renderer/lib/traceOverlay.js';
import {
  displayPiece,
  layoutTokens,
  rowEnd,
  rowOfToken,
  ROW_KIND_OUTPUT,
  ROW_KIND_PROMPT,
  ROW_KIND_SEPARATOR,
} from '../../src-renderer/lib/tokenLayout.js';

test.describe('token layout', () => {
  test('fixed-width cells fill rows; prompt and output never share a row', () => {
    const l = layoutTokens({ promptCount: 10, outputCount: 5, width: 40, cellWidth: () => 10 });
    // 4 per row: prompt rows [0,4) [4,8) [8,10), separator, output rows [10,14) [14,15)
    expect(Array.from(l.rowKind)).toEqual([ROW_KIND_PROMPT, ROW_KIND_PROMPT, ROW_KIND_PROMPT, ROW_KIND_SEPARATOR, ROW_KIND_OUTPUT, ROW_KIND_OUTPUT]);
    expect(Array.from(l.rowStart)).toEqual([0, 4, 8, 10, 10, 14, 15]);
    expect(l.separatorRow).toBe(3);
    expect(rowEnd(l, 2)).toBe(10);
    expect(rowEnd(l, 3)).toBe(10); // separator is empty
    expect(rowOfToken(l, 9)).toBe(2);
    expect(rowOfToken(l, 10)).toBe(4);
    expect(rowOfToken(l, 14)).toBe(5);
  });

  test('every token is in exactly one row, in order, for variable widths and line breaks', () => {
    const widths = Array.from({ length: 1000 }, (_, i) => 5 + ((i * 37) % 60));
    const l = layoutTokens({
      promptCount: 700,
      outputCount: 300,
      width: 200,
      cellWidth: (i) => widths[i],
      breakAfter: (i) => i % 50 === 49,
    });
    let next = 0;
    for (let r = 0; r < l.rowCount; r++) {
      if (l.rowKind[r] === ROW_KIND_SEPARATOR) continue;
      expect(l.rowStart[r]).toBe(next);
      let w = 0;
      for (let i = l.rowStart[r]; i < rowEnd(l, r); i++) w += widths[i];
      if (rowEnd(l, r) - l.rowStart[r] > 1) expect(w).toBeLessThanOrEqual(200);
      next = rowEnd(l, r);
    }
    expect(next).toBe(1000);
  });

  test('a token wider than the row gets a row of its own', () => {
    const l = layoutTokens({ promptCount: 3, outputCount: 0, width: 50, cellWidth: (i) => (i === 1 ? 500 : 10) });
    expect(Array.from(l.rowStart.slice(0, 3))).toEqual([0, 1, 2]);
  });

  test('200k tokens lay out quickly', () => {
    const t0 = performance.now();
    const l = layoutTokens({ promptCount: 200_000, outputCount: 4000, width: 1200, cellWidth: (i) => 20 + (i % 40) });
    expect(l.rowCount).toBeGreaterThan(1000);
    expect(performance.now() - t0).toBeLessThan(500);
  });

  test('pieces are made visible', () => {
    expect(displayPiece('\n')).toBe('↵');
    expect(displayPiece('a\tb\r\n')).toBe('a⇥b↵');
    expect(displayPiece('')).toBe('∅');
    expect(displayPiece(' the')).toBe(' the');
  });
});

test('logprob buckets and stats', () => {
  expect(logprobBucket(0)).toBe(0);
  expect(logprobBucket(Math.log(0.95))).toBe(0);
  expect(logprobBucket(Math.log(0.6))).toBe(1);
  expect(logprobBucket(Math.log(0.3))).toBe(2);
  expect(logprobBucket(Math.log(0.1))).toBe(3);
  expect(logprobBucket(Math.log(0.02))).toBe(4);
  expect(logprobBucket(-50)).toBe(5);
  expect(logprobBucket(-Infinity)).toBe(5);
  expect(logprobBucket(undefined)).toBe(-1);
  expect(logprobBucket(NaN)).toBe(-1);
  const s = logprobStats([-0.1, -2, -0.5]);
  expect(s.minIndex).toBe(1);
  expect(s.mean).toBeCloseTo(-0.8667, 3);
});

test('routes round-trip', () => {
  expect(parseRoute('')).toEqual({ view: 'dashboard' });
  expect(parseRoute('#/engines')).toEqual({ view: 'topology' });
  expect(parseRoute('#/topology')).toEqual({ view: 'topology' });
  expect(parseRoute('#/sessions')).toEqual({ view: 'sessions' });
  expect(parseRoute('#/sessions/ses_abc')).toEqual({ view: 'session', id: 'ses_abc' });
  expect(parseRoute(routeHref({ view: 'session', id: 'a/b c' }))).toEqual({ view: 'session', id: 'a/b c' });
  expect(parseRoute('#/batches/bat_1/tasks/calc-add-1')).toEqual({ view: 'batch', id: 'bat_1', taskId: 'calc-add-1' });
  expect(parseRoute(routeHref({ view: 'compare', a: 'bat_a', b: 'bat_b', task: 't 1' }))).toEqual({ view: 'compare', a: 'bat_a', b: 'bat_b', task: 't 1' });
  expect(parseRoute('#/export?batch=bat_x')).toEqual({ view: 'export', batch: 'bat_x' });
  expect(parseRoute('#/manual/ses_1')).toEqual({ view: 'manual', id: 'ses_1' });
  expect(parseRoute('#/nope')).toEqual({ view: 'dashboard' });
});

test.describe('desktop shell policy', () => {
  test('only the app origin counts as the app', () => {
    const o = 'http://127.0.0.1:8321';
    expect(isAppUrl('http://127.0.0.1:8321/#/engines', o)).toBe(true);
    expect(isAppUrl('http://127.0.0.1:8322/', o)).toBe(false);
    expect(isAppUrl('http://localhost:8321/', o)).toBe(false);
    expect(isAppUrl('https://127.0.0.1:8321/', o)).toBe(false);
    expect(isAppUrl('file:///etc/passwd', o)).toBe(false);
    expect(isAppUrl('not a url', o)).toBe(false);
  });

  test('external links: http(s) only', () => {
    expect(isSafeExternalUrl('https://docs.vllm.ai/')).toBe(true);
    expect(isSafeExternalUrl('file:///etc/passwd')).toBe(false);
    expect(isSafeExternalUrl('javascript:alert(1)')).toBe(false);
    expect(isSafeExternalUrl('smb://host/share')).toBe(false);
  });

  test('CSP replaces whatever the server sent and forbids inline code and eval', () => {
    const h = withCsp({ 'content-security-policy': ["default-src *"], 'Content-Type': 'text/html' });
    expect(h['Content-Security-Policy']).toEqual([CSP]);
    expect(h['content-security-policy']).toBeUndefined();
    expect(h['Content-Type']).toEqual(['text/html']);
    expect(CSP).not.toMatch(/unsafe-(inline|eval)/);
    expect(CSP).toContain("object-src 'none'");
  });

  test('permissions: clipboard writes and the save dialog only', () => {
    expect(isAllowedPermission('clipboard-sanitized-write')).toBe(true);
    expect(isAllowedPermission('fileSystem')).toBe(true);
    for (const p of ['media', 'geolocation', 'notifications', 'openExternal', 'clipboard-read']) expect(isAllowedPermission(p)).toBe(false);
  });
});

test.describe('window state', () => {
  test('sanitizes junk and enforces a minimum size', () => {
    expect(sanitizeWindowState(null)).toEqual(DEFAULT_WINDOW_STATE);
    expect(sanitizeWindowState({ bounds: { width: 'x' } })).toEqual(DEFAULT_WINDOW_STATE);
    expect(sanitizeWindowState({ bounds: { x: 5.4, y: 6, width: 100, height: 100 }, maximized: true })).toEqual({
      bounds: { x: 5, y: 6, width: 900, height: 600 },
      maximized: true,
    });
    expect(sanitizeWindowState({ bounds: { width: 1000, height: 700, x: null } })).toEqual({
      bounds: { width: 1000, height: 700 },
      maximized: false,
    });
  });

  test('drops a position that is off every display', () => {
    const displays = [{ x: 0, y: 0, width: 1920, height: 1080 }];
    const on = { bounds: { x: 100, y: 100, width: 1000, height: 700 }, maximized: false };
    const off = { bounds: { x: 3000, y: 100, width: 1000, height: 700 }, maximized: false };
    expect(fitToDisplays(on, displays)).toEqual(on);
    expect(fitToDisplays(off, displays)).toEqual({ bounds: { width: 1000, height: 700 }, maximized: false });
  });

  test('round-trips through a file, and survives a corrupt one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rollgate-ws-'));
    try {
      const file = join(dir, 'nested', 'window-state.json');
      expect(readWindowState(file)).toEqual(DEFAULT_WINDOW_STATE);
      const state = { bounds: { x: 10, y: 20, width: 1200, height: 800 }, maximized: false };
      writeWindowState(file, state);
      expect(readWindowState(file)).toEqual(state);
      writeFileSync(file, '{not json');
      expect(readWindowState(file)).toEqual(DEFAULT_WINDOW_STATE);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

test.describe('diff', () => {
  const applied = (a: string, b: string) => {
    const r = diffSequences(a.split(''), b.split(''));
    return {
      a: r.hunks.filter((h) => h.op !== 'insert').flatMap((h) => h.items).join(''),
      b: r.hunks.filter((h) => h.op !== 'delete').flatMap((h) => h.items).join(''),
      edits: r.deleted + r.inserted,
    };
  };
  test('reconstructs both sides with a minimal edit count', () => {
    expect(applied('abcabba', 'cbabac')).toEqual({ a: 'abcabba', b: 'cbabac', edits: 5 });
    expect(applied('', 'xyz').edits).toBe(3);
    expect(applied('same', 'same').edits).toBe(0);
    let x = 11;
    const rnd = () => ((x = (x * 1103515245 + 12345) & 0x7fffffff), x);
    for (let t = 0; t < 300; t++) {
      const g = () => Array.from({ length: rnd() % 14 }, () => 'abc'[rnd() % 3]).join('');
      const [a, b] = [g(), g()];
      const r = applied(a, b);
      expect([r.a, r.b]).toEqual([a, b]);
    }
  });
  test('unrelated long inputs fall back to one replacement, quickly', () => {
    const a = Array.from({ length: 20_000 }, (_, i) => `a${i}`);
    const b = Array.from({ length: 20_000 }, (_, i) => `b${i}`);
    const t0 = performance.now();
    const r = diffSequences(a, b, { maxD: 500 });
    expect(r.approximate).toBe(true);
    expect(r.deleted + r.inserted).toBe(40_000);
    expect(performance.now() - t0).toBeLessThan(2000);
  });
  test('side by side pairs changes and folds unchanged runs', () => {
    const { rows } = sideBySide(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'], ['a', 'b', 'X', 'd', 'e', 'f', 'g', 'h', 'i'], { context: 1 });
    expect(rows.map((r) => r.kind)).toEqual(['equal', 'equal', 'change', 'equal', 'fold', 'equal', 'change']);
    expect(rows[2]).toMatchObject({ left: { n: 3, text: 'c' }, right: { n: 3, text: 'X' } });
    expect(rows[6]).toMatchObject({ left: null, right: { n: 9, text: 'i' } });
    expect(splitWords('The answer is 42.').join('')).toBe('The answer is 42.');
  });
  test('json lines pack token arrays', () => {
    const lines = jsonLines({ input_ids: Array.from({ length: 45 }, (_, i) => i), sampling_params: { max_new_tokens: 8 } });
    expect(lines[0]).toBe('{');
    expect(lines[1]).toContain('"input_ids": [  // 45 items');
    expect(lines.length).toBe(10); // {, ids [, 3 packed lines, ], sampling {, max, }, }
  });
});

test('reward buckets: values for 0/1 rewards, bins otherwise', () => {
  expect(rewardBuckets([0, 1, 1]).map((b) => b.label)).toEqual(['reward 0', 'reward 1']);
  expect(rewardBuckets([0, 0.1, 0.2, 0.3, 0.5, 0.9, 1]).length).toBe(5);
  const { rows } = rewardDistribution([
    { taskId: 't', groupId: 'g', scored: 2, meanReward: 0.5, rewards: [0, 1, null], passAtK: {}, samples: [] },
  ]);
  expect(rows[0]).toMatchObject({ taskId: 't', pending: 1, v0: 1, v1: 1 });
});

test('loss-mask overlay: a merged trace marks earlier samples 1, tool results 0, the first prompt context', () => {
  // full = prompt(3) ++ out0(2, mask 1) ++ tool(2, mask 0) ++ out1(2, mask 1)
  const trace = {
    id: 's/pm/c0', sessionId: 's', builder: 'prefix-merge', completionIds: ['c0', 'c1'],
    promptIds: [1, 2, 3], responseIds: [10, 11, 20, 21, 30, 31], lossMask: [1, 1, 0, 0, 1, 1],
    responseLogprobs: [-0.1, -0.2, 0, 0, -0.3, -0.4], reward: 1, policyVersions: [0, 0],
    breaks: [{ reason: 'prompt-diverged', atCompletionId: 'c2', tokenIndex: 8 }],
    proof: { ok: true, turns: [{ completionId: 'c0', promptLength: 3, outputLength: 2 }, { completionId: 'c1', promptLength: 7, outputLength: 2 }] },
  } as Trace;
  const c1 = { id: 'c1', promptIds: [1, 2, 3, 10, 11, 20, 21], outputIds: [30, 31], outputLogprobs: [-0.3, -0.4] } as Completion;
  const o = completionOverlay([trace], c1)!;
  expect(Array.from(o.mask)).toEqual([-1, -1, -1, 1, 1, 0, 0, 1, 1]);
  expect(o.logprobAt(3)).toBe(-0.1);
  expect(o.turn).toBe(1);
  expect(o.markers.get(3)?.kind).toBe('turn');
  const t = traceTokens(trace, new Map());
  expect(Array.from(t.mask)).toEqual([-1, -1, -1, 1, 1, 0, 0, 1, 1]);
  expect(t.markers.get(7)?.kind).toBe('turn');
  expect(t.markers.get(8)?.kind).toBe('break');
  expect(completionOverlay([trace], { ...c1, id: 'other' })).toBeNull();
});
