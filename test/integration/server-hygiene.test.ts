// Issue 18, item 13, against a real server on loopback: sockets that send nothing or trickle their body are cut
// off; every 5xx is logged with a request id the client also gets; secret-looking fields in agent bodies are not
// stored; an export that meets a corrupt row says so in its last line; a dataset path that is not a dataset does
// not have its contents echoed back.
import { sqliteDatabaseOf } from '../../src-main/store/index.js';
import Database from 'better-sqlite3';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';
import { dialectCall } from './fault-helpers.js';

let app: TestApp;
const tmp = mkdtempSync(join(tmpdir(), 'rollgate-hygiene-'));
beforeAll(async () => {
  app = await startTestApp({
    requestTimeoutMs: 1000,
    // An engine nobody listens on: calls to it fail with a 502.
    engines: [{ id: 'gone', kind: 'vllm', replicas: ['http://127.0.0.1:9'], model: 'Qwen/Qwen3-8B', mode: 'chat', tokenizer: 'builtin:qwen3' }],
  });
});
afterAll(async () => {
  await app.stop();
  rmSync(tmp, { recursive: true, force: true });
});

/** Opens a raw connection, sends `data`, and resolves with what the server answered once it closes the socket. */
function rawUntilClosed(data: string): Promise<string> {
  const { port } = new URL(app.url);
  return new Promise((resolve) => {
    let got = '';
    const s = connect(Number(port), '127.0.0.1', () => { if (data) s.write(data); });
    s.on('data', (b) => { got += b.toString(); });
    s.on('close', () => resolve(got));
    s.on('error', () => undefined);
  });
}

describe('request and connection timeouts', () => {
  it('a connection that sends nothing is closed', async () => {
    await rawUntilClosed('');
  });

  it('a body that trickles in is answered 408 and cut off', async () => {
    const answer = await rawUntilClosed(`POST /api/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"x":`);
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
  });
});

describe('5xx logging', () => {
  it('logs every 5xx with the request id the client got in x-request-id, and never the session key', async () => {
    const s = await app.createSession({ engine: 'gone' });
    const logged: string[] = [];
    const spy = vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => { logged.push(args.join(' ')); });
    try {
      const c = dialectCall('anthropic', app.url, s.key, { stream: false, maxTokens: 16 });
      const res = await fetch(c.url, c.init);
      expect(res.status).toBeGreaterThanOrEqual(500);
      const id = res.headers.get('x-request-id');
      expect(id).toMatch(/^[0-9a-f]{16}$/);
      const line = logged.find((l) => l.includes(id!));
      expect(line, logged.join('\n')).toMatch(new RegExp(`^rollgate: ${res.status} on POST /s/:key/v1/messages \\(request ${id}\\): `));
      expect(logged.join('\n')).not.toContain(s.key);
    } finally {
      spy.mockRestore();
    }
  });
});

describe('secrets in request bodies', () => {
  it('api_key, apiKey and authorization fields are redacted before the request is stored', async () => {
    const s = await app.createSession({ engine: 'sim-vllm' });
    const c = dialectCall('openai-chat', app.url, s.key, {
      stream: false, text: 'What is 2 + 3?', maxTokens: 32,
      extra: { api_key: 'sk-secret-one', metadata: { apiKey: 'sk-secret-two', headers: { Authorization: 'Bearer sk-secret-three' } } },
    });
    expect((await fetch(c.url, c.init)).status).toBe(200);
    const [rec] = (await app.api(`/api/sessions/${s.id}/completions`)).completions;
    const stored = JSON.stringify(rec);
    for (const secret of ['sk-secret-one', 'sk-secret-two', 'sk-secret-three']) expect(stored).not.toContain(secret);
    expect(rec.requestReceived).toMatchObject({ api_key: '[redacted]', metadata: { apiKey: '[redacted]', headers: { Authorization: '[redacted]' } } });
    // Nothing else was touched.
    expect(rec.requestReceived.messages).toEqual([{ role: 'user', content: 'What is 2 + 3?' }]);
  });
});

describe('export that meets a corrupt row', () => {
  it('ends with an explicit error line, over the API and from the CLI', { timeout: 90_000 }, async () => {
    const s = await app.createSession({ engine: 'sim-vllm' });
    const c = dialectCall('openai-chat', app.url, s.key, { stream: false, text: 'What is 2 + 3?', maxTokens: 32 });
    expect((await fetch(c.url, c.init)).status).toBe(200);
    await app.api(`/api/sessions/${s.id}/finish`, { method: 'POST', body: JSON.stringify({ reward: 1 }) });
    const db = new Database(sqliteDatabaseOf(app.store).path);
    db.prepare('UPDATE completions SET output_ids = ? WHERE session_id = ?').run(Buffer.from([1, 2, 3]), s.id);
    db.close();

    const res = await fetch(`${app.url}/api/export?session=${s.id}`);
    const lines = (await res.text()).trim().split('\n');
    const last = JSON.parse(lines.at(-1)!);
    expect(last.error).toMatchObject({ type: 'export_incomplete', message: expect.stringMatching(/^export stopped after \d+ rows: .*this file is incomplete$/) });

    const out = join(tmp, 'export.jsonl');
    const cli = await runCli(['export', '--data-dir', app.dataDir, '--session', s.id, '--out', out, '--no-progress']);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toMatch(/export stopped after \d+ rows: .*this file is incomplete/);
    expect(JSON.parse(readFileSync(out, 'utf8').trim().split('\n').at(-1)!).error.type).toBe('export_incomplete');
  });
});

describe('dataset errors', () => {
  it('never echo the contents of a file that is not a dataset', async () => {
    const file = join(tmp, 'id_rsa');
    writeFileSync(file, '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n{"prompt": "sk-dataset-secret"\n');
    const res = await fetch(`${app.url}/api/batches`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ dataset: file, harness: 'builtin', engine: 'sim-vllm' }),
    });
    const text = await res.text();
    expect(res.status).toBe(400);
    expect(text).toMatch(/line 1: row: not valid JSON/);
    for (const leak of ['BEGIN OPENSSH', 'b3BlbnNzaC1rZXkt', 'sk-dataset-secret']) expect(text).not.toContain(leak);
    const cli = await runCli(['eval', '--dataset', file, '--harness', 'builtin', '--data-dir', join(tmp, 'eval')]);
    expect(cli.code).toBe(2);
    for (const leak of ['BEGIN OPENSSH', 'b3BlbnNzaC1rZXkt', 'sk-dataset-secret']) expect(cli.stderr).not.toContain(leak);
  });
});
