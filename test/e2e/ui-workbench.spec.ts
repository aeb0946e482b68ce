// The workbench's main jobs against a real `rollgate serve` (embedded sim engines, fresh data dir), in
// Debian's Chromium: launch a calculator batch on sim-vllm and the same on sim-sglang from the GUI and
// watch both finish; the dashboard and batch detail; a session with its token view, loss mask,
// traces and received→served diff; compare the two batches with cross-engine re-scoring; export JSONL
// through the GUI and check the file; a manual session with live turns; the topology with
// pause/resume, policy version and the engine form. Screenshots of every view land in test-results/ui/.
import { expect, test, type Page } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { apiClient, setTheme, shot, startServer, watchPage, type TestServer } from './ui-server.js';

const MODEL = 'Qwen/Qwen3-8B';
let server: TestServer;
const api = apiClient(() => server.baseUrl);
const ids: { vllm?: string; sglang?: string } = {};

interface BatchView {
  id: string;
  status: string;
  counts: { total: number; done: number };
  meanReward: number | null;
  tasks: Array<{ taskId: string; samples: Array<{ sessionId: string; completionCount: number }> }>;
}

test.describe.configure({ mode: 'serial' });

test.beforeAll(async () => {
  test.setTimeout(120_000);
  server = await startServer();
});
test.afterAll(async () => server?.stop());

async function launch(page: Page, engine: string, name: string): Promise<string> {
  await page.getByLabel('Demo dataset').selectOption('demo:calculator');
  await page.getByLabel('Harness', { exact: true }).selectOption('builtin');
  await page.getByLabel('Engine', { exact: true }).selectOption(engine);
  await page.getByLabel('Samples per task').fill('2');
  await page.getByLabel('Concurrency').fill('8');
  await page.getByLabel('Batch name').fill(name);
  const before = await page.locator('[data-testid="launched"] [data-batch-id]').count();
  await page.getByRole('button', { name: '▶ Launch' }).click();
  const rows = page.locator('[data-testid="launched"] [data-batch-id]');
  await expect(rows).toHaveCount(before + 1);
  const id = await rows.first().getAttribute('data-batch-id');
  expect(id).toMatch(/^bat_/);
  return id!;
}

test('launch a calculator batch on sim-vllm and on sim-sglang from the GUI; both finish', async ({ page }, info) => {
  test.setTimeout(240_000);
  const problems = watchPage(page);
  await page.goto(`${server.baseUrl}/#/launch`);
  await expect(page.getByLabel('Demo dataset')).toContainText('demo:calculator');
  await shot(page, info, 'launch-form');

  ids.vllm = await launch(page, 'sim-vllm', 'calc on sim-vllm');
  ids.sglang = await launch(page, 'sim-sglang', 'calc on sim-sglang');
  const rowV = page.locator(`[data-testid="launched"] [data-batch-id="${ids.vllm}"]`);
  const rowS = page.locator(`[data-testid="launched"] [data-batch-id="${ids.sglang}"]`);
  // Progress arrives live (batch events): the bar moves before the batch ends.
  await expect(rowV.getByRole('progressbar')).not.toHaveAttribute('aria-valuenow', '0', { timeout: 60_000 });
  await shot(page, info, 'launch-running');
  await expect(rowV).toHaveAttribute('data-status', 'completed', { timeout: 180_000 });
  await expect(rowS).toHaveAttribute('data-status', 'completed', { timeout: 180_000 });
  for (const row of [rowV, rowS]) await expect(row.getByRole('progressbar')).toHaveAttribute('aria-valuenow', '32');
  await shot(page, info, 'launch-done');

  const a = await api<BatchView>(`/api/batches/${ids.vllm}`);
  const b = await api<BatchView>(`/api/batches/${ids.sglang}`);
  expect(a.counts).toMatchObject({ total: 32, done: 32 });
  expect(b.counts).toMatchObject({ total: 32, done: 32 });
  expect(problems).toEqual([]);
});

