// Sim engines over loopback: re-scoring parity, cross-flavour deltas, token-mode parity, knobs, pause.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimEngine, type SimEngine } from '../../src-main/engines/sim/index.js';

type Any = any;
async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: Any }> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await r.text();
  return { status: r.status, json: text ? JSON.parse(text) : null };
}

const MODEL = 'Qwen/Qwen3-8B';
const bashTool = { type: 'function', function: { name: 'Bash', description: 'Run a shell command', parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } } };

let vllm: SimEngine;
let sglang: SimEngine;
beforeAll(async () => {
  [vllm, sglang] = await Promise.all([
    startSimEngine({ flavor: 'vllm', ttftMs: 0, perTokenMs: 0, skill: 1 }),
    startSimEngine({ flavor: 'sglang', ttftMs: 0, perTokenMs: 0, skill: 1 }),
  ]);
});
afterAll(async () => {
  await Promise.all([vllm.close(), sglang.close()]);
});

describe('logprobs and re-scoring', () => {
  it('re-scoring a sample on the same flavour reproduces its logprobs; the other flavour differs slightly', async () => {
    const chat = await post(`${vllm.url}/v1/chat/completions`, {
      model: MODEL, messages: [{ role: 'user', content: 'What is 17 * 3?' }], seed: 3, logprobs: true, return_token_ids: true,
    });
    const P: number[] = chat.json.prompt_token_ids;
    const out: number[] = chat.json.choices[0].token_ids;
    const lps: number[] = chat.json.choices[0].logprobs.content.map((x: Any) => x.logprob);
    expect(lps).toHaveLength(out.length);
    for (const lp of lps) expect(lp <= -0.0001 && lp >= -2.6).toBe(true);

    const scored = await post(`${vllm.url}/v1/completions`, { model: MODEL, prompt: [...P, ...out], max_tokens: 0, prompt_logprobs: 0, return_token_ids: true });
    expect(scored.status).toBe(200);
    const pl = scored.json.choices[0].prompt_logprobs;
    expect(pl[0]).toBeNull();
    expect(out.map((id, i) => pl[P.length + i][String(id)].logprob)).toEqual(lps);

    const sg = await post(`${sglang.url}/generate`, { input_ids: [...P, ...out], sampling_params: { max_new_tokens: 0 }, return_logprob: true, logprob_start_len: P.length });
    const sgl: number[] = sg.json.meta_info.input_token_logprobs.map((t: Any) => t[0]);
    expect(sg.json.meta_info.input_token_logprobs.map((t: Any) => t[1])).toEqual(out);
    const deltas = sgl.map((v, i) => Math.abs(v - lps[i]));
    const mean = deltas.reduce((a, b) => a + b, 0) / deltas.length;
    expect(mean).toBeGreaterThan(0);
    expect(mean).toBeLessThan(0.3);
    expect(deltas.filter((d) => d < 0.3).length / deltas.length).toBeGreaterThan(0.9);
  });

  it('SGLang /generate samples re-score exactly on SGLang', async () => {
    const tok = await post(`${sglang.url}/tokenize`, { messages: [{ role: 'user', content: 'What is 5+8?' }] });
    const P: number[] = tok.json.tokens;
    const g = await post(`${sglang.url}/generate`, { input_ids: P, sampling_params: { sampling_seed: 1 }, return_logprob: true });
    const out: number[] = g.json.output_ids;
    const lps = g.json.meta_info.output_token_logprobs.map((t: Any) => t[0]);
    const s = await post(`${sglang.url}/generate`, { input_ids: [...P, ...out], sampling_params: { max_new_tokens: 0 }, return_logprob: true, logprob_start_len: P.length });
    expect(s.json.meta_info.input_token_logprobs.map((t: Any) => t[0])).toEqual(lps);
    expect(s.json.meta_info.finish_reason).toEqual({ type: 'length', length: 0 });
  });
});

