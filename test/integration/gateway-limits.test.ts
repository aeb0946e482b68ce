// Bad input gets a 400 in the agent's dialect, naming what is wrong (issue 18, item 12): a body nested 5,000
// levels deep (it overflowed the stack: a 500), and sampling parameters no engine can honour — a negative
// temperature, top_p above 1, an output budget larger than the model's whole context (it was served anyway).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { AGENT_DIALECTS, dialectCall, expectErrorBody, type AgentDialect } from './fault-helpers.js';

let app: TestApp;
let key: string;
beforeAll(async () => {
  app = await startTestApp();
  key = (await app.createSession({ engine: 'sim-vllm' })).key;
});
afterAll(async () => { await app.stop(); });

async function send(d: AgentDialect, opts: { maxTokens?: number; sampling?: Record<string, number>; body?: (json: string) => string }) {
  const gemini = d === 'gemini';
  const extra = opts.sampling ? (gemini ? { generationConfig: { maxOutputTokens: opts.maxTokens ?? 32, ...opts.sampling } } : opts.sampling) : undefined;
  const c = dialectCall(d, app.url, key, { stream: false, text: 'Say hi.', maxTokens: opts.maxTokens ?? 32, extra });
  const body = opts.body ? opts.body(c.init.body as string) : c.init.body;
  const res = await fetch(c.url, { ...c.init, body });
  return { status: res.status, body: await res.json() };
}

const message = (r: { body: any }): string => r.body.error?.message ?? '';
const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;

describe.each(AGENT_DIALECTS)('%s', (d) => {
  it('a body nested 5,000 levels deep is a 400, not a 500', async () => {
    const r = await send(d, { body: (json) => `${json.slice(0, -1)},"metadata_deep":${deep}}` });
    expectErrorBody(d, 400, r);
    expect(message(r)).toMatch(/nests deeper than \d+ levels/);
  });

  it('a negative temperature is a 400 naming the field', async () => {
    const r = await send(d, { sampling: { temperature: -0.5 } });
    expectErrorBody(d, 400, r);
    expect(message(r)).toContain(d === 'gemini' ? 'generationConfig.temperature' : 'temperature');
  });

  it('top_p above 1 is a 400 naming the field', async () => {
    const r = await send(d, { sampling: d === 'gemini' ? { topP: 1.5 } : { top_p: 1.5 } });
    expectErrorBody(d, 400, r);
    expect(message(r)).toContain(d === 'gemini' ? 'generationConfig.topP' : 'top_p');
  });

  it('an output budget beyond the whole context is a 400 naming the field', async () => {
    const r = await send(d, { maxTokens: 10_000_000 });
    expectErrorBody(d, 400, r);
    const name = { 'openai-chat': 'max_tokens', responses: 'max_output_tokens', anthropic: 'max_tokens', gemini: 'generationConfig.maxOutputTokens' }[d];
    expect(message(r)).toContain(`${name}: 10000000 is more than the model's whole context (131072 tokens)`);
  });

  it('sane values are served', async () => {
    expect((await send(d, { maxTokens: 32_000, sampling: d === 'gemini' ? { temperature: 0.7, topP: 1 } : { temperature: 0.7, top_p: 1 } })).status).toBe(200);
  });
});
