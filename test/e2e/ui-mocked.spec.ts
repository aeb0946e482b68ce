// Renderer behaviour against a mocked control API (page.route), served by `vite preview`. Covers
// states (loading/empty/error), keyboard navigation, the inspector, the virtualized token view on a
// 200k-token prompt, themes and CSP. The real-server flow is in ui-sessions.spec.ts.
import { expect, test, type Page, type Route } from '@playwright/test';

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
    '/api/events': (route) => route.fulfill({ status: 200, contentType: 'text/event-stream', body: ': connected\n\n' }),
    '/api/engines': json({ engines }),
    '/api/sessions': json({ sessions }),
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
  await page.goto('./');
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
  await page.goto('./');
  await expect(page.getByRole('alert')).toContainText('database is locked');
  fail = false;
  await page.getByRole('button', { name: 'Retry' }).click();
  await expect(page.locator('[data-session-id]')).toHaveCount(1);
});

test('sessions list: SIMULATED badges, keyboard navigation opens the inspector', async ({ page }, info) => {
  const csp = watchCsp(page);
  await mockApi(page);
  await page.goto('./');
  const rows = page.locator('.slist [data-session-id]');
  await expect(rows.first()).toBeVisible();
  await expect(rows.first().locator('.badge-sim')).toHaveText('SIMULATED');
  await expect(page.locator('.view-head')).toContainText('5,000');
  expect(await rows.count()).toBeLessThan(80); // windowed: 5000 sessions, a screenful of rows
  await expect(rows.nth(2).locator('.badge-sim')).toHaveCount(0); // vllm-main is a real engine
  await page.screenshot({ path: info.outputPath('sessions-dark.png') });
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
  const chips = await last.locator('.tok').count();
  expect(chips).toBeGreaterThan(50);
  expect(chips).toBeLessThan(3000); // only visible rows are rendered
  await page.screenshot({ path: info.outputPath('inspector-dark.png'), fullPage: false });

  // Scroll to the output and hover an output token: the tooltip shows id, piece and logprob.
  await last.getByRole('button', { name: 'Jump to output' }).click();
  await expect(last.locator('.tok-sep')).toBeVisible();
  const out = last.locator('.tok:not(.tok-prompt)').first();
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
  await page.goto('./#/engines');
  await expect(page.locator('[data-engine-id]')).toHaveCount(3);
  await expect(page.locator('[data-engine-id="sim-vllm"] .badge-sim')).toBeVisible();
  await expect(page.locator('[data-engine-id="vllm-main"] .badge-sim')).toHaveCount(0);
  await expect(page.locator('[data-engine-id="sim-sglang"]')).toContainText('paused');
  await expect(page.locator('[data-engine-id="sim-sglang"]')).toContainText('1/2 healthy');
  await page.screenshot({ path: info.outputPath('engines.png') });
});
