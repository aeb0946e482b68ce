// The sim reads a task holding one 225k-character word (issue 18, item 10). Its intent patterns used to
// backtrack over the whole word at every start position: seconds per 100k characters, growing with the square
// of the length, during which every session of the process waited. Now the call answers like any other.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';

let app: TestApp;
beforeAll(async () => { app = await startTestApp(); });
afterAll(async () => { await app.stop(); });

describe('sim: a task with a huge word', () => {
  it('answers, and another session is served meanwhile', async () => {
    const [a, b] = [await app.createSession({ engine: 'sim-vllm' }), await app.createSession({ engine: 'sim-vllm' })];
    const call = (key: string, content: string) => fetch(`${app.url}/s/${key}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'Qwen/Qwen3-8B', messages: [{ role: 'user', content }], max_tokens: 32 }),
    }).then(async (r) => ({ status: r.status, body: await r.json() }));
    const huge = call(a.key, `Please look at ${'abcdefgh/'.repeat(25_000)} and tell me what it is.`);
    const small = await call(b.key, 'What is 2 + 3?');
    expect(small.status).toBe(200);
    const big = await huge;
    expect(big.status, JSON.stringify(big.body).slice(0, 300)).toBe(200);
    expect(big.body.choices[0].message.content).toEqual(expect.any(String));
  }, 30_000);
});
