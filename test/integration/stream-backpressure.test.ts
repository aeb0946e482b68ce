// Streaming honours backpressure (issue 18, item 8). An agent that stops reading its stream used to make
// Rollgate read the whole answer from the engine anyway and pile it up in memory (10 such agents took the
// server from 217 MB to over 1 GB). Now Rollgate stops reading the engine until the agent reads again. The
// engine writes one token at a time, honouring its socket's backpressure, and counts what it got out; the
// answer (160 MB) is far larger than what the two loopback connections' kernel buffers can hold.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { startStreamEngine, type StreamEngine } from '../helpers/stream-engine.js';
import { waitFor } from './fault-helpers.js';

const TOKENS = 40_000;
let engine: StreamEngine;
let app: TestApp;

beforeAll(async () => {
  engine = await startStreamEngine({ tokens: TOKENS, wordChars: 4000 });
  app = await startTestApp({ sim: false, engines: [{ id: 'big', kind: 'vllm', replicas: [engine.url], model: engine.model, mode: 'chat', tokenizer: 'builtin:qwen3' }] });
});
afterAll(async () => {
  await app.stop();
  await engine.close();
});

describe('an agent that stops reading its stream', () => {
  it('makes Rollgate stop reading the engine, and its leaving ends the engine call', async () => {
    const s = await app.createSession({ engine: 'big' });
    const body = JSON.stringify({ model: engine.model, messages: [{ role: 'user', content: 'Write a long story.' }], max_tokens: TOKENS, stream: true });
    const { port } = new URL(app.url);
    const agent = connect(Number(port), '127.0.0.1');
    agent.pause();
    agent.write(`POST /s/${s.key}/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);

    // Wait until the engine gets nothing more out (no progress for 2 s), or it wrote everything.
    let last = -1;
    await waitFor('the engine to stall or finish', async () => {
      await new Promise((r) => setTimeout(r, 2000));
      const settled = engine.written() === last || engine.written() === TOKENS;
      last = engine.written();
      return settled;
    }, 180_000, 0);
    expect(engine.written(), `the engine wrote ${engine.written()} of ${TOKENS} tokens to an agent that reads nothing`).toBeLessThan(TOKENS * 0.75);

    // The agent goes away: the engine call is aborted and the partial answer recorded as such.
    agent.destroy();
    const rec = await waitFor('the aborted record', async () => (await app.api(`/api/sessions/${s.id}/completions`)).completions[0], 30_000, 100);
    expect(rec.status).toBe('aborted');
  }, 240_000);
});
