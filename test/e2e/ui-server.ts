// Shared by the real-server UI specs: starts `rollgate serve --port 0` on a fresh data dir (embedded
// sim engines), a small JSON client, a console/CSP watcher, and full-length view screenshots.
// ROLLGATE_TEST_URL=http://127.0.0.1:8321 runs the specs against an already running server instead.
import { expect, type Page, type TestInfo } from '@playwright/test';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface TestServer {
  baseUrl: string;
  log(): string;
  stop(): Promise<void>;
}

export async function startServer(): Promise<TestServer> {
  if (process.env.ROLLGATE_TEST_URL) {
    const baseUrl = process.env.ROLLGATE_TEST_URL.replace(/\/$/, '');
    return { baseUrl, log: () => '', stop: async () => {} };
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'rollgate-ui-'));
  let output = '';
  const proc: ChildProcess = spawn(join(root, 'node_modules/.bin/tsx'), ['src-main/cli.ts', 'serve', '--port', '0', '--data-dir', dataDir], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ROLLGATE_DATA_DIR: dataDir },
  });
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in 90 s:\n${output}`)), 90_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const m = /Rollgate listening on (http:\/\/\S+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m[1].replace(/\/$/, ''));
      }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
    proc.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${output}`));
    });
  });
  return {
    baseUrl,
    log: () => output,
    async stop() {
      if (proc.exitCode === null) {
        const exited = new Promise((r) => proc.once('exit', r));
        proc.kill('SIGTERM');
        const t = setTimeout(() => proc.kill('SIGKILL'), 8000);
        await exited;
        clearTimeout(t);
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export function apiClient(baseUrl: () => string) {
  return async function api<T>(path: string, init?: RequestInit): Promise<T> {
    const res = await fetch(`${baseUrl()}${path}`, { ...init, headers: { 'content-type': 'application/json', ...init?.headers } });
    expect(res.ok, `${path} → ${res.status} ${await res.clone().text()}`).toBe(true);
    return (await res.json()) as T;
  };
}

/** Console errors, CSP violations and page errors seen by `page`. */
export function watchPage(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || /Content Security Policy|Refused to/i.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  return problems;
}

/**
 * Screenshot of the whole routed view: the app scrolls inside `.app-main`, so the viewport is grown
 * to the view's height for the shot (capped), then restored. Saved under test-results/ui/<test>/.
 */
export async function shot(page: Page, info: TestInfo, name: string): Promise<string> {
  const size = page.viewportSize() ?? { width: 1440, height: 900 };
  const h = await page.evaluate(() => {
    const m = document.querySelector('.app-main');
    return m ? m.scrollHeight + (document.querySelector('.app-header')?.clientHeight ?? 46) : document.body.scrollHeight;
  });
  const height = Math.min(Math.max(size.height, h), 4000);
  if (height !== size.height) {
    await page.setViewportSize({ width: size.width, height });
    await page.waitForTimeout(250); // charts re-measure
  }
  const path = info.outputPath(`${name}.png`);
  await page.screenshot({ path });
  if (height !== size.height) await page.setViewportSize(size);
  return path;
}

export async function setTheme(page: Page, theme: 'dark' | 'light'): Promise<void> {
  const current = await page.evaluate(() => document.documentElement.dataset.theme);
  if (current !== theme) await page.getByRole('button', { name: /Switch to (light|dark) theme/ }).click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', theme);
}