test('dashboard: both batches with figures; keyboard opens the batch; both themes', async ({ page }, info) => {
  const problems = watchPage(page);
  await page.goto(`${server.baseUrl}/#/`);
  const table = page.getByTestId('batches-table');
  for (const id of [ids.vllm!, ids.sglang!]) {
    const row = table.locator(`[data-batch-id="${id}"]`);
    await expect(row.locator('[data-status]').first()).toHaveAttribute('data-status', 'completed');
    await expect(row.locator('.badge-sim')).toHaveText('SIMULATED');
  }
  // Sessions / traces / completions / tokens: traces are counted once the batch has ended.
  const rowV = table.locator(`[data-batch-id="${ids.vllm}"]`);
  await expect(rowV.locator('td.cell-progress')).toContainText('32/32'); // samples
  await expect(rowV.locator('[data-cell="breaks"]')).toHaveText(/%/, { timeout: 30_000 }); // trace health, from the server
  await expect(rowV.locator('td.num').nth(4)).not.toHaveText('…'); // traces
  await expect(page.getByTestId('tasks-table')).toContainText('calc-add-1');
  await expect(page.getByTestId('chart-batch-rewards').locator('.recharts-bar-rectangle').first()).toBeVisible();
  await shot(page, info, 'dashboard-dark');
  await setTheme(page, 'light');
  await shot(page, info, 'dashboard-light');
  await setTheme(page, 'dark');

  // ↑/↓ and Enter: the newest batch (sim-sglang) is first, the vLLM one second.
  await table.focus();
  await page.keyboard.press('Home');
  await page.keyboard.press('ArrowDown');
  await expect(rowV).toHaveClass(/active/);
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(new RegExp(`#/batches/${ids.vllm}$`));
  expect(problems).toEqual([]);
});

test('batch and task detail: reward charts, pass@k, sessions list', async ({ page }, info) => {
  const problems = watchPage(page);
  await page.goto(`${server.baseUrl}/#/batches/${ids.vllm}`);
  await expect(page.getByRole('heading', { name: /Batch/ })).toContainText('calc on sim-vllm');
  for (const chart of ['chart-distribution', 'chart-mean-reward', 'chart-passk']) {
    await expect(page.getByTestId(chart).locator('.recharts-surface').first()).toBeVisible();
  }
  await expect(page.getByTestId('chart-mean-reward').locator('.recharts-line')).toHaveCount(2); // both batches: same dataset + harness, one line per engine
  await expect(page.getByTestId('batch-sessions').locator('tbody tr')).toHaveCount(32);
  await shot(page, info, 'batch-detail');
  await page.getByTestId('chart-mean-reward').getByRole('button', { name: 'per policy version' }).click();
  await expect(page.getByTestId('chart-mean-reward').locator('.recharts-line')).toHaveCount(1); // all on v0
  await page.getByLabel('Filter by task').selectOption('calc-mul-1');
  await expect(page).toHaveURL(/\/tasks\/calc-mul-1$/);
  await expect(page.getByTestId('batch-sessions').locator('tbody tr')).toHaveCount(2);
  await expect(page.getByTestId('chart-passk').locator('.recharts-line')).toHaveCount(2); // batch + task
  await shot(page, info, 'task-detail');
  expect(problems).toEqual([]);
});

