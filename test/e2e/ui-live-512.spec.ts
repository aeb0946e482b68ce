// Issue 16, "large batches stay smooth": a 512-sample batch (demo:calculator, 16 tasks × 32 samples, on
// sim-vllm) runs against a real `rollgate serve` while its batch view is open in Chromium. A long-task
// observer (PerformanceObserver 'longtask') records every main-thread block from the first paint of the
// view until the batch has ended and its final figures are drawn; none may exceed 100 ms. The view must
// update from events: the changed sessions are fetched (GET …/samples?sessions=…), never the whole
// running batch again. The figures are printed and kept as test annotations.
//
// The observer measures wall time, so a machine running far more work than it has cores (other test
// runs, the 16 agents this batch starts) stretches tasks the page itself keeps short. The main thread's
// own CPU time per task is therefore traced as well (Chrome's `toplevel` RunTask events, thread
// time): that figure must stay under 100 ms always; the observer's figure must too unless the load
// average shows the machine oversubscribed during the run, and both are reported either way.
import { expect, test, type CDPSession } from '@playwright/test';
import os from 'node:os';
import { apiClient, shot, startServer, watchPage, type TestServer } from './ui-server.js';

let server: TestServer;

interface TraceEvent { name: string; ph: string; pid: number; tid: number; dur?: number; tdur?: number; args?: { name?: string } }

/** Main-thread tasks of the page's renderer, from a Chrome trace: wall and CPU (thread) milliseconds. */
async function stopTrace(cdp: CDPSession): Promise<Array<{ wall: number; cpu: number }>> {
  const complete = new Promise<{ stream?: string }>((r) => cdp.once('Tracing.tracingComplete', (e) => r(e as { stream?: string })));
  await cdp.send('Tracing.end');
  const { stream } = await complete;
  let text = '';
  for (let i = 0; i < 100_000 && stream; i++) {
    const chunk = await cdp.send('IO.read', { handle: stream, size: 1 << 20 });
    text += chunk.base64Encoded ? Buffer.from(chunk.data, 'base64').toString('utf8') : chunk.data;
    if (chunk.eof) break;
  }
  if (stream) await cdp.send('IO.close', { handle: stream });
  const parsed = JSON.parse(text) as TraceEvent[] | { traceEvents: TraceEvent[] };
  const events = Array.isArray(parsed) ? parsed : parsed.traceEvents;
  const main = events.filter((e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain').map((e) => `${e.pid}:${e.tid}`);
  return events
    .filter((e) => e.ph === 'X' && e.name === 'ThreadControllerImpl::RunTask' && main.includes(`${e.pid}:${e.tid}`))
    .map((e) => ({ wall: (e.dur ?? 0) / 1000, cpu: (e.tdur ?? e.dur ?? 0) / 1000 }));
}
const api = apiClient(() => server.baseUrl);

test.beforeAll(async () => {
  test.setTimeout(120_000);
  server = await startServer();
});
test.afterAll(async () => server?.stop());

test('512 live samples: the batch view patches changed sessions from events, no main-thread block over 100 ms', async ({ page }, info) => {
  test.setTimeout(600_000);
  const problems = watchPage(page);
  await page.addInitScript(() => {
    const w = window as unknown as { __long: Array<{ start: number; duration: number }> };
    w.__long = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) w.__long.push({ start: e.startTime, duration: e.duration });
    }).observe({ type: 'longtask', buffered: true });
  });
  const { id } = await api<{ id: string }>('/api/batches', {
    method: 'POST',
    body: JSON.stringify({ dataset: 'demo:calculator', harness: 'builtin', engine: 'sim-vllm', n: 32, concurrency: 16, name: '512 live samples' }),
  });
  // Whole-batch fetches that came back with the batch still running: the live view must need none
  // after its first load.
  let fullWhileRunning = -1;
  let patches = 0;
  page.on('response', async (r) => {
    const u = new URL(r.url());
    if (u.pathname === `/api/batches/${id}/samples`) patches++;
    if (u.pathname !== `/api/batches/${id}`) return;
    const body = (await r.json().catch(() => null)) as { status?: string } | null;
    if (body && ['queued', 'running'].includes(body.status ?? '')) fullWhileRunning++;
  });
  await page.goto(`${server.baseUrl}/#/batches/${id}`);
  const rows = page.getByTestId('batch-sessions').locator('tbody tr');
  await expect(rows.first()).toBeVisible({ timeout: 60_000 });
  const t0 = await page.evaluate(() => performance.now());
  const liveFrom = Date.now();
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Tracing.start', { categories: 'toplevel', transferMode: 'ReturnAsStream' });
  const loads: number[] = [];
  const sampler = setInterval(() => loads.push(os.loadavg()[0]), 5000);
  // Progress arrives while the batch runs…
  const bar = page.locator('.progress-row [role="progressbar"]');
  await expect(bar).not.toHaveAttribute('aria-valuenow', '0', { timeout: 120_000 });
  await shot(page, info, 'live-512-running');
  // …until all 512 samples are done and the final figures are on screen.
  await expect(page.getByRole('heading', { name: /Batch/ }).locator('..').locator('[data-status]').first()).toHaveAttribute('data-status', 'completed', { timeout: 540_000 });
  await expect(bar).toHaveAttribute('aria-valuenow', '512');
  await expect(rows).toHaveCount(512);
  const liveUntil = Date.now();
  await page.waitForTimeout(1500); // the final detail, health and verdicts land and are drawn
  clearInterval(sampler);
  const tasks = await stopTrace(cdp);
  await shot(page, info, 'live-512-done');

  const long = await page.evaluate((from) => (window as unknown as { __long: Array<{ start: number; duration: number }> }).__long.filter((e) => e.start >= from), t0);
  const worst = long.reduce((m, e) => Math.max(m, e.duration), 0);
  const cpuWorst = tasks.reduce((m, t) => Math.max(m, t.cpu), 0);
  const cpuLong = tasks.filter((t) => t.cpu > 50).length;
  const load = loads.length ? Math.max(...loads) : os.loadavg()[0];
  const cores = os.cpus().length;
  const summary = `512 samples in ${((liveUntil - liveFrom) / 1000).toFixed(0)} s: long-task observer (wall) ${long.length} tasks over 50 ms, worst ${worst.toFixed(0)} ms; `
    + `main-thread CPU per task: worst ${cpuWorst.toFixed(0)} ms, ${cpuLong} over 50 ms (${tasks.length} tasks traced); load average up to ${load.toFixed(1)} on ${cores} cores; `
    + `${patches} patch requests, ${fullWhileRunning} whole-batch refetches while running`;
  console.log(`[live-512] ${summary}; long tasks: ${long.map((e) => e.duration.toFixed(0)).join(', ') || 'none'}`);
  info.annotations.push({ type: 'live-512', description: summary });
  expect(patches).toBeGreaterThan(0);
  expect(fullWhileRunning).toBe(0);
  expect(tasks.length).toBeGreaterThan(100);
  expect(cpuWorst).toBeLessThanOrEqual(100);
  if (load < cores) expect(worst).toBeLessThanOrEqual(100);
  else info.annotations.push({ type: 'live-512 oversubscribed', description: `load ${load.toFixed(1)} > ${cores} cores: the observer's wall-clock figure is reported, not asserted` });
  const b = await api<{ counts: { done: number } }>(`/api/batches/${id}`);
  expect(b.counts.done).toBe(512);
  expect(problems).toEqual([]);
});
