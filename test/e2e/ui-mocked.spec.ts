// Renderer behaviour against a mocked control API (page.route), served by `vite preview`. Covers
// states (loading/empty/error), keyboard navigation, the inspector, the virtualized token view on a
// 200k-token prompt and a 200k-token trace (time to first paint and scroll frame times, printed),
// themes, CSP, and the error states of routes a server may lack. The real-server flows are in
// ui-sessions.spec.ts and ui-workbench.spec.ts.
import { expect, test, type Page, type Route } from '@playwright/test';
import os from 'node:os';
import { shot } from './ui-server.js';

const now = Date.UTC(2026, 10, 21, 12, 0, 0);

const engines = [
  { id: 'sim-vllm', kind: 'vllm', model: 'Qwen/Qwen3-8B', mode: 'chat', simulated: true, paused: false, replicas: [{ url: 'http://127.0.0.1:40001', healthy: true, inFlight: 2 }] },
  { id: 'sim-sglang', kind: 'sglang', model: 'Qwen/Qwen3-8B', mode: 'token', simulated: true, paused: true, replicas: [{ url: 'http://127.0.0.1:40002', healthy: true, inFlight: 0 }, { url: 'http://127.0.0.1:40003', healthy: false, inFlight: 0 }] },
  { id: 'vllm-main', kind: 'vllm', model: 'Qwen/Qwen3-8B', mode: 'chat', simulated: false, paused: false, replicas: [{ url: 'http://10.0.0.5:8000', healthy: true, inFlight: 5 }] },
];

function session(i: number, extra: Record<string, unknown> = {}) {
  return {
    id: `ses_${(0xa000 + i).toString(16)}${'0'.repeat(12)}`,
    engineId: i % 3 === 2 ? 'vllm-main' : i % 2 ? 'sim-sglang' : 'sim-vllm',
    harness: 'builtin',
    taskId: `arith-${i}`,
    batchId: i < 3 ? null : 'bat_42aa',
    status: i === 0 ? 'active' : i % 5 === 4 ? 'failed' : 'finished',
    reward: i === 0 ? null : i % 2,
    completionCount: 2,
    totalTokens: 400 + i,
    createdAt: now - i * 60_000,
    finishedAt: i === 0 ? null : now - i * 60_000 + 4200,
    ...extra,
  };
}

// Deterministic pseudo-random tokens with a small vocabulary (includes newlines and special tokens).
const vocab = ['<|im_start|>', 'user', '\n', 'What', ' is', ' 1', '7', '*', '2', '3', '?', ' Use', ' the', ' calculator', '.', '<|im_end|>', '<think>', '</think>', '\n\n', ' the', ' answer', ' 391', '{"', 'name', '":', ' "', 'calc', '"}', '\t', ' 日本', '😀'];
function tokens(n: number, seed: number) {
  let x = seed;
  const ids: number[] = [];
  const pieces: string[] = [];
  const lps: number[] = [];
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    const v = x % vocab.length;
    ids.push(v === 0 ? 151644 : v === 15 ? 151645 : 1000 + v * 37);
    pieces.push(vocab[v]);
    lps.push(-((x >> 8) % 1000) / 1000 * ((x % 7) + 0.05));
  }
  return { ids, pieces, lps };
}

function completion(seq: number, promptLen: number, outputLen: number, extra: Record<string, unknown> = {}) {
  const p = tokens(promptLen, seq * 7 + 1);
  const o = tokens(outputLen, seq * 13 + 5);
  return {
    id: `cmp_${seq}`,
    sessionId: session(1).id,
    seq,
    dialect: 'openai-chat',
    engineId: 'sim-vllm',
    replica: 'http://127.0.0.1:40001',
    policyVersion: 3,
    status: 'ok',
    error: null,
    finishReason: seq === 0 ? 'tool_calls' : 'stop',
    usage: { prompt_tokens: promptLen, completion_tokens: outputLen, total_tokens: promptLen + outputLen },
    timings: { queueMs: 0.4, ttftMs: 38, totalMs: 812 },
    requestReceived: { model: 'Qwen/Qwen3-8B', messages: [{ role: 'user', content: 'What is 17*23? Use the calculator.' }], tools: [{ type: 'function', function: { name: 'calculator', parameters: { type: 'object', properties: { expression: { type: 'string' } } } } }] },
    requestServed: { model: 'Qwen/Qwen3-8B', logprobs: true, return_token_ids: true, messages: [] },
    response: seq === 0
      ? { id: 'r0', model: 'Qwen/Qwen3-8B', created: 1, message: { role: 'assistant', content: null, reasoning: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'calculator', arguments: '{"expression":"17*23"}' } }] }, finish_reason: 'tool_calls', usage: {} }
      : { id: 'r1', model: 'Qwen/Qwen3-8B', created: 1, message: { role: 'assistant', content: '17*23 = 391', reasoning: null, tool_calls: [] }, finish_reason: 'stop', usage: {} },
    promptIds: p.ids,
    outputIds: o.ids,
    outputLogprobs: o.lps,
    promptPieces: p.pieces,
    outputPieces: o.pieces,
    retryOf: null,
    createdAt: now,
    ...extra,
  };
}

