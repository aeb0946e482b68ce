// Every sim response is compared with the engine fixtures key by key: same key sets at every level,
// null vs absent, value types, id formats, SSE framing. Values are illustrative in the fixtures, so
// only the listed ones are compared exactly.
import { ENGINE_FIXTURES_DIR } from '../helpers/paths.js';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimEngine, type SimEngine } from '../../src-main/engines/sim/index.js';

const FIX = ENGINE_FIXTURES_DIR;
const fixture = (name: string): any => JSON.parse(readFileSync(`${FIX}/${name}`, 'utf8'));

type Json = unknown;
const kind = (v: Json) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/** Objects whose keys are data (legacy top_logprobs `{token: logprob}`), compared value by value. */
const MAP_PATH = /\.logprobs\.top_logprobs\[\d+\]$/;

/** Shape differences between `actual` and `expected` (empty = same shape). */
function shapeDiff(actual: Json, expected: Json, path = '$', out: string[] = []): string[] {
  if (kind(actual) !== kind(expected)) {
    out.push(`${path}: ${kind(actual)} vs expected ${kind(expected)}`);
    return out;
  }
  if (Array.isArray(expected)) {
    const a = actual as Json[];
    if (!expected.length || !a.length) return out;
    // Tuples (mixed element kinds, e.g. [logprob, id, text]) compare by position; lists by each element.
    const tuple = new Set(expected.map(kind)).size > 1 && expected.length <= 4 && !expected.some((e) => kind(e) === 'object');
    if (tuple) {
      if (a.length !== expected.length) out.push(`${path}: tuple length ${a.length} vs ${expected.length}`);
      a.forEach((v, i) => shapeDiff(v, expected[i], `${path}[${i}]`, out));
    } else {
      const proto = expected.find((e) => e !== null) ?? expected[0];
      a.forEach((v, i) => (v === null && expected.includes(null) ? null : shapeDiff(v, proto, `${path}[${i}]`, out)));
    }
    return out;
  }
  if (kind(expected) === 'object') {
    const a = actual as Record<string, Json>;
    const e = expected as Record<string, Json>;
    if (MAP_PATH.test(path)) {
      const proto = Object.values(e)[0];
      for (const [k, v] of Object.entries(a)) shapeDiff(v, proto, `${path}[${JSON.stringify(k)}]`, out);
      return out;
    }
    const ak = Object.keys(a).sort();
    const ek = Object.keys(e).sort();
    for (const k of ek) if (!(k in a)) out.push(`${path}.${k}: missing`);
    for (const k of ak) if (!(k in e)) out.push(`${path}.${k}: unexpected`);
    for (const k of ek) if (k in a) shapeDiff(a[k], e[k], `${path}.${k}`, out);
  }
  return out;
}

function expectShape(actual: Json, expected: Json) {
  expect(shapeDiff(actual, expected)).toEqual([]);
}

// Self-check: the comparator must be able to fail.
describe('shapeDiff', () => {
  it('reports missing, extra, null-vs-value and nested differences', () => {
    expect(shapeDiff({ a: 1, b: null }, { a: 2, b: null })).toEqual([]);
    expect(shapeDiff({ a: 1 }, { a: 1, b: null })).toEqual(['$.b: missing']);
    expect(shapeDiff({ a: 1, c: 2 }, { a: 1 })).toEqual(['$.c: unexpected']);
    expect(shapeDiff({ a: 1 }, { a: null })).toEqual(['$.a: number vs expected null']);
    expect(shapeDiff({ l: [{ x: 1 }, { y: 1 }] }, { l: [{ x: 0 }] })).toEqual(['$.l[1].x: missing', '$.l[1].y: unexpected']);
    expect(shapeDiff([[-1, 2, null]], [[-1, 2, 'a']])).toEqual(['$[0][2]: null vs expected string']);
  });
});

interface Sse { raw: string; events: Json[] }
async function post(url: string, body: Json, headers: Record<string, string> = {}): Promise<{ status: number; json: Json; text: string }> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await r.text();
  let json: Json = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  return { status: r.status, json, text };
}
async function stream(url: string, body: Json): Promise<Sse> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const raw = await r.text();
  // Framing: only `data: <payload>\n\n` events, ending with the literal [DONE] event.
  expect(raw).toMatch(/^(data: [^\n]+\n\n)+$/);
  expect(raw.endsWith('data: [DONE]\n\n')).toBe(true);
  const payloads = raw.split('\n\n').filter(Boolean).map((e) => e.slice('data: '.length));
  expect(payloads.filter((p) => p === '[DONE]')).toHaveLength(1);
  return { raw, events: payloads.slice(0, -1).map((p) => JSON.parse(p)) };
}
const get = async (url: string) => {
  const r = await fetch(url);
  return { status: r.status, text: await r.text(), type: r.headers.get('content-type') };
};

