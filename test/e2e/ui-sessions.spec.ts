// The real thing: `rollgate serve` (embedded sim engines, fresh data dir), a session created over the
// control API, a chat completion sent like an agent would, then the UI in Chromium shows the session,
// its turn and the token view, and picks up a second turn live over /api/events.
import { expect, test } from '@playwright/test';
import { apiClient, shot, startServer, watchPage, type TestServer } from './ui-server.js';

const MODEL = 'Qwen/Qwen3-8B';
const calculator = {
  type: 'function',
  function: {
    name: 'calculator',
    description: 'Evaluate an arithmetic expression',
    parameters: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] },
  },
};

let server: TestServer;
let baseUrl = '';
const api = apiClient(() => baseUrl);

test.describe.configure({ mode: 'serial' });

// ROLLGATE_TEST_URL=http://127.0.0.1:8321 runs these against an already running server instead.
test.beforeAll(async () => {
  test.setTimeout(120_000);
  server = await startServer();
  baseUrl = server.baseUrl;
});
test.afterAll(async () => server?.stop());

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
  await page.goto(`${baseUrl}/#/sessions`);
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
  // Rows ignore the pointer while the list scrolls (the jump above): hover once it has settled.
  await expect(out.locator('xpath=ancestor::div[contains(@class, "tok-list")]')).not.toHaveClass(/vlist-scrolling/);
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
  await shot(page, info, 'engines');
});