type Handler = (route: Route) => Promise<void> | void;

async function mockApi(page: Page, overrides: Record<string, Handler> = {}) {
  const json = (body: unknown, status = 200) => (route: Route) => route.fulfill({ status, contentType: 'application/json', body: JSON.stringify(body) });
  const sessions = Array.from({ length: 5000 }, (_, i) => session(i));
  const handlers: Record<string, Handler> = {
    // A fulfilled stream ends at once: tell EventSource not to reconnect (and refetch) every 3 s.
    '/api/events': (route) => route.fulfill({ status: 200, contentType: 'text/event-stream', body: 'retry: 3600000\n: connected\n\n' }),
    '/api/engines': json({ engines }),
    // Pages like the server: at most 1000 per request, with the total.
    '/api/sessions': (route) => {
      const q = new URL(route.request().url()).searchParams;
      const offset = Number(q.get('offset') ?? 0);
      const limit = Math.min(Number(q.get('limit') ?? 200), 1000);
      return json({ total: sessions.length, sessions: sessions.slice(offset, offset + limit) })(route);
    },
    [`/api/sessions/${session(1).id}`]: json(session(1)),
    [`/api/sessions/${session(1).id}/completions`]: json({ completions: [completion(0, 120, 24), completion(1, 200_000, 400)] }),
    ...overrides,
  };
  await page.route('**/api/**', async (route) => {
    const path = new URL(route.request().url()).pathname;
    const h = handlers[path];
    if (h) return h(route);
    return route.fulfill({ status: 404, contentType: 'application/json', body: JSON.stringify({ error: { message: `no mock for ${path}` } }) });
  });
}

function watchCsp(page: Page): string[] {
  const violations: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy|unsafe-eval|Refused to/i.test(m.text())) violations.push(m.text());
  });
  page.on('pageerror', (e) => violations.push(`pageerror: ${e.message}`));
  return violations;
}

test('empty state explains how to create a session', async ({ page }, info) => {
  await mockApi(page, { '/api/sessions': (r) => r.fulfill({ contentType: 'application/json', body: '{"sessions":[]}' }) });
  await page.goto('./#/sessions');
  await expect(page.getByText('No sessions yet')).toBeVisible();
  await expect(page.getByText('POST /api/sessions')).toBeVisible();
  await page.screenshot({ path: info.outputPath('empty.png') });
});

test('error state offers a retry that recovers', async ({ page }) => {
  let fail = true;
  await mockApi(page, {
    '/api/sessions': (r) =>
      fail
        ? r.fulfill({ status: 500, contentType: 'application/json', body: '{"error":{"message":"database is locked"}}' })
        : r.fulfill({ contentType: 'application/json', body: JSON.stringify({ sessions: [session(1)] }) }),
  });
  await page.goto('./#/sessions');
  await expect(page.getByRole('alert')).toContainText('database is locked');
  fail = false;
  await page.getByRole('button', { name: 'Retry' }).click();
  await expect(page.locator('[data-session-id]')).toHaveCount(1);
});