const HEX32 = /^[0-9a-f]{32}$/;

describe('sim vLLM flavour vs fixtures', () => {
  let e: SimEngine;
  let both: SimEngine;
  beforeAll(async () => {
    e = await startSimEngine({ flavor: 'vllm', ttftMs: 0, perTokenMs: 0, reasoningField: 'reasoning_content' });
    both = await startSimEngine({ flavor: 'vllm', ttftMs: 0, perTokenMs: 0 });
  });
  afterAll(async () => {
    await e.close();
    await both.close();
  });

  it('chat non-stream with logprobs + token ids', async () => {
    const f = fixture('vllm-chat-nonstream-logprobs-token-ids.json');
    const r = await post(`${e.url}/v1/chat/completions`, f.request);
    expect(r.status).toBe(200);
    const j = r.json as any;
    expectShape(j, f.response);
    expect(j.id).toMatch(/^chatcmpl-[0-9a-f]{32}$/);
    expect(j.object).toBe('chat.completion');
    expect(j.prompt_token_ids).toEqual(f.response.prompt_token_ids);
    const c = j.choices[0];
    expect(c.token_ids.at(-1)).toBe(151645);
    expect(c.logprobs.content).toHaveLength(c.token_ids.length);
    expect(c.logprobs.content.at(-1).token).toBe('<|im_end|>');
    expect(c.logprobs.content.every((x: { top_logprobs: unknown[] }) => x.top_logprobs.length === 2)).toBe(true);
    expect(j.usage.completion_tokens).toBe(c.token_ids.length);
    expect(j.usage.prompt_tokens).toBe(19);
    expect(c.finish_reason).toBe('stop');
    expect(c.stop_reason).toBeNull();
    expect(c.message.content).not.toContain('<|im_end|>');
  });

  it('chat non-stream: return_tokens_as_token_ids variant', async () => {
    const f = fixture('vllm-chat-nonstream-logprobs-token-ids.json');
    const r = await post(`${e.url}/v1/chat/completions`, { ...f.request, ...f.variant_return_tokens_as_token_ids.request_delta });
    const entries = (r.json as any).choices[0].logprobs.content.slice(0, 2);
    expectShape(entries, f.variant_return_tokens_as_token_ids.response_choices0_logprobs_content_first2);
    for (const x of entries) {
      expect(x.token).toMatch(/^token_id:\d+$/);
      for (const t of x.top_logprobs) expect(t.token).toMatch(/^token_id:\d+$/);
    }
  });

  it('newer vLLM (default reasoningField "both") adds exactly `reasoning` to the message', async () => {
    const f = fixture('vllm-chat-nonstream-logprobs-token-ids.json');
    const j = (await post(`${both.url}/v1/chat/completions`, f.request)).json as any;
    expect(shapeDiff(j, f.response)).toEqual(['$.choices[0].message.reasoning: unexpected']);
  });

  it('chat stream: exclude_unset chunk shapes, prompt ids only first, per-chunk ids, usage chunk', async () => {
    const f = fixture('vllm-chat-stream-chunks.json');
    const fx = f.sse_data_payloads;
    const { events } = await stream(`${e.url}/v1/chat/completions`, f.request);
    const ev = events as any[];
    expectShape(ev[0], fx[0]);
    expect(ev[0].prompt_token_ids).toEqual(fx[0].prompt_token_ids);
    const usage = ev.at(-1);
    expectShape(usage, fx.at(-1));
    const finish = ev.at(-2);
    expectShape(finish, fx.at(-2));
    expect(finish.choices[0].finish_reason).toBe('stop');
    for (const mid of ev.slice(1, -2)) expectShape(mid, fx[1]);
    for (const x of ev.slice(1)) expect('prompt_token_ids' in x).toBe(false);
    for (const x of ev) expect(x.id).toBe(ev[0].id);
    expect(ev[0].id).toMatch(/^chatcmpl-[0-9a-f]{32}$/);
    const ids = ev.slice(1, -1).flatMap((x) => x.choices[0].token_ids);
    expect(ids.at(-1)).toBe(151645);
    expect(finish.choices[0].token_ids.length).toBe(2); // last text token + EOS share the final chunk
    expect(usage.usage.completion_tokens).toBe(ids.length);
    // Same seed, same output as the non-stream call.
    const nonStream = (await post(`${e.url}/v1/chat/completions`, { ...f.request, stream: false, stream_options: undefined })).json as { choices: Array<{ token_ids: number[]; message: { content: string } }> };
    expect(ids).toEqual(nonStream.choices[0].token_ids);
    expect(ev.slice(1, -1).map((x) => x.choices[0].delta.content ?? '').join('')).toBe(nonStream.choices[0].message.content);
  });

  it('chat stream without return_token_ids: prompt_token_ids and token_ids keys present as null', async () => {
    const f = fixture('vllm-chat-stream-chunks.json');
    const { events } = await stream(`${e.url}/v1/chat/completions`, { ...f.request, return_token_ids: false });
    const ev = events as any[];
    expect(ev[0].prompt_token_ids).toBeNull();
    expect(ev[1].choices[0].token_ids).toBeNull();
  });

  it('completions with a text prompt and return_token_ids', async () => {
    const f = fixture('vllm-completions-nonstream-token-ids.json');
    const r = await post(`${e.url}/v1/completions`, f.request);
    expect(r.status).toBe(200);
    const j = r.json as any;
    expectShape(j, f.response);
    expect(j.id).toMatch(/^cmpl-[0-9a-f]{32}$/);
    expect(j.choices[0].prompt_token_ids).toEqual(f.response.choices[0].prompt_token_ids);
    expect(j.choices[0].finish_reason).toBe('length');
    expect(j.choices[0].token_ids).toHaveLength(3);
  });

  it('tokenize (chat and prompt forms) and detokenize', async () => {
    const f = fixture('vllm-tokenize.json');
    for (const form of ['chat_form', 'prompt_form']) {
      const r = await post(`${e.url}/tokenize`, f[form].request);
      expect(r.json).toEqual(f[form].response);
    }
    expect((await post(`${e.url}/detokenize`, f.detokenize.request)).json).toEqual(f.detokenize.response);
  });

  it('errors: context length 400 and unknown model 404 in the nested envelope', async () => {
    const f = fixture('vllm-error-context-length.json');
    const r = await post(`${e.url}/v1/chat/completions`, { model: 'Qwen/Qwen3-8B', messages: [{ role: 'user', content: 'hi' }], max_tokens: 41000 });
    expect(r.status).toBe(f.http_status);
    expectShape(r.json, f.response);
    expect((r.json as any).error.message).toMatch(/maximum context length/);
    expect((r.json as any).error.code).toBe(400);
    const nf = await post(`${e.url}/v1/chat/completions`, { model: 'foo', messages: [{ role: 'user', content: 'hi' }] });
    expect(nf.status).toBe(404);
    expect(nf.json).toEqual(f.model_not_found.response);
  });

  it('mid-stream error: one error event, then [DONE]', async () => {
    const f = fixture('vllm-error-context-length.json');
    e.setKnobs({ midStreamErrorRate: 1 });
    try {
      const { events } = await stream(`${e.url}/v1/chat/completions`, { model: 'Qwen/Qwen3-8B', messages: [{ role: 'user', content: 'hi' }], stream: true });
      const last = events.at(-1);
      expectShape(last, f.streaming_error_event.sse_data_payload);
      expect(events.filter((x) => (x as object) && 'error' in (x as object))).toHaveLength(1);
    } finally {
      e.setKnobs({ midStreamErrorRate: 0 });
    }
  });

  it('control endpoints: models, health, version, pause/resume/is_paused, metrics', async () => {
    const f = fixture('vllm-control-endpoints.json');
    const models = await get(`${e.url}/v1/models`);
    expectShape(JSON.parse(models.text), f['GET /v1/models']);
    const h = await get(`${e.url}/health`);
    expect([h.status, h.text]).toEqual([200, '']);
    expectShape(JSON.parse((await get(`${e.url}/version`)).text), f['GET /version']);
    expect((await post(`${e.url}/pause?mode=abort&clear_cache=true`, {})).json).toEqual(f['POST /pause?mode=abort&clear_cache=true'].body);
    expect(JSON.parse((await get(`${e.url}/is_paused`)).text)).toEqual({ is_paused: true });
    expect((await post(`${e.url}/resume`, {})).json).toEqual(f['POST /resume'].body);
    expect(JSON.parse((await get(`${e.url}/is_paused`)).text)).toEqual(f['GET /is_paused'].body);
    const m = (await get(`${e.url}/metrics`)).text;
    for (const name of ['vllm:num_requests_running', 'vllm:num_requests_waiting', 'vllm:kv_cache_usage_perc']) {
      expect(m).toMatch(new RegExp(`^# TYPE ${name} gauge$`, 'm'));
      expect(m).toMatch(new RegExp(`^${name}\\{engine="0",model_name="Qwen/Qwen3-8B"\\} \\d+(\\.\\d+)?$`, 'm'));
    }
  });
});

