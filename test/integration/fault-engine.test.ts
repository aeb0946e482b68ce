// Engine faults (DESIGN §9 reliability, issue 8): an engine process killed mid-stream, an engine that hangs
// (headers and body timeouts), and an engine that answers garbage or wrong shapes. In every case the agent
// gets a well-formed error in its own dialect and the completion is recorded with status `error`.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { AGENT_DIALECTS, dialectCall, expectErrorBody, expectStreamError, MODEL, parseSse, startCli, streamUntilOutput, waitFor, type AgentDialect, type Child } from './fault-helpers.js';

async function recordsOf(app: TestApp, sessionId: string) {
  await app.store.writer.flush();
  return (await app.store.completions.listBySession(sessionId));
}

async function call(url: string, init: RequestInit): Promise<{ status: number; body: any; text: string }> {
  const res = await fetch(url, init);
  const text = await res.text();
  let body: any = null;
  try { body = JSON.parse(text); } catch { /* SSE or garbage */ }
  return { status: res.status, body, text };
}

describe('an engine process killed mid-stream', () => {
  // One standalone sim process per dialect (each is killed once), slow enough to be caught mid-answer.
  let sims: Child[] = [];
  let app: TestApp;
  beforeAll(async () => {
    sims = await Promise.all(AGENT_DIALECTS.map(() => startCli(['sim', '--flavor', 'vllm', '--port', '0', '--per-token-ms', '40'])));
    app = await startTestApp({
      sim: false,
      healthIntervalMs: 60_000,
      engines: AGENT_DIALECTS.map((d, i) => ({ id: `kill-${d}`, kind: 'vllm' as const, replicas: [sims[i]!.url], model: MODEL, mode: 'chat' as const, tokenizer: 'builtin:qwen3' })),
    });
  }, 90_000);
  afterAll(async () => {
    await app?.stop();
    await Promise.all(sims.map((s) => s.kill('SIGKILL')));
  });

  for (const [i, d] of AGENT_DIALECTS.entries()) {
    it(`${d}: the agent gets a ${d} error event and the record says incomplete`, async () => {
      const session = await app.createSession({ engine: `kill-${d}` });
      const stream = await streamUntilOutput(d, dialectCall(d, app.url, session.key, { stream: true }));
      expect(stream.status).toBe(200);
      await sims[i]!.kill('SIGKILL');
      const events = await stream.rest();
      expectStreamError(d, events);
      const recs = await waitFor('the error record', async () => {
        const r = await recordsOf(app, session.id);
        return r.length ? r : null;
      });
      expect(recs).toHaveLength(1);
      // Custody: the agent already had output, so the capture is incomplete, with the reason.
      expect(recs[0]).toMatchObject({ status: 'incomplete', incompleteReason: 'engine-error-mid-stream' });
      expect(recs[0]!.error).toMatch(/engine stream|socket|closed|terminated|ended/i);
      expect(recs[0]!.dialect).toBe(d === 'responses' ? 'openai-responses' : d);
    });
  }
});

// A fake vLLM whose behaviour each test picks. /health is always fine, so only generation misbehaves.
type Mode = (req: IncomingMessage, res: ServerResponse) => void;
function fakeEngine(): Promise<{ url: string; setMode(m: Mode): void; close(): Promise<void>; requests: () => number }> {
  let mode: Mode = (_q, r) => r.writeHead(500).end();
  let requests = 0;
  const server: Server = createServer((req, res) => {
    if (req.url === '/health') { res.writeHead(200).end(); return; }
    if (req.url === '/metrics') { res.writeHead(404).end(); return; }
    req.resume();
    req.on('end', () => { requests++; mode(req, res); });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => {
    const addr = server.address() as { port: number };
    resolve({
      url: `http://127.0.0.1:${addr.port}`,
      setMode: (m) => { mode = m; },
      requests: () => requests,
      close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
    });
  }));
}