test('sessions list: SIMULATED badges, keyboard navigation opens the inspector', async ({ page }, info) => {
  const csp = watchCsp(page);
  await mockApi(page);
  await page.goto('./#/sessions');
  const rows = page.locator('.slist [data-session-id]');
  await expect(rows.first()).toBeVisible();
  await expect(rows.first().locator('.badge-sim')).toHaveText('SIMULATED');
  // The newest 1000 first, the rest on demand.
  await expect(page.getByTestId('sessions-count')).toHaveText('newest 1,000 of 5,000');
  await page.screenshot({ path: info.outputPath('sessions-dark.png') });
  // The filter searches what is loaded, and says so.
  await page.getByLabel('Filter sessions').fill('arith-99');
  await expect(page.getByTestId('sessions-count')).toHaveText('11 of 1,000 loaded (5,000 in all)');
  await page.getByLabel('Filter sessions').fill('');
  for (let loaded = 2000; loaded <= 5000; loaded += 1000) {
    await page.getByRole('button', { name: 'Load 1,000 older' }).click();
    await expect(page.getByTestId('sessions-count')).toHaveText(loaded < 5000 ? `newest ${loaded.toLocaleString('en-US')} of 5,000` : '5,000');
  }
  await expect(page.getByRole('button', { name: /older/ })).toHaveCount(0);
  expect(await rows.count()).toBeLessThan(80); // windowed: 5000 sessions, a screenful of rows
  await expect(rows.nth(2).locator('.badge-sim')).toHaveCount(0); // vllm-main is a real engine
  await page.locator('.slist').focus();
  await page.keyboard.press('ArrowDown');
  await expect(page.locator(`[data-session-id="${session(1).id}"]`)).toHaveAttribute('aria-selected', 'true');
  await page.keyboard.press('End');
  await expect(page.locator(`[data-session-id="${session(4999).id}"]`)).toHaveAttribute('aria-selected', 'true');
  await page.keyboard.press('Home');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(new RegExp(`#/sessions/${session(1).id}$`));
  await expect(page.getByRole('heading', { name: /Session/ })).toContainText(session(1).id);
  // Back to the list: the selection is kept.
  await page.getByRole('link', { name: '← Sessions' }).click();
  await expect(page.locator(`[data-session-id="${session(1).id}"]`)).toHaveAttribute('aria-selected', 'true');
  expect(csp).toEqual([]);
});

test('inspector: turns, JSON sections and a virtualized 200k-token view', async ({ page }, info) => {
  const csp = watchCsp(page);
  await mockApi(page);
  await page.goto(`./#/sessions/${session(1).id}`);
  const turns = page.locator('article.turn');
  await expect(turns).toHaveCount(2);
  await expect(turns.nth(0)).toContainText('calculator({"expression":"17*23"})');
  // The newest turn is open, with its token view.
  const last = turns.nth(1);
  await expect(last.locator('.tok-list')).toBeVisible();
  await expect(last.locator('.tokview-counts')).toContainText('200,000');
  // This server has no traces route: the inspector says so and still shows every turn.
  await expect(page.getByTestId('traces-panel')).toContainText('Traces are not available');
  const chips = await last.locator('.tok').count();
  expect(chips).toBeGreaterThan(50);
  expect(chips).toBeLessThan(3000); // only visible rows are rendered
  await page.screenshot({ path: info.outputPath('inspector-dark.png'), fullPage: false });

  // Scroll to the output and hover an output token: the tooltip shows id, piece and logprob.
  await last.getByRole('button', { name: 'Jump to output' }).click();
  await expect(last.locator('.tok-sep')).toBeVisible();
  const out = last.locator('.tok:not(.tok-prompt)').first();
  // Rows ignore the pointer while the list scrolls (the jump above): hover once it has settled.
  await expect(out.locator('xpath=ancestor::div[contains(@class, "tok-list")]')).not.toHaveClass(/vlist-scrolling/);
  await out.hover();
  const tip = page.locator('.tok-tooltip');
  await expect(tip).toContainText('output token #');
  await expect(tip).toContainText('logprob');
  await page.screenshot({ path: info.outputPath('token-hover.png') });

  // Scrolling through a 200k-token prompt stays fast: time 20 jumps with a frame between each.
  const ms = await last.locator('.tok-list').evaluate(async (el) => {
    const t0 = performance.now();
    for (let k = 0; k < 20; k++) {
      el.scrollTop = (el.scrollHeight * k) / 20;
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    }
    return (performance.now() - t0) / 20;
  });
  info.annotations.push({ type: 'scroll-ms-per-jump', description: ms.toFixed(1) });
  expect(ms).toBeLessThan(250);
  expect(await last.locator('.tok').count()).toBeLessThan(3000);

  // Raw ids mode.
  await last.getByRole('button', { name: 'Ids', exact: true }).click();
  await expect(last.locator('.tok').first()).toHaveText(/^\d+$/);
  await page.screenshot({ path: info.outputPath('token-ids.png') });

  // Request JSON is collapsible.
  await last.getByRole('button', { name: /Request as received/ }).click();
  await expect(last.locator('.json')).toContainText('"calculator"');
  await page.screenshot({ path: info.outputPath('inspector-json.png') });
  expect(csp).toEqual([]);
});