test('session inspector: turns, token view, traces with loss mask and breaks, received→served diff', async ({ page }, info) => {
  const problems = watchPage(page);
  // sim-vllm chat mode: the second prompt re-renders the first turn, so the chain breaks (a recorded reason).
  const a = await api<BatchView>(`/api/batches/${ids.vllm}`);
  const twoTurns = a.tasks.flatMap((t) => t.samples).find((s) => s.completionCount >= 2)!;
  await page.goto(`${server.baseUrl}/#/batches/${ids.vllm}`);
  await page.getByTestId('batch-sessions').locator(`[data-session-id="${twoTurns.sessionId}"] a`).click();
  await expect(page).toHaveURL(new RegExp(`#/sessions/${twoTurns.sessionId}$`));
  const turns = page.locator('article.turn');
  await expect(turns).toHaveCount(twoTurns.completionCount);
  const last = turns.last();
  await expect(last.locator('.tok-list')).toContainText('<|im_start|>');
  await expect(last.locator('.tok-m1').first()).toBeAttached(); // loss-mask overlay from the traces API
  // Chat mode now merges turns whose prompt only re-renders the last output's whitespace: one trace
  // (chain breaks and what diverged are walked in ui-researcher.spec.ts).
  const traces = page.getByTestId('traces-table');
  await expect(traces.locator('tbody tr')).toHaveCount(1);
  await shot(page, info, 'inspector-vllm');

  // Trace tokens with the mask; then the diff between the request as received and as served.
  await traces.locator('tbody tr').first().getByRole('button', { name: 'Tokens' }).click();
  const tt = page.getByTestId('trace-tokens');
  await expect(tt.locator('.tok').first()).toBeVisible();
  await expect(tt.locator('.tok-m1').first()).toBeAttached();
  await last.getByRole('button', { name: /Diff: received → served/ }).click();
  const diff = last.getByTestId('served-diff');
  await expect(diff).toContainText('as served');
  await expect(diff.locator('.d-ins').first()).toBeVisible(); // vLLM adds logprobs / return_token_ids
  await shot(page, info, 'inspector-trace-diff');

  // An SGLang (token mode) session: one merged trace, tool results under mask 0.
  const b = await api<BatchView>(`/api/batches/${ids.sglang}`);
  const merged = b.tasks.flatMap((t) => t.samples).find((s) => s.completionCount >= 2)!;
  await page.goto(`${server.baseUrl}/#/sessions/${merged.sessionId}`);
  await expect(page.getByTestId('traces-table').locator('tbody tr')).toHaveCount(1);
  await page.getByTestId('traces-table').getByRole('button', { name: 'Tokens' }).click();
  const mt = page.getByTestId('trace-tokens');
  await mt.getByRole('button', { name: 'Jump to response' }).click();
  await expect(mt.locator('.tok-m0').first()).toBeVisible();
  await expect(mt.locator('.tok-m1').first()).toBeVisible();
  await expect(mt.locator('.tok-list')).not.toHaveClass(/vlist-scrolling/); // rows ignore the pointer while scrolling
  await mt.locator('.tok-m1').first().hover();
  await expect(page.locator('.tok-tooltip')).toContainText('1 (trained)');
  await shot(page, info, 'inspector-sglang-loss-mask');
  await setTheme(page, 'light');
  await shot(page, info, 'inspector-sglang-light');
  await setTheme(page, 'dark');
  expect(problems).toEqual([]);
});

