// Starts a real Rollgate (store in a temp folder, embedded sim engines) on a loopback port.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp, type App, type AppConfig } from '../../src-main/app.js';

export interface TestApp extends App {
  dataDir: string;
  createSession(body?: Record<string, unknown>): Promise<{ id: string; key: string; urls: { openai: string; anthropic: string; gemini: string } }>;
  api<T = any>(path: string, init?: RequestInit): Promise<T>;
  stop(): Promise<void>;
}

export async function startTestApp(config: Partial<AppConfig> = {}): Promise<TestApp> {
  const dataDir = mkdtempSync(join(tmpdir(), 'rollgate-test-'));
  const app = await createApp({ dataDir, port: 0, sim: true, ...config });
  const api = async (path: string, init?: RequestInit) => {
    const res = await fetch(app.url + path, { ...init, headers: { 'content-type': 'application/json', ...init?.headers } });
    const json = await res.json();
    if (!res.ok) throw new Error(`${path}: HTTP ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  return {
    ...app,
    dataDir,
    api,
    createSession: (body = {}) => api('/api/sessions', { method: 'POST', body: JSON.stringify(body) }),
    async stop() {
      await app.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