describe('sim SGLang flavour vs fixtures', () => {
  let e: SimEngine;
  beforeAll(async () => {
    e = await startSimEngine({ flavor: 'sglang', ttftMs: 0, perTokenMs: 0 });
  });
  afterAll(async () => {
    await e.close();
  });

  it('/generate non-stream with logprobs', async () => {
    const f = fixture('sglang-generate-logprobs.json');
    const r = await post(`${e.url}/generate`, f.request);
    expect(r.status).toBe(200);
    const j = r.json as any;
    expectShape(j, f.response);
    expect(j.meta_info.id).toBe(f.request.rid);
    expect(j.output_ids.at(-1)).toBe(151645);
    expect(j.meta_info.finish_reason).toEqual({ type: 'stop', matched: 151645 });
    expect(j.meta_info.output_token_logprobs).toHaveLength(j.output_ids.length);
    expect(j.meta_info.completion_tokens).toBe(j.output_ids.length);
    expect(j.meta_info.input_token_logprobs).toHaveLength(1); // logprob_start_len -1: the last prompt token only
    expect(j.text).not.toContain('<|im_end|>');
  });

  it('/generate stream: cumulative events, finish only on the last', async () => {
    const f = fixture('sglang-generate-logprobs.json');
    const fx = f.stream_variant.sse_data_payloads;
    const { events } = await stream(`${e.url}/generate`, { ...f.request, ...f.stream_variant.request_delta });
    const ev = events as any[];
    for (const x of ev.slice(0, -1)) expectShape(x, fx[0]);
    expectShape(ev.at(-1), fx.at(-1));
    for (let i = 1; i < ev.length; i++) {
      expect(ev[i].output_ids.slice(0, ev[i - 1].output_ids.length)).toEqual(ev[i - 1].output_ids);
      expect(ev[i].text.startsWith(ev[i - 1].text)).toBe(true);
      expect(ev[i].meta_info.output_token_logprobs).toHaveLength(ev[i].output_ids.length);
    }
    expect(ev.at(-1).meta_info.finish_reason).toEqual({ type: 'stop', matched: 151645 });
  });

  it('/generate with text input and the length finish shape', async () => {
    const f = fixture('sglang-generate-logprobs.json');
    const r = await post(`${e.url}/generate`, { ...f.text_input_variant.request, sampling_params: { max_new_tokens: 3 } });
    const j = r.json as any;
    expect(j.meta_info.finish_reason).toEqual({ type: 'length', length: 3 });
    expect(Object.keys(j)).toEqual(['text', 'output_ids', 'meta_info']);
    expect('input_token_logprobs' in j.meta_info).toBe(false);
    expect(j.meta_info.id).toMatch(HEX32);
  });

  it('chat non-stream (0.5.x: no token ids)', async () => {
    const f = fixture('sglang-chat-nonstream.json');
    const r = await post(`${e.url}/v1/chat/completions`, f.request);
    const j = r.json as any;
    expectShape(j, f.response);
    expect(j.id).toMatch(HEX32);
    expect(j.model).toBe('Qwen/Qwen3-8B');
    expect(j.choices[0].matched_stop).toBe(151645);
    expect(j.metadata).toEqual({ weight_version: 'default' });
    expect(JSON.stringify(j)).not.toMatch(/token_ids/);
  });

  it('chat stream: all keys with nulls, separate finish chunk, usage chunk', async () => {
    const f = fixture('sglang-chat-stream-chunks.json');
    const fx = f.sse_data_payloads;
    const { events } = await stream(`${e.url}/v1/chat/completions`, f.request);
    const ev = events as any[];
    expectShape(ev[0], fx[0]);
    expect(ev[0].choices[0].delta).toEqual(fx[0].choices[0].delta);
    expectShape(ev.at(-1), fx.at(-1));
    expectShape(ev.at(-2), fx.at(-2));
    expect(ev.at(-2).choices[0].delta).toEqual({ role: null, content: null, reasoning_content: null, tool_calls: null });
    expect(ev.at(-2).choices[0].finish_reason).toBe('stop');
    const content = ev.slice(1, -2).filter((x) => x.choices[0].delta.content !== null);
    expect(content.length).toBeGreaterThan(0);
    for (const x of content) expectShape(x, fx[1]);
    for (const x of ev) expect(x.id).toMatch(HEX32);
    const nlp = content.flatMap((x) => x.choices[0].logprobs.content).length;
    expect(nlp).toBe(ev.at(-1).usage.completion_tokens); // EOS logprob rides on the last content chunk
  });

  it('chat stream: no usage chunk unless include_usage (default false)', async () => {
    const f = fixture('sglang-chat-stream-chunks.json');
    const { events } = await stream(`${e.url}/v1/chat/completions`, { ...f.request, stream_options: undefined });
    expect((events as any[]).every((x) => x.choices.length === 1 && x.usage === null)).toBe(true);
  });

  it('errors: flat on OpenAI routes, nested in streams, {error:{message}} on /generate', async () => {
    const f = fixture('sglang-error-context-length.json');
    const r = await post(`${e.url}/v1/chat/completions`, { model: 'Qwen/Qwen3-8B', messages: [{ role: 'user', content: 'hi' }], max_tokens: 41000 });
    expect(r.status).toBe(400);
    expectShape(r.json, f.response);
    expect((r.json as any).message).toMatch(/maximum context length/);
    const g = await post(`${e.url}/generate`, { input_ids: [1, 2, 3], sampling_params: { max_new_tokens: 41000 } });
    expect(g.status).toBe(400);
    expectShape(g.json, f.generate_error.response);
    e.setKnobs({ midStreamErrorRate: 1 });
    try {
      const { events } = await stream(`${e.url}/v1/chat/completions`, { model: 'Qwen/Qwen3-8B', messages: [{ role: 'user', content: 'hi' }], stream: true });
      expectShape(events.at(-1), f.streaming_error_event);
      const ge = await stream(`${e.url}/generate`, { text: 'hi there', stream: true });
      expectShape(ge.events.at(-1), fixture('sglang-generate-logprobs.json').stream_variant.error_event);
    } finally {
      e.setKnobs({ midStreamErrorRate: 0 });
    }
  });

  it('server info, model info, models, control endpoints, tokenize/detokenize, metrics', async () => {
    const f = fixture('sglang-server-info.json');
    expectShape(JSON.parse((await get(`${e.url}/get_model_info`)).text), f['GET /get_model_info']);
    expectShape(JSON.parse((await get(`${e.url}/get_server_info`)).text), f['GET /get_server_info']);
    expectShape(JSON.parse((await get(`${e.url}/v1/models`)).text), f['GET /v1/models']);
    const nf = await get(`${e.url}/v1/models/foo`);
    expect(nf.status).toBe(404);
    expect(JSON.parse(nf.text)).toEqual(f['GET /v1/models/{unknown}'].body);
    for (const p of ['/health', '/health_generate']) expect(await get(`${e.url}${p}`)).toMatchObject({ status: 200, text: '' });
    expect((await post(`${e.url}/pause_generation`, f['POST /pause_generation'].request)).json).toEqual(f['POST /pause_generation'].body);
    expect((await post(`${e.url}/continue_generation`, {})).json).toEqual(f['POST /continue_generation'].body);
    expect((await post(`${e.url}/flush_cache`, {})).text).toBe(f['POST /flush_cache'].body_text);
    expect((await post(`${e.url}/tokenize`, f['POST /tokenize (also /v1/tokenize)'].request)).json).toEqual(f['POST /tokenize (also /v1/tokenize)'].response);
    expect((await post(`${e.url}/detokenize`, f['POST /detokenize (also /v1/detokenize)'].request)).json).toEqual(f['POST /detokenize (also /v1/detokenize)'].response);
    const m = (await get(`${e.url}/metrics`)).text;
    for (const name of ['sglang:num_running_reqs', 'sglang:num_queue_reqs', 'sglang:token_usage']) {
      expect(m).toMatch(new RegExp(`^${name}\\{model_name="Qwen/Qwen3-8B"\\} \\d+(\\.\\d+)?$`, 'm'));
    }
  });
});