test('theme toggle is remembered across reloads', async ({ page }, info) => {
  await mockApi(page);
  await page.goto(`./#/sessions/${session(1).id}`);
  const initial = await page.evaluate(() => document.documentElement.dataset.theme);
  await page.getByRole('button', { name: /Switch to (light|dark) theme/ }).click();
  const flipped = initial === 'dark' ? 'light' : 'dark';
  await expect(page.locator('html')).toHaveAttribute('data-theme', flipped);
  await page.reload();
  await expect(page.locator('html')).toHaveAttribute('data-theme', flipped);
  await expect(page.locator('article.turn').nth(1).locator('.tok').first()).toBeVisible();
  await page.screenshot({ path: info.outputPath(`inspector-${flipped}.png`) });
});

test('engines view shows replicas, health, paused state and SIMULATED badges', async ({ page }, info) => {
  await mockApi(page);
  await page.goto('./#/engines'); // old address of the topology view
  await expect(page.locator('[data-engine-id]')).toHaveCount(3);
  await expect(page.locator('[data-engine-id="sim-vllm"] .badge-sim')).toBeVisible();
  await expect(page.locator('[data-engine-id="vllm-main"] .badge-sim')).toHaveCount(0);
  await expect(page.locator('[data-engine-id="sim-sglang"]')).toContainText('paused');
  await expect(page.locator('[data-engine-id="sim-sglang"]')).toContainText('1/2 healthy');
  await expect(page.getByTestId('topology-graph').locator('[data-engine-node]')).toHaveCount(3);
  await shot(page, info, 'topology-mocked');
});

// ---- views whose routes a server may lack, and their empty / error states ----

const json = (body: unknown, status = 200) => (route: Route) => route.fulfill({ status, contentType: 'application/json', body: JSON.stringify(body) });

test('dashboard: empty state, then an error state whose retry recovers', async ({ page }, info) => {
  await mockApi(page, { '/api/batches': json({ batches: [] }) });
  await page.goto('./');
  await expect(page.getByText('No batches yet')).toBeVisible();
  await expect(page.getByRole('link', { name: 'Launch a batch' }).first()).toBeVisible();
  await shot(page, info, 'dashboard-empty');

  let fail = true;
  await mockApi(page, {
    '/api/batches': (r) => (fail ? json({ error: { message: 'no route GET /api/batches' } }, 404)(r) : json({ batches: [] })(r)),
  });
  await page.goto('./#/compare');
  await page.goto('./');
  await expect(page.getByRole('alert')).toContainText('404 no route GET /api/batches');
  await shot(page, info, 'dashboard-error');
  fail = false;
  await page.getByRole('button', { name: 'Retry' }).click();
  await expect(page.getByText('No batches yet')).toBeVisible();
});

test('launch: a rejected spec shows the server message; compare needs two batches', async ({ page }, info) => {
  await mockApi(page, {
    '/api/harnesses': json({ harnesses: [{ name: 'builtin', description: 'small agent', kind: 'builtin', dialect: 'openai-chat', agent: null, defaultTimeoutMs: 120000 }] }),
    '/api/datasets': json({ datasets: [{ name: 'demo:calculator', tasks: 16 }] }),
    '/api/batches': (r) =>
      r.request().method() === 'POST'
        ? json({ error: { message: 'invalid dataset /nope.jsonl:\n  line 3: id: Required' } }, 400)(r)
        : json({ batches: [] })(r),
  });
  await page.goto('./#/launch');
  await page.getByRole('button', { name: 'Path on the server' }).click();
  await page.getByLabel('Dataset path').fill('/nope.jsonl');
  await page.getByRole('button', { name: '▶ Launch' }).click();
  await expect(page.getByRole('alert')).toContainText('line 3: id: Required');
  await shot(page, info, 'launch-error');
  await page.goto('./#/compare');
  await expect(page.getByText('Two batches are needed')).toBeVisible();
});

