// A dead engine says so (issue 19): a batch on an engine no replica of which answers fails at once with
// the connection error; a sample whose engine calls fail reports the engine's error, not only the agent's exit.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';

const MODEL = 'Qwen/Qwen3-8B';
const apps: TestApp[] = [];
const servers: Server[] = [];
afterAll(async () => {
  for (const a of apps) await a.stop();
  for (const s of servers) await new Promise((r) => s.close(r));
});

async function listen(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function closedPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await new Promise((r) => server.close(r));
  return url;
}

async function runBatch(app: TestApp, engine: string): Promise<any> {
  const { id } = await app.api('/api/batches', { method: 'POST', body: JSON.stringify({
    tasks: [{ id: 'sum', prompt: 'What is 2+2? Use the calculator.', expected: '4' }], harness: 'builtin', engine, n: 1, runtime: 'local', maxTurns: 2,
  }) });
  for (let i = 0; i < 400; i++) {
    const view = await app.api(`/api/batches/${id}`);
    if (!['queued', 'running'].includes(view.status)) return view;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('batch did not end');
}

describe('a dead engine', () => {
  it('fails the batch before any sample runs, with the connection error', async () => {
    const url = await closedPort();
    const app = await startTestApp({ sim: false, healthIntervalMs: 60_000, engines: [{ id: 'gone', kind: 'vllm', replicas: [url], model: MODEL, mode: 'chat' }] });
    apps.push(app);
    const view = await runBatch(app, 'gone');
    expect(view.status).toBe('failed');
    expect(view.error).toMatch(/^engine gone: no replica answers its health check: engine unreachable at http:\/\/127\.0\.0\.1:\d+: connect ECONNREFUSED/);
    expect(view.counts.queued).toBe(view.counts.total);
  });

  it('a sample whose engine calls fail reports the engine error', async () => {
    // healthy by its health route, but every generation call loses its connection
    const url = await listen((req, res) => {
      if (req.url === '/health') { res.end('ok'); return; }
      req.socket.destroy();
    });
    const app = await startTestApp({ sim: false, healthIntervalMs: 60_000, engines: [{ id: 'flaky', kind: 'vllm', replicas: [url], model: MODEL, mode: 'chat' }] });
    apps.push(app);
    const view = await runBatch(app, 'flaky');
    expect(view.status).toBe('completed');
    const [session] = (await app.store.sessions.list({ batchId: view.id }));
    expect(session.status).toBe('failed');
    expect(String(session.metadata.error)).toMatch(/engine calls? failed(, the last)?: engine unreachable at http:\/\/127\.0\.0\.1:\d+: .+; agent exited with/);
  }, 60_000);
});