describe('token mode parity', () => {
  it('/generate with the chat prompt ids behaves like chat (same seed, same output ids)', async () => {
    const req = { model: MODEL, messages: [{ role: 'user', content: 'How many lines are in notes.txt?' }], tools: [bashTool], seed: 11, return_token_ids: true };
    const chat = await post(`${vllm.url}/v1/chat/completions`, req);
    expect(chat.json.choices[0].finish_reason).toBe('tool_calls');
    const call = chat.json.choices[0].message.tool_calls[0];
    expect(call.id).toMatch(/^chatcmpl-tool-[0-9a-f]{32}$/);
    expect(JSON.parse(call.function.arguments)).toEqual({ command: 'wc -l < notes.txt' });
    const g = await post(`${sglang.url}/generate`, { input_ids: chat.json.prompt_token_ids, sampling_params: { sampling_seed: 11, max_new_tokens: 512 } });
    expect(g.json.output_ids).toEqual(chat.json.choices[0].token_ids);
    expect(g.json.text).toContain('<tool_call>');

    const sg = await post(`${sglang.url}/v1/chat/completions`, { ...req, return_token_ids: undefined });
    expect(sg.json.choices[0].message.tool_calls[0].id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(sg.json.choices[0]).toMatchObject({ finish_reason: 'tool_calls', matched_stop: null });
  });

  it('n>1 gives separate choices and summed usage', async () => {
    const r = await post(`${vllm.url}/v1/chat/completions`, { model: MODEL, messages: [{ role: 'user', content: 'hi' }], n: 3, return_token_ids: true });
    expect(r.json.choices.map((c: Any) => c.index)).toEqual([0, 1, 2]);
    expect(r.json.usage.completion_tokens).toBe(r.json.choices.reduce((a: number, c: Any) => a + c.token_ids.length, 0));
  });
});

describe('knobs and control', () => {
  it('streams incrementally with real timers', async () => {
    const e = await startSimEngine({ flavor: 'vllm', ttftMs: 0, perTokenMs: 15 });
    try {
      const t0 = Date.now();
      const r = await fetch(`${e.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], stream: true }) });
      const reader = r.body!.getReader();
      await reader.read();
      const first = Date.now() - t0;
      while (!(await reader.read()).done);
      const total = Date.now() - t0;
      expect(total - first).toBeGreaterThan(150);
    } finally {
      await e.close();
    }
  });

  it('failureRate answers 500 in each flavour\'s error shape', async () => {
    vllm.setKnobs({ failureRate: 1 });
    sglang.setKnobs({ failureRate: 1 });
    try {
      const a = await post(`${vllm.url}/v1/chat/completions`, { model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
      expect(a.status).toBe(500);
      expect(a.json).toMatchObject({ error: { type: 'InternalServerError', code: 500, param: null } });
      const b = await post(`${sglang.url}/v1/chat/completions`, { model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
      expect(b.status).toBe(500);
      expect(b.json).toMatchObject({ object: 'error', code: 500 });
      const c = await post(`${sglang.url}/generate`, { text: 'hi' });
      expect(c.status).toBe(500);
      expect(Object.keys(c.json)).toEqual(['error']);
    } finally {
      vllm.setKnobs({ failureRate: 0 });
      sglang.setKnobs({ failureRate: 0 });
    }
  });

  it('midStreamDropRate destroys the socket mid-stream (no [DONE])', async () => {
    vllm.setKnobs({ midStreamDropRate: 1 });
    try {
      const r = await fetch(`${vllm.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'What is 2+2?' }], stream: true }) });
      expect(r.status).toBe(200); // the stream started before the engine "died"
      let text = '';
      let failed = false;
      const reader = r.body!.getReader();
      try {
        for (let c = await reader.read(); !c.done; c = await reader.read()) text += new TextDecoder().decode(c.value);
      } catch {
        failed = true;
      }
      expect(failed).toBe(true);
      expect(text).toMatch(/^data: /);
      expect(text).not.toContain('[DONE]');
      expect(vllm.stats().dropsInjected).toBeGreaterThan(0);
    } finally {
      vllm.setKnobs({ midStreamDropRate: 0 });
    }
  });

  it('records the data-parallel rank (vLLM header, SGLang body)', async () => {
    await post(`${vllm.url}/v1/chat/completions`, { model: MODEL, messages: [{ role: 'user', content: 'hi' }] }, { 'X-data-parallel-rank': '1' });
    await post(`${sglang.url}/generate`, { text: 'hi', data_parallel_rank: 2 });
    expect(vllm.stats().dpRanks['1']).toBe(1);
    expect(sglang.stats().dpRanks['2']).toBe(1);
  });

  it('vLLM pause holds new generations until resume; metrics show them waiting', async () => {
    expect((await post(`${vllm.url}/pause?mode=keep`, {})).json).toEqual({ status: 'paused' });
    let done = false;
    const pending = post(`${vllm.url}/v1/chat/completions`, { model: MODEL, messages: [{ role: 'user', content: 'hi' }] }).then((r) => {
      done = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 150));
    expect(done).toBe(false);
    expect(vllm.stats().waiting).toBe(1);
    expect(await (await fetch(`${vllm.url}/metrics`)).text()).toMatch(/^vllm:num_requests_waiting\{[^}]*\} 1\.0$/m);
    await post(`${vllm.url}/resume`, {});
    expect((await pending).status).toBe(200);
  });

  it('pause mode=abort ends in-flight streams with finish_reason abort', async () => {
    const e = await startSimEngine({ flavor: 'vllm', ttftMs: 0, perTokenMs: 20 });
    try {
      const r = await fetch(`${e.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], stream: true }) });
      const reader = r.body!.getReader();
      await reader.read();
      await post(`${e.url}/pause?mode=abort`, {});
      let text = '';
      for (let c = await reader.read(); !c.done; c = await reader.read()) text += new TextDecoder().decode(c.value);
      expect(text).toContain('"finish_reason":"abort"');
      expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
      await post(`${e.url}/resume`, {});
    } finally {
      await e.close();
    }
  });

  it('SGLang pause_generation / continue_generation gate /generate', async () => {
    await post(`${sglang.url}/pause_generation`, { mode: 'in_place' });
    let done = false;
    const pending = post(`${sglang.url}/generate`, { text: 'hi' }).then((r) => {
      done = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(done).toBe(false);
    await post(`${sglang.url}/continue_generation`, {});
    expect((await pending).status).toBe(200);
  });

  it('close() stops the server', async () => {
    const e = await startSimEngine({ flavor: 'sglang' });
    expect((await fetch(`${e.url}/health`)).status).toBe(200);
    await e.close();
    await expect(fetch(`${e.url}/health`)).rejects.toThrow();
  });
});