test('compare the two batches: reward scatter, per-turn diffs, cross-engine re-score', async ({ page }, info) => {
  test.setTimeout(120_000);
  const problems = watchPage(page);
  await page.goto(`${server.baseUrl}/#/compare?a=${ids.vllm}&b=${ids.sglang}`);
  await expect(page.getByLabel('Batch A')).toHaveValue(ids.vllm!);
  await expect(page.getByLabel('Batch B')).toHaveValue(ids.sglang!);
  await expect(page.getByTestId('chart-scatter').locator('.recharts-scatter-symbol, .recharts-scatter circle').first()).toBeVisible();
  await expect(page.getByTestId('compare-tasks').locator('tbody tr')).toHaveCount(16);
  // Pick a task with the keyboard: per-turn text and token diffs side by side.
  await page.getByTestId('compare-tasks').focus();
  await page.keyboard.press('Home');
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(/task=/);
  const diffs = page.getByTestId('turn-diffs');
  await expect(diffs.locator('article.turn-diff').first()).toBeVisible();
  await expect(diffs.locator('.tokdiff-side').first()).toBeVisible();
  await shot(page, info, 'compare-diffs');

  // Re-score A's traces (sampled on sim-vllm) on sim-sglang. The answer is held back until the live
  // progress (sent over /api/events while the server works) has been seen.
  let release: () => void = () => undefined;
  const held = new Promise<void>((r) => { release = r; });
  await page.route('**/api/traces/rescore', async (route) => {
    const response = await route.fetch();
    await held;
    await route.fulfill({ response });
  });
  const rescore = page.getByTestId('rescore');
  await rescore.getByRole('button', { name: /Re-score A's traces/ }).click();
  const progress = page.getByTestId('rescore-progress');
  await expect(progress).toContainText(/\b(\d+)\/\1 sessions/, { timeout: 90_000 }); // every session read
  await expect(progress).toContainText(/[1-9][\d,]* traces scored on sim-sglang · [1-9][\d,]* tokens compared/);
  await shot(page, info, 'compare-rescore-progress');
  release();
  const summary = page.getByTestId('rescore-summary');
  await expect(summary).toBeVisible({ timeout: 90_000 });
  const n = await summary.locator('.tile').first().locator('.tile-value').innerText();
  expect(Number(n.replace(/,/g, ''))).toBeGreaterThan(100);
  await expect(summary).toContainText('mean |Δ|');
  await expect(summary).toContainText('KL estimate');
  await expect(page.getByTestId('chart-rescore-hist').locator('.recharts-bar-rectangle').first()).toBeVisible();
  await shot(page, info, 'compare-rescore');
  await setTheme(page, 'light');
  await shot(page, info, 'compare-rescore-light');
  await setTheme(page, 'dark');
  expect(problems).toEqual([]);
});

test('export JSONL through the GUI: progress, download, file lines', async ({ page }, info) => {
  const problems = watchPage(page);
  await page.goto(`${server.baseUrl}/#/export?batch=${ids.sglang}`);
  await expect(page.getByLabel('Batch', { exact: true })).toHaveValue(ids.sglang!);
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: '⬇ Export JSONL' }).click()]);
  const file = info.outputPath('export.jsonl');
  await download.saveAs(file);
  expect(download.suggestedFilename()).toBe(`rollgate-${ids.sglang}-train-prefix-merge.jsonl`);
  await expect(page.getByTestId('export-progress')).toHaveAttribute('data-state', 'done');
  const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
  const shown = Number((await page.getByTestId('export-lines').innerText()).replace(/,/g, ''));
  expect(lines.length).toBe(shown);
  expect(lines.length).toBeGreaterThanOrEqual(32); // SGLang token mode: one merged trace per session
  for (const line of lines) {
    const row = JSON.parse(line) as Record<string, unknown>;
    expect(row.batch_id).toBe(ids.sglang);
    expect(row.engine).toBe('sim-sglang');
    expect(Array.isArray(row.prompt_ids)).toBe(true);
    expect((row.loss_mask as number[]).length).toBe((row.response_ids as number[]).length);
    expect((row.response_logprobs as number[]).length).toBe((row.response_ids as number[]).length);
  }
  // The same export over the API gives the same lines.
  const direct = await (await fetch(`${server.baseUrl}/api/export?batch=${ids.sglang}&format=train&builder=prefix-merge`)).text();
  expect(direct.split('\n').filter(Boolean).length).toBe(lines.length);
  // "Direct download": the browser streams the same file to disk itself.
  const [streamed] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-direct').click()]);
  const streamedFile = info.outputPath('export-direct.jsonl');
  await streamed.saveAs(streamedFile);
  expect(readFileSync(streamedFile, 'utf8')).toBe(direct);
  await shot(page, info, 'export-done');
  info.annotations.push({ type: 'export', description: `${lines.length} lines` });
  expect(problems).toEqual([]);
});

