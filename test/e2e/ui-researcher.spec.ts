// Issue 16: the workbench answers a researcher's questions at a glance, against a real `rollgate serve`
// (embedded sim engines, fresh data dir) in Debian's Chromium. Three batches run first over the API:
// demo:calculator on sim-vllm and on sim-sglang, and demo:repo-fix on sim-vllm. Each researcher task is
// counted in real (trusted) clicks from the dashboard. Screenshots land in test-results/ui/.
import { expect, test, type Page } from '@playwright/test';
import { apiClient, setTheme, shot, startServer, watchPage, type TestServer } from './ui-server.js';

let server: TestServer;
const api = apiClient(() => server.baseUrl);
const ids: { calcV?: string; calcS?: string; repo?: string; dropped?: string } = {};
const MODEL = 'Qwen/Qwen3-8B';
const calculator = {
  type: 'function',
  function: { name: 'calculator', description: 'Evaluate an arithmetic expression', parameters: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] } },
};

/**
 * An agent that drops the model's reasoning from its history (as many clients do): two turns on
 * sim-vllm in chat mode, the second sent without the first answer's `reasoning`. Its chain breaks.
 */
async function reasoningDroppingSession(): Promise<string> {
  const s = await api<{ id: string; urls: { openai: string } }>('/api/sessions', { method: 'POST', body: JSON.stringify({ engine: 'sim-vllm', harness: 'drops-reasoning' }) });
  const call = async (messages: unknown[]) => {
    const res = await fetch(`${s.urls.openai}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, messages, tools: [calculator] }) });
    expect(res.status).toBe(200);
    return ((await res.json()) as { choices: Array<{ message: { content: string | null; reasoning?: string; reasoning_content?: string; tool_calls?: Array<{ id: string }> } }> }).choices[0].message;
  };
  const user = { role: 'user', content: 'What is 17*23? Use the calculator.' };
  const first = await call([user]);
  expect(first.reasoning).toBeTruthy();
  const { reasoning: _dropped, reasoning_content: _alsoDropped, ...kept } = first;
  await call([user, { ...kept, role: 'assistant' }, { role: 'tool', tool_call_id: first.tool_calls?.[0]?.id ?? 'call_0', content: '391' }]);
  await api(`/api/sessions/${s.id}/finish`, { method: 'POST', body: JSON.stringify({ reward: 1 }) });
  return s.id;
}

interface BatchJson { id: string; status: string; meanReward: number | null; tasks: Array<{ taskId: string; meanReward: number | null; samples: Array<{ sessionId: string; reward: number | null; completionCount: number }> }> }

test.describe.configure({ mode: 'serial' });

async function submit(body: Record<string, unknown>): Promise<string> {
  const { id } = await api<{ id: string }>('/api/batches', { method: 'POST', body: JSON.stringify(body) });
  return id;
}

async function waitEnded(id: string): Promise<BatchJson> {
  for (let i = 0; i < 600; i++) {
    const b = await api<BatchJson>(`/api/batches/${id}`);
    if (!['queued', 'running'].includes(b.status)) return b;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`batch ${id} did not end in 300 s`);
}

test.beforeAll(async () => {
  test.setTimeout(360_000);
  server = await startServer();
  ids.repo = await submit({ dataset: 'demo:repo-fix', harness: 'builtin', engine: 'sim-vllm', n: 2, concurrency: 8, name: 'repo-fix · vllm' });
  ids.calcV = await submit({ dataset: 'demo:calculator', harness: 'builtin', engine: 'sim-vllm', n: 3, concurrency: 12, name: 'calc · vllm' });
  await waitEnded(ids.repo);
  ids.calcS = await submit({ dataset: 'demo:calculator', harness: 'builtin', engine: 'sim-sglang', n: 3, concurrency: 12, name: 'calc · sglang' });
  for (const id of [ids.calcV, ids.calcS]) await waitEnded(id);
  ids.dropped = await reasoningDroppingSession();
});
test.afterAll(async () => server?.stop());

/** Counts the researcher's real clicks (trusted events) since the page was loaded. */
async function countClicks(page: Page): Promise<() => Promise<number>> {
  await page.addInitScript(() => {
    const w = window as unknown as { __clicks: number };
    w.__clicks = 0;
    window.addEventListener('click', (e) => { if (e.isTrusted) w.__clicks++; }, true);
  });
  return () => page.evaluate(() => (window as unknown as { __clicks: number }).__clicks);
}

test('find the worst task of a batch and its evaluator output: ≤ 3 clicks from the dashboard', async ({ page }, info) => {
  const problems = watchPage(page);
  const clicks = await countClicks(page);
  await page.goto(`${server.baseUrl}/#/`);
  const batches = page.getByTestId('batches-table');
  await expect(batches.locator(`[data-batch-id="${ids.repo}"]`)).toBeVisible();
  // Trace health is there without asking: break rate and masked fraction per batch.
  await expect(batches.locator(`[data-batch-id="${ids.calcV}"] [data-cell="breaks"]`)).toHaveText(/%/);
  await expect(batches.locator(`[data-batch-id="${ids.calcV}"] [data-cell="masked"]`)).toHaveText(/%/);
  // …and per engine, with reasons (custody's capture health).
  const capture = page.getByTestId('capture-health');
  for (const e of ['sim-vllm', 'sim-sglang']) await expect(capture.locator(`[data-engine="${e}"] [data-cell="masked-fraction"]`)).toHaveText(/%/, { timeout: 30_000 });
  await shot(page, info, 'dashboard');

  // 1: select the repo-fix batch; its tasks show worst first.
  await batches.locator(`[data-batch-id="${ids.repo}"] td`).nth(1).click();
  const tasks = page.getByTestId('tasks-table');
  await expect(tasks.locator('tbody tr')).toHaveCount(4);
  await expect(tasks.locator('th[data-col="reward"]')).toHaveAttribute('aria-sort', 'ascending');
  const repo = await api<BatchJson>(`/api/batches/${ids.repo}`);
  const worst = Math.min(...repo.tasks.map((t) => t.meanReward ?? 1));
  const firstReward = Number(await tasks.locator('tbody tr').first().locator('td').nth(3).innerText());
  expect(firstReward).toBe(worst);
  // 2: open the worst task: its sessions with the evaluator's verdict and output inline.
  await tasks.locator('tbody tr').first().locator('td a').click();
  await expect(page).toHaveURL(/#\/batches\/bat_[^/]+\/tasks\//);
  const verdicts = page.getByTestId('batch-sessions').locator('[data-cell="verdict"]');
  await expect(verdicts.first()).toHaveText(/command: (pass|fail)/);
  await shot(page, info, 'worst-task-verdicts');
  // 3: the session: verdict in words (a reward-0 session never reads "ok") and the evaluator output.
  await page.getByTestId('batch-sessions').locator('tbody tr').first().locator('td a').click();
  await expect(page.getByTestId('verdict-text')).toHaveText(/^(PASS|FAIL|PARTIAL) · reward/);
  await expect(page.getByTestId('evaluator-output')).not.toBeEmpty();
  const n = await clicks();
  info.annotations.push({ type: 'clicks: worst task + evaluator output', description: String(n) });
  expect(n).toBeLessThanOrEqual(3);
  await shot(page, info, 'worst-session-verdict');
  expect(problems).toEqual([]);
});

test('see what diverged at a chain break: ≤ 3 clicks from the dashboard', async ({ page }, info) => {
  const problems = watchPage(page);
  const clicks = await countClicks(page);
  await page.goto(`${server.baseUrl}/#/`);
  await expect(page.getByTestId('batches-table').locator('tbody tr')).toHaveCount(3);
  // 1: Sessions; 2: only those with chain breaks (the agent that drops its reasoning).
  await page.getByRole('link', { name: 'Sessions' }).click();
  await page.getByRole('button', { name: 'breaks:>0', exact: true }).click();
  const rows = page.locator('.slist .srow');
  await expect(rows.first()).toBeVisible();
  for (const b of await page.locator('.slist [data-cell="breaks"]').allInnerTexts()) expect(Number(b)).toBeGreaterThan(0);
  await expect(page.locator(`.slist [data-session-id="${ids.dropped}"]`)).toBeVisible();
  await shot(page, info, 'sessions-with-breaks');
  // 3: the session: its first break is open, both token runs side by side from the divergence index.
  await page.locator(`.slist [data-session-id="${ids.dropped}"]`).click();
  const div = page.getByTestId('divergence');
  await expect(div).toBeVisible();
  await expect(div.locator('[aria-label="trace tokens from the divergence"] .tok').first()).toBeVisible();
  await expect(div.locator('[aria-label="next prompt tokens from the divergence"] .tok').first()).toBeVisible();
  await expect(div.locator('.tok-del, .tok-ins').first()).toBeVisible();
  await expect(div.getByTestId('reasoning-dropped')).toBeVisible(); // the why, in words
  // Every split has a reason on both sides: the trace that goes on says which break it continues.
  await expect(page.getByTestId('traces-table').locator('[data-continues]').first()).toContainText(/continues #\d+ after/);
  const n = await clicks();
  info.annotations.push({ type: 'clicks: what diverged at a chain break', description: String(n) });
  expect(n).toBeLessThanOrEqual(3);
  await shot(page, info, 'chain-break-divergence');
  expect(problems).toEqual([]);
});

test('per-token Δlogprob of a trace between two engines: ≤ 4 clicks; kept, reopened, exported', async ({ page }, info) => {
  test.setTimeout(180_000);
  const problems = watchPage(page);
  const clicks = await countClicks(page);
  await page.goto(`${server.baseUrl}/#/`);
  await expect(page.getByTestId('batches-table').locator('tbody tr')).toHaveCount(3);
  // 1: Compare opens on the matching pair: same dataset and harness, different engines, newest first.
  await page.getByRole('link', { name: 'Compare' }).click();
  await expect(page.getByLabel('Batch A')).toHaveValue(ids.calcS!);
  await expect(page.getByLabel('Batch B')).toHaveValue(ids.calcV!);
  // Per-task reward differences with their bootstrap intervals and sample counts.
  const ci = page.getByTestId('compare-tasks').locator('[data-cell="ci"]');
  await expect(ci.first()).toHaveText(/^\[[+-]?\d\.\d\d, [+-]?\d\.\d\d\]/);
  await expect(page.getByTestId('compare-tasks').locator('tbody tr').first()).toContainText('3 / 3');
  await shot(page, info, 'compare-pair-ci');
  // 2: re-score A's traces (sampled on sim-sglang) on sim-vllm.
  await page.getByTestId('rescore').getByRole('button', { name: /Re-score A's traces/ }).click();
  await expect(page.getByTestId('rescore-summary')).toBeVisible({ timeout: 120_000 });
  // 3: the trace with the largest mean |Δ|: its tokens coloured by Δ, sortable by |Δ|.
  await page.getByTestId('rescore-worst').locator('tbody tr').first().locator('button').click();
  const dt = page.getByTestId('delta-tokens');
  await expect(dt.locator('.dlt').first()).toBeVisible();
  const n = await clicks();
  info.annotations.push({ type: 'clicks: per-token Δlogprob between two engines', description: String(n) });
  expect(n).toBeLessThanOrEqual(4);
  const abs = (await page.getByTestId('delta-table').locator('tbody tr td:nth-child(6)').allInnerTexts()).map(Number);
  expect(abs.length).toBeGreaterThan(5);
  for (let i = 1; i < abs.length; i++) expect(abs[i]).toBeLessThanOrEqual(abs[i - 1]);
  await expect(page.getByTestId('delta-table').locator('th[data-col="abs"]')).toHaveAttribute('aria-sort', 'descending');
  await shot(page, info, 'compare-delta-tokens');

  // Kept: the export link serves JSONL; after a reload the result is reopened without re-scoring.
  const href = await page.getByTestId('rescore-export').getAttribute('href');
  const lines = (await (await fetch(`${server.baseUrl}${href}`)).text()).split('\n').filter(Boolean);
  expect(lines.length).toBeGreaterThan(10);
  expect(JSON.parse(lines[0])).toMatchObject({ rescore_engine: 'sim-vllm', source_engine: 'sim-sglang' });
  await page.reload();
  await expect(page.getByTestId('kept-rescores').locator('[data-rescore-id]')).toHaveCount(1);
  await expect(page.getByTestId('rescore-summary')).toBeVisible();

  // The same in the session inspector: the batch re-scoring covers this session's traces.
  const { rescores } = await api<{ rescores: Array<{ id: string }> }>(`/api/rescores?batch=${ids.calcS}`);
  const worstSession = (await api<{ traces: Array<{ sessionId: string; summary: { meanAbsDelta: number } | null }> }>(`/api/rescores/${rescores[0].id}`)).traces
    .filter((t) => t.summary).sort((x, y) => y.summary!.meanAbsDelta - x.summary!.meanAbsDelta)[0].sessionId;
  await page.goto(`${server.baseUrl}/#/sessions/${worstSession}`);
  await page.getByRole('tab', { name: 'Engine Δ per token' }).click();
  await expect(page.getByTestId('engine-delta').getByTestId('delta-tokens').locator('.dlt').first()).toBeVisible();
  await shot(page, info, 'inspector-delta-tokens');
  await setTheme(page, 'light');
  await shot(page, info, 'inspector-delta-tokens-light');
  await setTheme(page, 'dark');
  expect(problems).toEqual([]);
});

test('compare refuses pairs of different datasets', async ({ page }, info) => {
  const problems = watchPage(page);
  await page.goto(`${server.baseUrl}/#/compare?a=${ids.repo}&b=${ids.calcV}`);
  await expect(page.getByTestId('pair-refused')).toContainText('demo:repo-fix');
  await expect(page.getByTestId('compare-tasks')).toHaveCount(0);
  await expect(page.getByTestId('chart-scatter')).toHaveCount(0);
  await shot(page, info, 'compare-refused');
  expect(problems).toEqual([]);
});

test('tables sort and filter everywhere; reward:0 and status:failed presets', async ({ page }, info) => {
  const problems = watchPage(page);
  await page.goto(`${server.baseUrl}/#/batches/${ids.calcV}`);
  const table = page.getByTestId('batch-sessions');
  await expect(table.locator('tbody tr')).toHaveCount(48);
  // Sort by reward (descending first), then ascending.
  await table.locator('th[data-col="reward"] button').click();
  await expect(table.locator('th[data-col="reward"]')).toHaveAttribute('aria-sort', 'descending');
  const desc = (await table.locator('tbody tr td:nth-child(5)').allInnerTexts()).map(Number);
  expect([...desc].sort((a, b) => b - a)).toEqual(desc);
  await table.locator('th[data-col="turns"] button').click();
  const turns = (await table.locator('tbody tr td:nth-child(7)').allInnerTexts()).map(Number);
  expect([...turns].sort((a, b) => b - a)).toEqual(turns);
  // reward:0 preset: only reward-0 rows, and the URL keeps the filter.
  await page.getByRole('button', { name: 'reward:0', exact: true }).click();
  await expect(page).toHaveURL(/q=reward%3A0/);
  const rewards = await table.locator('tbody tr td:nth-child(5)').allInnerTexts();
  for (const r of rewards) expect(Number(r)).toBe(0);
  await page.getByRole('button', { name: 'status:failed', exact: true }).click();
  for (const s of await table.locator('tbody tr [data-status]').allInnerTexts()) expect(s).toBe('failed');
  // A typed query: numbers compare, words search.
  await page.getByLabel('Filter sessions').fill('turns:>=3 calc-');
  for (const t of await table.locator('tbody tr td:nth-child(7)').allInnerTexts()) expect(Number(t)).toBeGreaterThanOrEqual(3);
  await page.getByLabel('Filter sessions').fill('nosuchfield:1');
  await expect(page.getByText('unknown field nosuchfield')).toBeVisible();
  await page.getByLabel('Filter sessions').fill('');
  await shot(page, info, 'batch-sessions-sorted');

  // The sessions list: break and masked columns, sortable, same query language.
  await page.goto(`${server.baseUrl}/#/sessions`);
  const list = page.locator('.slist');
  await expect(list.locator('[data-cell="breaks"]').first()).not.toHaveText('…');
  await page.locator('.shead [data-col="breaks"] button').click();
  await expect(page.locator('.shead [data-col="breaks"]')).toHaveAttribute('aria-sort', 'descending');
  const firstBreaks = Number(await list.locator('[data-cell="breaks"]').first().innerText());
  expect(firstBreaks).toBeGreaterThan(0);
  await page.getByLabel('Filter sessions').fill('breaks:0 engine:sglang');
  for (const b of await list.locator('[data-cell="breaks"]').allInnerTexts()) expect(Number(b)).toBe(0);
  await shot(page, info, 'sessions-breaks-masked');
  expect(problems).toEqual([]);
});

test('transcript: messages as the agent saw them, reasoning collapsed, tool calls with arguments', async ({ page }, info) => {
  const problems = watchPage(page);
  const b = await api<BatchJson>(`/api/batches/${ids.calcS}`);
  const s = b.tasks.flatMap((t) => t.samples).find((x) => x.completionCount >= 2)!;
  await page.goto(`${server.baseUrl}/#/sessions/${s.sessionId}`);
  // Turns are numbered from 1 everywhere.
  await expect(page.locator('article.turn').first().locator('.turn-seq')).toHaveText('Turn 1');
  await page.getByRole('tab', { name: 'Transcript' }).click();
  const t = page.getByTestId('transcript');
  await expect(t.locator('[data-role="user"]').first()).toBeVisible();
  await expect(t.locator('[data-role="tool"]').first()).toBeVisible();
  await expect(t.locator('[data-role="assistant"]').last()).toBeVisible();
  const call = t.locator('.msg-call[data-tool="calculator"]').first();
  await expect(call).toContainText('expression');
  const reasoning = t.locator('details.msg-reasoning').first();
  await expect(reasoning).not.toHaveAttribute('open');
  await shot(page, info, 'transcript');
  await reasoning.locator('summary').click();
  await expect(reasoning).toHaveAttribute('open', '');
  expect(problems).toEqual([]);
});

test('header strip on every page: paused with mode, since and queued calls; policy; unhealthy engines; a held batch says so', async ({ page }, info) => {
  test.setTimeout(120_000);
  const problems = watchPage(page);
  await page.goto(`${server.baseUrl}/#/`);
  const strip = page.getByTestId('status-strip');
  await expect(strip.locator('[data-strip="pause"]')).toContainText('serving');
  await expect(strip.locator('[data-strip="policy"]')).toContainText('v0');
  await api('/api/policy-version', { method: 'POST', body: JSON.stringify({ version: 7 }) });
  await expect(strip.locator('[data-strip="policy"]')).toContainText('v7');
  // Pause (queue), then start a batch: it is held, and says so.
  await api('/api/engines/pause', { method: 'POST', body: JSON.stringify({ mode: 'queue', timeoutMs: 600_000 }) });
  await expect(strip.locator('[data-strip="pause"]')).toContainText(/PAUSED · queue · since \d{4}-\d\d-\d\d/);
  const held = await submit({ dataset: 'demo:calculator', harness: 'builtin', engine: 'sim-vllm', n: 1, concurrency: 2, name: 'held by pause' });
  await page.goto(`${server.baseUrl}/#/batches/${held}`);
  await expect(page.getByTestId('held-by-pause')).toBeVisible();
  await expect(strip.locator('[data-strip="pause"]')).toContainText(/[1-9]\d* queued/, { timeout: 30_000 });
  await shot(page, info, 'held-by-pause');
  for (const view of ['#/sessions', '#/compare', '#/export', '#/topology', '#/launch', '#/manual']) {
    await page.goto(`${server.baseUrl}/${view}`);
    await expect(strip.locator('[data-strip="pause"]')).toContainText('PAUSED');
  }
  await api('/api/engines/resume', { method: 'POST', body: '{}' });
  await expect(strip.locator('[data-strip="pause"]')).toContainText('serving');
  await api(`/api/batches/${held}/cancel`, { method: 'POST', body: '{}' });
  await api('/api/policy-version', { method: 'POST', body: JSON.stringify({ version: 0 }) });

  // An engine whose replica is down shows in the strip (health is polled).
  const add = await fetch(`${server.baseUrl}/api/engines`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id: 'vllm-down', kind: 'vllm', replicas: ['http://127.0.0.1:9'], model: 'Qwen/Qwen3-8B', mode: 'chat' }),
  });
  if (add.ok) {
    await page.goto(`${server.baseUrl}/#/`);
    await expect(strip.locator('[data-strip="unhealthy"]')).toContainText('vllm-down', { timeout: 45_000 });
    await shot(page, info, 'header-unhealthy');
    await fetch(`${server.baseUrl}/api/engines/vllm-down`, { method: 'DELETE' });
  } else {
    info.annotations.push({ type: 'unhealthy engine', description: `could not add an engine: ${add.status}` });
  }
  // Runtime: shown when the server reports one for its batches (local = unsandboxed).
  const runtime = (await api<{ batches: Array<{ spec: { runtime?: string } }> }>('/api/batches?limit=5')).batches.find((x) => x.spec.runtime)?.spec.runtime;
  if (runtime) await expect(strip.locator('[data-strip="runtime"]')).toContainText(runtime === 'local' ? 'UNSANDBOXED' : 'sandboxed');
  expect(problems.filter((p) => !/502|503|Failed to load resource/.test(p))).toEqual([]);
});

test('charts: batch names on axes, stable engine colours, mean reward over time and policy with error bars', async ({ page }, info) => {
  const problems = watchPage(page);
  await page.goto(`${server.baseUrl}/#/`);
  const chart = page.getByTestId('chart-batch-rewards');
  await expect(chart.locator('.recharts-cartesian-axis-tick-value').filter({ hasText: 'calc · vllm' })).toHaveCount(1);
  const dashColor = await chart.locator('[data-engine="sim-vllm"] .swatch').evaluate((e) => getComputedStyle(e).backgroundColor);
  await page.goto(`${server.baseUrl}/#/batches/${ids.calcV}`);
  const mean = page.getByTestId('chart-mean-reward');
  await expect(mean.locator('.recharts-line')).toHaveCount(2); // sim-vllm and sim-sglang, same dataset
  await expect(mean.locator('.recharts-errorBar').first()).toBeAttached();
  const icon = mean.locator('.recharts-legend-item').filter({ hasText: 'sim-vllm' }).locator('path').first();
  const legendColor = (await icon.getAttribute('stroke')) ?? (await icon.getAttribute('fill')) ?? '';
  const norm = (c: string) => page.evaluate((x) => {
    const el = document.createElement('div');
    el.style.color = x;
    document.body.append(el);
    const v = getComputedStyle(el).color;
    el.remove();
    return v;
  }, c);
  expect(await norm(legendColor)).toBe(dashColor); // sim-vllm has one colour on every page
  // The repo-fix batch never shares a line with the calculator ones.
  await expect(mean).not.toContainText('repo-fix');
  await mean.getByRole('button', { name: 'per policy version' }).click();
  await expect(mean.locator('.recharts-line')).toHaveCount(1);
  await expect(mean.locator('.recharts-errorBar').first()).toBeAttached();
  await shot(page, info, 'charts-batch');
  expect(problems).toEqual([]);
});

test('layout: views open at their top, no clipped tables at 1440 px, dated timestamps, tooltips on screen, recovery', async ({ page }, info) => {
  const problems = watchPage(page);
  await page.goto(`${server.baseUrl}/#/batches/${ids.calcV}`);
  await expect(page.getByTestId('batch-sessions')).toBeVisible({ timeout: 30_000 });
  // Opens at its top (the sessions table's keyboard selection must not scroll the page down to it).
  expect(await page.locator('.app-main').evaluate((m) => m.scrollTop)).toBe(0);
  await page.locator('.app-main').evaluate((m) => m.scrollTo(0, m.scrollHeight));
  expect(await page.locator('.app-main').evaluate((m) => m.scrollTop)).toBeGreaterThan(200);
  await page.getByRole('link', { name: 'Sessions' }).first().click();
  await expect(page.locator('.slist')).toBeVisible();
  expect(await page.locator('.app-main').evaluate((m) => m.scrollTop)).toBe(0);
  await page.goBack();
  await expect(page.getByRole('heading', { name: /Batch/ })).toBeInViewport();

  // No table wider than its card at 1440 px.
  for (const [url, sel] of [['#/', '[data-testid="batches-table"]'], [`#/batches/${ids.calcV}`, '[data-testid="batch-sessions"]'], ['#/sessions', '.stable']] as const) {
    await page.goto(`${server.baseUrl}/${url}`);
    const el = page.locator(sel).first();
    await expect(el).toBeVisible();
    const { sw, cw } = await el.evaluate((e) => ({ sw: e.scrollWidth, cw: e.clientWidth }));
    expect(sw, `${url} ${sel} clips`).toBeLessThanOrEqual(cw + 1);
  }
  // Dates on timestamps.
  await expect(page.locator('.slist [role="cell"].nowrap').first()).toHaveText(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);

  // A token tooltip near the right edge stays on screen.
  const b = await api<BatchJson>(`/api/batches/${ids.calcS}`);
  await page.goto(`${server.baseUrl}/#/sessions/${b.tasks[0].samples[0].sessionId}`);
  const chips = page.locator('article.turn.open .tok');
  await expect(chips.first()).toBeVisible();
  const box = await page.locator('article.turn.open .tok-list').boundingBox();
  const rightmost = await chips.evaluateAll((els) => {
    let best = 0;
    let x = -1;
    els.forEach((e, i) => {
      const r = e.getBoundingClientRect();
      if (r.right > x && r.height > 0) {
        x = r.right;
        best = i;
      }
    });
    return best;
  });
  await chips.nth(rightmost).hover();
  const tip = await page.locator('.tok-tooltip').boundingBox();
  const vp = page.viewportSize()!;
  expect(tip).not.toBeNull();
  expect(tip!.x).toBeGreaterThanOrEqual(0);
  expect(tip!.x + tip!.width).toBeLessThanOrEqual(vp.width);
  expect(tip!.y + tip!.height).toBeLessThanOrEqual(vp.height);
  expect(box).not.toBeNull();

  // The server goes away and comes back: the view recovers by itself (no reload, no click).
  await page.route('**/api/**', (r) => r.abort('connectionrefused'));
  await page.goto(`${server.baseUrl}/#/batches/${ids.repo}`);
  await page.reload(); // a fresh page: its live connection fails too, as with a stopped server
  await expect(page.locator('.state-error')).toBeVisible({ timeout: 20_000 });
  await expect(page.locator('.conn')).toContainText(/offline|connecting/);
  await shot(page, info, 'server-gone');
  await page.unroute('**/api/**');
  await expect(page.getByRole('heading', { name: /Batch/ })).toContainText('repo-fix', { timeout: 30_000 });
  await expect(page.locator('.conn')).toContainText('live');
  await shot(page, info, 'server-back');
  expect(problems.filter((p) => !/Failed to load resource|ERR_CONNECTION_REFUSED|net::/.test(p))).toEqual([]);
});