test('topology: graph, and the engine form when the server has no topology routes', async ({ page }, info) => {
  await mockApi(page, {
    '/api/engines': (r) =>
      r.request().method() === 'POST' ? json({ error: { message: 'no route POST /api/engines', type: 'not_found_error' } }, 404)(r) : json({ engines, policyVersion: 7, pause: { mode: null, queued: 0, since: null } })(r),
  });
  await page.goto('./#/topology');
  await expect(page.getByTestId('topology-graph').locator('[data-engine-node="vllm-main"]')).toContainText('REAL');
  await expect(page.getByTestId('topology-graph').locator('[data-node="gateway"]')).toContainText('policy v7');
  await page.getByRole('button', { name: '+ Add engine' }).click();
  await page.getByLabel('Engine id').fill('vllm-b');
  await page.getByLabel('Replica URLs').fill('http://10.0.0.9:8000');
  await page.getByRole('button', { name: 'Add engine', exact: true }).click();
  await expect(page.getByTestId('engine-form-error')).toContainText('no topology-editing route yet (POST /api/engines → 404)');
  await shot(page, info, 'topology-no-routes');
});

// ---- a 200k-token trace: time to first paint and scroll frame times ----

const LONG = 'ses_long0000000000';
function longSession() {
  const P0 = 150_000; // first prompt
  const OUT = 2_000; // each turn's output
  const TOOL = 46_000; // interstitial (tool result) tokens: mask 0
  const t0 = tokens(P0 + OUT + TOOL + OUT, 99);
  const ids = t0.ids;
  const pieces = t0.pieces;
  const lps = t0.lps;
  const c0 = { ...completion(0, 0, 0), id: 'cmp_l0', sessionId: LONG, promptIds: ids.slice(0, P0), promptPieces: pieces.slice(0, P0), outputIds: ids.slice(P0, P0 + OUT), outputPieces: pieces.slice(P0, P0 + OUT), outputLogprobs: lps.slice(P0, P0 + OUT) };
  const L1 = P0 + OUT + TOOL;
  const c1 = { ...completion(1, 0, 0), id: 'cmp_l1', sessionId: LONG, promptIds: ids.slice(0, L1), promptPieces: pieces.slice(0, L1), outputIds: ids.slice(L1), outputPieces: pieces.slice(L1), outputLogprobs: lps.slice(L1) };
  const R = OUT + TOOL + OUT;
  const lossMask = Array.from({ length: R }, (_, i) => (i < OUT || i >= OUT + TOOL ? 1 : 0));
  const trace = {
    id: `${LONG}/pm/cmp_l0`,
    sessionId: LONG,
    builder: 'prefix-merge',
    completionIds: ['cmp_l0', 'cmp_l1'],
    promptIds: ids.slice(0, P0),
    responseIds: ids.slice(P0),
    lossMask,
    responseLogprobs: lossMask.map((m, i) => (m ? lps[P0 + i] : 0)),
    reward: 1,
    policyVersions: [3, 3],
    breaks: [],
    proof: { ok: true, turns: [{ completionId: 'cmp_l0', promptLength: P0, outputLength: OUT }, { completionId: 'cmp_l1', promptLength: L1, outputLength: OUT }] },
    origin: { kind: 'root' },
    skipped: [],
  };
  return { c0, c1, trace, total: P0 + R };
}