test('manual session: snippets for a harness, then turns arrive live', async ({ page }, info) => {
  const problems = watchPage(page);
  await page.goto(`${server.baseUrl}/#/manual`);
  await page.getByLabel('Harness', { exact: true }).selectOption('qwen-code');
  await page.getByLabel('Engine', { exact: true }).selectOption('sim-vllm');
  await page.getByRole('button', { name: 'Create session' }).click();
  await expect(page).toHaveURL(/#\/manual\/ses_/);
  const shell = page.getByTestId('snippet-shell');
  await expect(shell).toContainText('OPENAI_BASE_URL');
  const openai = (await page.locator('.facts-urls dd').first().innerText()).split(/\s+/)[0];
  expect(openai).toMatch(/\/s\/[0-9a-f]+\/v1$/);
  await expect(shell).toContainText(openai);
  await expect(page.getByTestId('waiting-turns')).toBeVisible();
  await shot(page, info, 'manual-snippets');

  // An agent (here: the test) uses the URL; the turn shows up without a reload.
  const res = await fetch(`${openai}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'What is 6*7?' }] }),
  });
  expect(res.status).toBe(200);
  await expect(page.getByTestId('manual-turns').locator('tbody tr')).toHaveCount(1);
  await shot(page, info, 'manual-live');
  expect(problems).toEqual([]);
});

test('topology: graph, pause/resume, policy version, engine form', async ({ page }, info) => {
  const problems = watchPage(page);
  await page.goto(`${server.baseUrl}/#/topology`);
  const graph = page.getByTestId('topology-graph');
  for (const id of ['sim-vllm', 'sim-sglang']) {
    await expect(graph.locator(`[data-engine-node="${id}"]`)).toContainText('SIMULATED');
    await expect(page.locator(`[data-engine-id="${id}"] .badge-sim`)).toHaveText('SIMULATED');
    await expect(page.locator(`[data-engine-id="${id}"]`)).toContainText(MODEL);
  }
  await expect(graph.locator('[data-harness="builtin"]')).toBeVisible(); // harness in use
  await shot(page, info, 'topology');

  // Weight sync: pause (queue), resume, stamp a policy version.
  const sync = page.getByTestId('sync-controls');
  await sync.getByLabel('Pause mode').selectOption('queue');
  await sync.getByRole('button', { name: 'Pause' }).click();
  await expect(sync.locator('.badge-warn')).toContainText('paused');
  await expect(graph.locator('[data-node="gateway"]')).toContainText('PAUSED');
  await expect(page.locator('[data-engine-id="sim-vllm"]')).toContainText('paused');
  await shot(page, info, 'topology-paused');
  await sync.getByRole('button', { name: 'Resume' }).click();
  await expect(sync.locator('.badge-good')).toContainText('serving');
  await sync.getByLabel('Policy version').fill('3');
  await sync.getByRole('button', { name: 'Set' }).click();
  await expect(sync).toContainText('current: v3');
  await expect(graph.locator('[data-node="gateway"]')).toContainText('policy v3');
  await api('/api/policy-version', { method: 'POST', body: JSON.stringify({ version: 0 }) });

  // Engine form: wired to POST /api/engines; when the route is missing the form says so.
  await page.getByRole('button', { name: '+ Add engine' }).click();
  await page.getByLabel('Engine id').fill('vllm-extra');
  await page.getByLabel('Replica URLs').fill('http://127.0.0.1:9');
  await page.getByRole('button', { name: 'Add engine', exact: true }).click();
  const outcome = await Promise.race([
    page.getByTestId('engine-form-error').waitFor().then(() => 'error' as const),
    page.locator('[data-engine-id="vllm-extra"]').waitFor().then(() => 'added' as const),
  ]);
  if (outcome === 'error') {
    const text = await page.getByTestId('engine-form-error').innerText();
    info.annotations.push({ type: 'topology-editing', description: text });
    await shot(page, info, 'topology-add-engine-error');
  } else {
    await shot(page, info, 'topology-added');
    await page.locator('[data-engine-id="vllm-extra"]').getByRole('button', { name: 'Remove' }).click();
    await page.locator('[data-engine-id="vllm-extra"]').getByRole('button', { name: 'Remove vllm-extra' }).click();
    await expect(page.locator('[data-engine-id="vllm-extra"]')).toHaveCount(0);
  }
  expect(problems).toEqual([]);
});
