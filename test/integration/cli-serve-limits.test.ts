// `rollgate serve` flags for the limits an operator tunes: engine timeouts, body size, calls in flight
// per session. A real `serve` process against an engine that never answers a generation.
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialectCall, expectErrorBody, MODEL, startCli, type Child } from './fault-helpers.js';

let engine: Server;
let serve: Child;
const dir = mkdtempSync(join(tmpdir(), 'rollgate-serve-limits-'));

beforeAll(async () => {
  // Healthy, lists the model, and never answers a generation.
  engine = createServer((req, res) => {
    if (req.url === '/health') return res.writeHead(200).end();
    if (req.url === '/v1/models') return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: [{ id: MODEL, max_model_len: 32768 }] }));
    req.resume();
  });
  await new Promise<void>((r) => engine.listen(0, '127.0.0.1', r));
  const port = (engine.address() as { port: number }).port;
  writeFileSync(join(dir, 'topology.yaml'), `engines:\n  - id: silent\n    kind: vllm\n    replicas: [http://127.0.0.1:${port}]\n    model: ${MODEL}\n    mode: chat\n`);
  serve = await startCli(['serve', '--port', '0', '--data-dir', join(dir, 'data'), '--no-sim', '--topology', join(dir, 'topology.yaml'),
    '--engine-timeout', '0.5', '--max-body-mb', '0.02', '--max-concurrent-per-session', '1']);
}, 90_000);
afterAll(async () => {
  await serve?.kill();
  engine?.closeAllConnections();
  await new Promise((r) => engine?.close(r));
  rmSync(dir, { recursive: true, force: true });
});

async function session(): Promise<{ key: string }> {
  const res = await fetch(`${serve.url}/api/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  return res.json() as Promise<{ key: string }>;
}

async function send(call: { url: string; init: RequestInit }) {
  const res = await fetch(call.url, call.init);
  const text = await res.text();
  let body: unknown = null;
  try { body = JSON.parse(text); } catch { /* not JSON */ }
  return { status: res.status, body, text };
}

describe('rollgate serve limits', () => {
  it('--engine-timeout: a silent engine gives the agent a 504 after that long', async () => {
    const s = await session();
    const t0 = Date.now();
    const res = await send(dialectCall('openai-chat', serve.url, s.key, { stream: false }));
    expect(Date.now() - t0).toBeLessThan(5000);
    expectErrorBody('openai-chat', 504, res);
    expect(JSON.stringify(res.body)).toMatch(/no response within 500 ms/);
  });

  it('--max-concurrent-per-session: the second call in flight gets a 429 in the dialect', async () => {
    const s = await session();
    const [a, b] = await Promise.all([
      send(dialectCall('anthropic', serve.url, s.key, { stream: false })),
      new Promise((r) => setTimeout(r, 100)).then(() => send(dialectCall('anthropic', serve.url, s.key, { stream: false }))),
    ]);
    expect(a.status).toBe(504);
    expectErrorBody('anthropic', 429, b);
  });

  it('--max-body-mb: a bigger body gets a 413 in the dialect', async () => {
    const s = await session();
    const res = await send(dialectCall('openai-chat', serve.url, s.key, { stream: false, text: 'x'.repeat(30_000) }));
    expectErrorBody('openai-chat', 413, res);
  });
});