test('token view: a 200k-token trace paints fast and scrolls smoothly (numbers printed)', async ({ page }, info) => {
  test.setTimeout(120_000);
  const csp = watchCsp(page);
  const long = longSession();
  expect(long.total).toBe(200_000);
  const sessionBody = JSON.stringify(session(1, { id: LONG, completionCount: 2, totalTokens: long.total + 150_000 + 2_000 }));
  const completionsBody = JSON.stringify({ completions: [long.c0, long.c1] });
  const tracesBody = JSON.stringify({ sessionId: LONG, builder: 'prefix-merge', reward: 1, traces: [long.trace], unplaced: [] });
  await mockApi(page, {
    [`/api/sessions/${LONG}`]: (r) => r.fulfill({ contentType: 'application/json', body: sessionBody }),
    [`/api/sessions/${LONG}/completions`]: (r) => r.fulfill({ contentType: 'application/json', body: completionsBody }),
    [`/api/sessions/${LONG}/traces`]: (r) => r.fulfill({ contentType: 'application/json', body: tracesBody }),
  });
  const navStart = Date.now();
  await page.goto(`./#/sessions/${LONG}`);
  const table = page.getByTestId('traces-table');
  await expect(table.locator('tbody tr')).toHaveCount(1, { timeout: 60_000 });
  await expect(page.locator('article.turn').nth(1).locator('.tok').first()).toBeVisible();
  const loadMs = Date.now() - navStart;

  // Time to first paint of the trace's token view: click → the first frame with token chips painted.
  const paint = await page.evaluate(async () => {
    const btn = document.querySelector<HTMLButtonElement>('[data-testid="traces-table"] tbody tr button')!;
    const t0 = performance.now();
    btn.click();
    const inDom = await new Promise<number>((resolve) => {
      const check = () => (document.querySelector('[data-testid="trace-tokens"] .tok') ? resolve(performance.now()) : requestAnimationFrame(check));
      check();
    });
    // The frame that holds the chips is painted once the next animation frame starts.
    const painted = await new Promise<number>((resolve) => requestAnimationFrame(() => requestAnimationFrame((t) => resolve(t))));
    return { domMs: inDom - t0, paintMs: painted - t0, chips: document.querySelectorAll('[data-testid="trace-tokens"] .tok').length };
  });
  const tv = page.getByTestId('trace-tokens');
  await expect(tv.locator('.tokview-counts')).toContainText('150,000');
  await expect(tv.locator('.tokview-counts')).toContainText('50,000');
  await expect(tv.locator('.tokview-counts')).toContainText('4,000'); // mask-1 tokens
  expect(paint.chips).toBeLessThan(3000); // windowed

  // Scroll frame times, with the pointer over the list as when scrolling with a wheel: a wheel-speed
  // scroll (160 px ≈ 8 rows per frame), a fling (900 px ≈ 45 rows: all new content every frame), and
  // 40 random jumps across the whole trace. Every frame's interval is recorded; long tasks counted.
  const box = (await tv.locator('.tok-list').boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  interface FrameStats { frames: number; mean: number; p50: number; p95: number; max: number; over33: number; longTasks: number }
  // Scrolls the list from `from` by `step` px per animation frame (`steps` frames, or random jumps
  // when step is 0) and returns the frame intervals seen by requestAnimationFrame.
  const scrollRun = (from: number, step: number, steps: number) =>
    tv.locator('.tok-list').evaluate(
      async (el, [from, step, steps]) => {
        const longTasks: number[] = [];
        const obs = new PerformanceObserver((l) => l.getEntries().forEach((e) => longTasks.push(e.duration)));
        obs.observe({ type: 'longtask', buffered: false });
        el.scrollTop = from;
        await new Promise((r) => setTimeout(r, 300)); // settle
        const frames: number[] = [];
        let seed = 7;
        await new Promise<void>((resolve) => {
          let last = -1;
          let k = 0;
          const tick = (t: number) => {
            if (last >= 0) frames.push(t - last);
            last = t;
            if (k >= steps) return resolve();
            k++;
            if (step > 0) el.scrollTop = from + k * step;
            else {
              seed = (seed * 1103515245 + 12345) & 0x7fffffff;
              el.scrollTop = (seed / 0x7fffffff) * el.scrollHeight;
            }
            requestAnimationFrame(tick);
          };
          requestAnimationFrame(tick);
        });
        obs.disconnect();
        const sorted = [...frames].sort((a, b) => a - b);
        const q = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
        return {
          frames: sorted.length,
          mean: sorted.reduce((a, b) => a + b, 0) / sorted.length,
          p50: q(0.5),
          p95: q(0.95),
          max: sorted[sorted.length - 1],
          over33: sorted.filter((x) => x > 33.4).length,
          longTasks: longTasks.length,
        } satisfies FrameStats;
      },
      [from, step, steps] as const,
    );

  // Main-thread CPU time per frame during the wheel-speed scroll, from a Chromium trace: thread time
  // (tdur) is what the page itself costs, without the waiting a shared, loaded machine adds.
  const browser = page.context().browser()!;
  await browser.startTracing(page, { categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline'] });
  const wheel = await scrollRun(0, 160, 240);
  const trace = JSON.parse((await browser.stopTracing()).toString()).traceEvents as Array<{ name: string; ph: string; dur?: number; tdur?: number; tid: number; args?: { name?: string } }>;
  const mainTid = trace.find((e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain')?.tid;
  const tasks = trace.filter((e) => e.tid === mainTid && e.ph === 'X' && e.name === 'RunTask');
  const frameCount = Math.max(1, wheel.frames);
  const cpuPerFrame = tasks.reduce((n, e) => n + (e.tdur ?? 0), 0) / 1000 / frameCount;
  const wallPerFrame = tasks.reduce((n, e) => n + (e.dur ?? 0), 0) / 1000 / frameCount;
  const fling = await scrollRun(40_000, 900, 120);
  const jumps = await scrollRun(0, 0, 40);
  const dom = await tv.locator('.tok-list').evaluate((el) => ({ scrollHeight: el.scrollHeight, chips: el.querySelectorAll('.tok').length }));
  const scroll = { wheel, fling, jumps, ...dom };
  const f = (n: number) => n.toFixed(1);
  const report = [
    `200k-token trace (150,000 prompt + 50,000 response, 4,000 mask-1), Chromium ${page.context().browser()?.version()}, headless, --disable-gpu, ${os.cpus().length} cores, load average ${os.loadavg()[0].toFixed(1)}:`,
    `  inspector load (navigation → first token chips, incl. fetching and parsing ~${Math.round((completionsBody.length + tracesBody.length) / 1e6)} MB of JSON): ${loadMs} ms`,
    `  trace token view, time to first paint: ${f(paint.paintMs)} ms (chips in the DOM after ${f(paint.domMs)} ms; ${paint.chips} chips rendered)`,
    `  wheel-speed scroll, ${scroll.wheel.frames} frames at 160 px/frame: frame time mean ${f(scroll.wheel.mean)} ms, p50 ${f(scroll.wheel.p50)}, p95 ${f(scroll.wheel.p95)}, max ${f(scroll.wheel.max)}; frames > 33 ms: ${scroll.wheel.over33}; long tasks ${scroll.wheel.longTasks}`,
    `    main-thread CPU per frame (trace thread time): ${f(cpuPerFrame)} ms (wall ${f(wallPerFrame)} ms over ${frameCount} frames)`,
    `  fling, ${scroll.fling.frames} frames at 900 px/frame (all rows new each frame): mean ${f(scroll.fling.mean)} ms, p50 ${f(scroll.fling.p50)}, p95 ${f(scroll.fling.p95)}, max ${f(scroll.fling.max)}; frames > 33 ms: ${scroll.fling.over33}; long tasks ${scroll.fling.longTasks}`,
    `  random jumps, ${scroll.jumps.frames} frames: mean ${f(scroll.jumps.mean)} ms, p95 ${f(scroll.jumps.p95)}, max ${f(scroll.jumps.max)}; frames > 33 ms: ${scroll.jumps.over33}; long tasks ${scroll.jumps.longTasks}`,
    `  scroll height ${scroll.scrollHeight.toLocaleString('en-US')} px; ${scroll.chips} chips in the DOM (windowed)`,
  ].join('\n');
  console.log(report);
  info.annotations.push({ type: '200k-token trace', description: report });
  // Frame times are printed, not asserted (timings belong to benchmarks; CI machines are shared).
  // What is asserted is the structure that keeps it fast: the view stays windowed while it scrolls.
  expect(scroll.chips).toBeLessThan(3000);
  await tv.getByRole('button', { name: 'Jump to response' }).click();
  await expect(tv.locator('.tok-m0').first()).toBeVisible();
  await shot(page, info, 'trace-200k');
  expect(csp).toEqual([]);
});