const sse = (res: ServerResponse) => res.writeHead(200, { 'content-type': 'text/event-stream' });
const chunk = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
const first = { id: 'chatcmpl-x', object: 'chat.completion.chunk', model: MODEL, prompt_token_ids: [1, 2, 3], choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] };
const token = (text: string, id: number) => ({ id: 'chatcmpl-x', object: 'chat.completion.chunk', model: MODEL, choices: [{ index: 0, delta: { content: text }, logprobs: { content: [{ logprob: -0.5 }] }, token_ids: [id], finish_reason: null }] });

describe('an engine that hangs or answers garbage', () => {
  let engine: Awaited<ReturnType<typeof fakeEngine>>;
  let app: TestApp;
  beforeAll(async () => {
    engine = await fakeEngine();
    app = await startTestApp({
      sim: false,
      healthIntervalMs: 60_000,
      engineTimeouts: { headersMs: 400, bodyMs: 400 },
      engines: [{ id: 'fake', kind: 'vllm', replicas: [engine.url], model: MODEL, mode: 'chat', tokenizer: 'builtin:qwen3' }],
    });
  });
  afterAll(async () => {
    await app?.stop();
    await engine?.close();
  });

  for (const d of AGENT_DIALECTS) {
    it(`${d}: no response headers within the timeout → a ${d} 504, recorded as error`, async () => {
      engine.setMode(() => { /* never answers */ });
      const session = await app.createSession({ engine: 'fake' });
      const t0 = Date.now();
      const c = dialectCall(d, app.url, session.key, { stream: false });
      const res = await call(c.url, c.init);
      expect(Date.now() - t0).toBeLessThan(5000);
      expectErrorBody(d, 504, res);
      const [rec] = await recordsOf(app, session.id);
      expect(rec!.status).toBe('error');
      expect(rec!.error).toMatch(/no response within 400 ms/);
    });
  }

  it('an engine added through the API after start-up gets the same timeouts', async () => {
    engine.setMode(() => { /* never answers */ });
    const added = await fetch(`${app.url}/api/engines`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      // Another origin for the same engine: nothing about it was known at start-up.
      body: JSON.stringify({ id: 'fake-added', kind: 'vllm', replicas: [engine.url.replace('127.0.0.1', 'localhost')], model: MODEL, mode: 'chat', tokenizer: 'builtin:qwen3' }),
    });
    expect(added.status, await added.text()).toBeLessThan(300);
    try {
      const session = await app.createSession({ engine: 'fake-added' });
      const c = dialectCall('openai-chat' as AgentDialect, app.url, session.key, { stream: false });
      const res = await call(c.url, c.init);
      expectErrorBody('openai-chat' as AgentDialect, 504, res);
      const [rec] = await recordsOf(app, session.id);
      expect(rec!.error).toMatch(/no response within 400 ms/);
    } finally {
      await fetch(`${app.url}/api/engines/fake-added`, { method: 'DELETE' });
    }
  });

  for (const d of AGENT_DIALECTS) {
    it(`${d}: a stream that stalls after the first token → a ${d} error event, recorded as incomplete`, async () => {
      engine.setMode((_req, res) => { sse(res); res.write(chunk(first)); res.write(chunk(token('Hello', 9707))); /* then silence */ });
      const session = await app.createSession({ engine: 'fake' });
      const stream = await streamUntilOutput(d, dialectCall(d, app.url, session.key, { stream: true }));
      const events = await stream.rest();
      expectStreamError(d, events);
      const [rec] = await recordsOf(app, session.id);
      expect(rec).toMatchObject({ status: 'incomplete', incompleteReason: 'engine-error-mid-stream' });
      expect(rec!.error).toMatch(/stalled: nothing received for 400 ms/);
    });
  }

  const garbage: Array<{ name: string; mode: Mode; error: RegExp }> = [
    { name: 'an HTML page with status 200', mode: (_q, r) => r.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Bad gateway</body></html>'), error: /without \[DONE\]|prompt_token_ids/ },
    { name: 'a non-streaming JSON body', mode: (_q, r) => r.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 'x', choices: [{ message: { role: 'assistant', content: 'hi' } }] })), error: /without \[DONE\]|prompt_token_ids/ },
    { name: 'an empty 200', mode: (_q, r) => r.writeHead(200).end(), error: /without \[DONE\]|prompt_token_ids/ },
    { name: 'a stream event that is not JSON', mode: (_q, r) => { sse(r); r.end('data: {"id": "chatcmpl-x", "choices": [\n\ndata: [DONE]\n\n'); }, error: /malformed stream event/ },
    { name: 'stream events that are not objects', mode: (_q, r) => { sse(r); r.end('data: null\n\ndata: [1,2,3]\n\ndata: [DONE]\n\n'); }, error: /not a JSON object/ },
    { name: 'chunks missing prompt_token_ids', mode: (_q, r) => { sse(r); r.end(chunk({ choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: 'stop' }] }) + 'data: [DONE]\n\n'); }, error: /prompt_token_ids/ },
    { name: 'a stream cut before [DONE]', mode: (_q, r) => { sse(r); r.end(chunk(first) + chunk(token('Hi', 13048))); }, error: /without \[DONE\]/ },
    { name: 'an error page with status 500', mode: (_q, r) => r.writeHead(500, { 'content-type': 'text/html' }).end('<h1>Internal Server Error</h1>'), error: /Internal Server Error/ },
    { name: 'an in-stream error event', mode: (_q, r) => { sse(r); r.end(chunk(first) + chunk({ error: { message: 'CUDA out of memory', code: 500 } }) + 'data: [DONE]\n\n'); }, error: /CUDA out of memory/ },
  ];

  for (const g of garbage) {
    it(`${g.name}: every dialect gets its own error shape, streaming or not, and nothing is recorded as ok`, async () => {
      engine.setMode(g.mode);
      for (const d of AGENT_DIALECTS) {
        for (const stream of [false, true]) {
          const session = await app.createSession({ engine: 'fake' });
          const c = dialectCall(d, app.url, session.key, { stream });
          const res = await call(c.url, c.init);
          if (res.status === 200) {
            expect(stream, `${d} non-stream answered 200: ${res.text.slice(0, 300)}`).toBe(true);
            expectStreamError(d, parseSse(res.text));
          } else {
            expect(res.status, `${d} ${stream ? 'stream' : 'json'}: ${res.text.slice(0, 300)}`).toBeGreaterThanOrEqual(500);
            expect(res.status).toBeLessThan(600);
            expectErrorBody(d, res.status, res);
          }
          const recs = await recordsOf(app, session.id);
          expect(recs).toHaveLength(1);
          // error before the agent saw anything; incomplete (custody) once it had output or the ids are missing
          expect(['error', 'incomplete']).toContain(recs[0]!.status);
          if (g.name === 'chunks missing prompt_token_ids') expect(recs[0]!.incompleteReason).toBe('missing-ids');
          else if (recs[0]!.status === 'incomplete') expect(recs[0]!.incompleteReason).toBe('engine-error-mid-stream');
          expect(recs[0]!.error).toMatch(g.error);
        }
      }
    });
  }

  it('is still healthy afterwards: a well-formed engine answer goes through', async () => {
    engine.setMode((_q, r) => {
      sse(r);
      r.end(chunk(first) + chunk(token('Hi', 13048)) + chunk({ ...token('!', 0), choices: [{ index: 0, delta: { content: '!' }, logprobs: { content: [{ logprob: -0.1 }] }, token_ids: [0], finish_reason: 'stop' }] }) + 'data: [DONE]\n\n');
    });
    const session = await app.createSession({ engine: 'fake' });
    const c = dialectCall('openai-chat' as AgentDialect, app.url, session.key, { stream: false });
    const res = await call(c.url, c.init);
    expect(res.status).toBe(200);
    expect(res.body.choices[0].message.content).toBe('Hi!');
    const [rec] = await recordsOf(app, session.id);
    expect(rec!.status).toBe('ok');
    expect(Array.from(rec!.outputIds)).toEqual([13048, 0]);
  });
});
