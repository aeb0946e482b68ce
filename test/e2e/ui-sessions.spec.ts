// The real thing: `rollgate serve` (embedded sim engines, fresh data dir), a session created over the
// control API, a chat completion sent like an agent would, then the UI in Chromium shows the session,
// its turn and the token view, and picks up a second turn live over /api/events.
import { expect, test, type Page } from '@playwright/test';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const MODEL = 'Qwen/Qwen3-8B';
const calculator = {
  type: 'function',
  function: {
    name: 'calculator',
    description: 'Evaluate an arithmetic expression',
    parameters: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] },
  },
};

let server: ChildProcess | null = null;
let baseUrl = '';
let dataDir = '';
let serverLog = '';

function startServer(): Promise<string> {
  dataDir = mkdtempSync(join(tmpdir(), 'rollgate-ui-'));
  const proc = spawn(join(root, 'node_modules/.bin/tsx'), ['src-main/cli.ts', 'serve', '--port', '0', '--data-dir', dataDir], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ROLLGATE_DATA_DIR: dataDir },
  });
  server = proc;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in 90 s:\n${serverLog}`)), 90_000);
    const onData = (chunk: Buffer) => {
      serverLog += chunk.toString();
      const m = /Rollgate listening on (http:\/\/\S+)/.exec(serverLog);
      if (m) {
        clearTimeout(timer);
        resolve(m[1].replace(/\/$/, ''));
      }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
    proc.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${serverLog}`));
    });
  });
}

async function stopServer(): Promise<void> {
  const proc = server;
  server = null;
  if (proc && proc.exitCode === null) {
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGTERM');
    const t = setTimeout(() => proc.kill('SIGKILL'), 8000);
    await exited;
    clearTimeout(t);
  }
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}

async function api<T>(path: string, init?: RequestInit): Promise<T> {
  const res = await fetch(`${baseUrl}${path}`, { ...init, headers: { 'content-type': 'application/json', ...init?.headers } });
  expect(res.ok, `${path} → ${res.status} ${await res.clone().text()}`).toBe(true);
  return (await res.json()) as T;
}

function watchPage(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || /Content Security Policy/i.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  return problems;
}

test.describe.configure({ mode: 'serial' });

// ROLLGATE_TEST_URL=http://127.0.0.1:8321 runs these against an already running server instead.
test.beforeAll(async () => {
  test.setTimeout(120_000);
  baseUrl = process.env.ROLLGATE_TEST_URL?.replace(/\/$/, '') || (await startServer());
});
test.afterAll(stopServer);

test('a recorded session shows up in the UI with its turn and tokens', async ({ page }, info) => {
  const problems = watchPage(page);
  const created = await api<{ id: string; key: string; urls: { openai: string } }>('/api/sessions', {
    method: 'POST',
    body: JSON.stringify({ harness: 'ui-test' }),
  });
  expect(created.urls.openai).toContain(created.key);

  const messages: unknown[] = [{ role: 'user', content: 'What is 17*23? Use the calculator.' }];
  const first = await fetch(`${created.urls.openai}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, messages, tools: [calculator] }),
  });
  expect(first.status, await first.clone().text()).toBe(200);
  const body = (await first.json()) as { choices: Array<{ message: { content: string | null; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }> } }> };
  const reply = body.choices[0].message;

  // Sessions list.
  await page.goto(`${baseUrl}/`);
  const row = page.locator(`[data-session-id="${created.id}"]`);
  await expect(row).toBeVisible();
  await expect(row).toContainText('ui-test');
  await expect(row.locator('.badge-sim')).toHaveText('SIMULATED');
  await expect(page.locator('.conn')).toContainText('live');
  await page.screenshot({ path: info.outputPath('sessions.png') });

  // Open it with the keyboard.
  await page.locator('.slist').focus();
  await page.keyboard.press('Home');
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(new RegExp(`#/sessions/${created.id}$`));
  const turns = page.locator('article.turn');
  await expect(turns).toHaveCount(1);
  const turn = turns.first();
  await expect(turn.locator('.turn-head')).toContainText('ok');
  await expect(turn.locator('.tokview-counts')).toContainText('prompt');
  await expect(turn.locator('.tok-prompt').first()).toBeVisible();
  await expect(turn.getByRole('button', { name: 'Pieces' })).toBeEnabled();
  await expect(turn.locator('.tok-list')).toContainText('<|im_start|>');
  await page.screenshot({ path: info.outputPath('inspector.png') });

  // Output tokens are coloured by logprob, and hovering one tells its id, piece and logprob.
  await turn.getByRole('button', { name: 'Jump to output' }).click();
  const out = turn.locator('.tok:not(.tok-prompt)').first();
  await expect(out).toBeVisible();
  await expect(out).toHaveClass(/lp[0-5]/);
  await out.hover();
  await expect(page.locator('.tok-tooltip')).toContainText('logprob');
  await page.screenshot({ path: info.outputPath('token-hover.png') });

  // The request as the agent sent it.
  await turn.getByRole('button', { name: /Request as received/ }).click();
  await expect(turn.locator('.json').first()).toContainText('What is 17*23?');

  // A second turn arrives live (no reload): answer the tool call like an agent would.
  const call = reply.tool_calls?.[0];
  messages.push(
    call ? { role: 'assistant', content: reply.content, tool_calls: reply.tool_calls } : { role: 'assistant', content: reply.content ?? '' },
    call ? { role: 'tool', tool_call_id: call.id, content: '391' } : { role: 'user', content: 'And 18*23?' },
  );
  const second = await fetch(`${created.urls.openai}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, messages, tools: [calculator] }),
  });
  expect(second.status, await second.clone().text()).toBe(200);
  await expect(turns).toHaveCount(2);
  await expect(turns.nth(1).locator('.tok-list')).toBeVisible();
  await page.screenshot({ path: info.outputPath('inspector-live.png') });

  expect(problems).toEqual([]);
});

test('engines view lists the embedded simulated engines', async ({ page }, info) => {
  await page.goto(`${baseUrl}/#/engines`);
  for (const id of ['sim-vllm', 'sim-sglang']) {
    const card = page.locator(`[data-engine-id="${id}"]`);
    await expect(card).toBeVisible();
    await expect(card.locator('.badge-sim')).toHaveText('SIMULATED');
    await expect(card).toContainText(MODEL);
  }
  await page.screenshot({ path: info.outputPath('engines.png') });
});
