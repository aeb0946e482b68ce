// Fuzzed agent requests for every dialect (issue 8): random JSON, broken JSON, and well-formed requests with
// random values in every field. Rollgate must answer each in the caller's dialect with a 2xx or 4xx —
// never a 5xx, never a crash — and stay healthy afterwards.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { AGENT_DIALECTS, dialectCall, type AgentDialect } from './fault-helpers.js';

let app: TestApp;
/** One session per embedded engine: vLLM in chat mode (the engine templates) and SGLang in token mode (Rollgate does). */
const keys: Record<string, string> = {};
beforeAll(async () => {
  app = await startTestApp({ sim: true, healthIntervalMs: 60_000 });
  for (const engine of ['sim-vllm', 'sim-sglang']) keys[engine] = (await app.createSession({ engine })).key;
});
afterAll(async () => {
  if (process.env.FUZZ_REPORT) console.log('fuzz statuses', JSON.stringify(seen));
  await app?.stop();
});

const RUNS = Number(process.env.FUZZ_RUNS ?? 60);

/** Any JSON value, biased towards the shapes codecs look at. */
const anyValue = fc.oneof(
  { depthSize: 'small' },
  fc.anything({ maxDepth: 3, maxKeys: 4, withNullPrototype: false }),
  fc.constantFrom(null, true, 0, -1, 1e308, '', 'user', 'assistant', 'system', 'tool', 'text', 'function', 'auto', 'none', [], {}),
  fc.string({ maxLength: 40 }),
);

const text = fc.oneof(fc.string({ maxLength: 30 }), fc.string({ unit: 'grapheme', maxLength: 20 }), fc.constantFrom('hi', '', '<|im_end|>', '<think>', '{"a":1}', '\u0000'));
const weighted = <T>(plausible: fc.Arbitrary<T>) => fc.oneof({ weight: 4, arbitrary: plausible as fc.Arbitrary<unknown> }, { weight: 1, arbitrary: anyValue });
const fn = fc.record({ name: fc.constantFrom('calc', 'read_file', 'x'), description: text, parameters: fc.constantFrom({ type: 'object', properties: { q: { type: 'string' } } }, {}, { type: 'object' }) });

/** Per dialect: field → plausible values (most draws) or anything at all (some draws). */
const fields: Record<AgentDialect, Record<string, fc.Arbitrary<unknown>>> = {
  'openai-chat': {
    messages: fc.array(fc.oneof(
      fc.record({ role: fc.constantFrom('system', 'developer', 'user'), content: fc.oneof(text, fc.array(fc.record({ type: fc.constant('text'), text }), { maxLength: 2 })) }),
      fc.record({ role: fc.constant('assistant'), content: fc.option(text), tool_calls: fc.array(fc.record({ id: fc.constant('call_1'), type: fc.constant('function'), function: fc.record({ name: fc.constant('calc'), arguments: fc.constantFrom('{}', '{"q":"1"}', 'not json') }) }), { maxLength: 1 }) }),
      fc.record({ role: fc.constant('tool'), tool_call_id: fc.constantFrom('call_1', 'call_x'), content: text }),
    ), { minLength: 1, maxLength: 4 }),
    max_tokens: fc.integer({ min: 0, max: 16 }), temperature: fc.double({ min: 0, max: 2, noNaN: true }), top_p: fc.double({ min: 0, max: 1, noNaN: true }),
    tools: fc.array(fc.record({ type: fc.constant('function'), function: fn }), { maxLength: 2 }), tool_choice: fc.constantFrom('auto', 'none', 'required', { type: 'function', function: { name: 'calc' } }),
    stop: fc.oneof(text, fc.array(text, { maxLength: 2 })), seed: fc.integer(), n: fc.integer({ min: 1, max: 2 }),
    response_format: fc.constantFrom({ type: 'json_object' }, { type: 'text' }, { type: 'json_schema', json_schema: { name: 's', schema: { type: 'object' } } }),
    stream_options: fc.constantFrom({ include_usage: true }, {}), reasoning_effort: fc.constantFrom('low', 'high'), user: text,
  },
  responses: {
    input: fc.oneof(text, fc.array(fc.oneof(
      fc.record({ role: fc.constantFrom('user', 'developer', 'system', 'assistant'), content: fc.oneof(text, fc.array(fc.record({ type: fc.constantFrom('input_text', 'output_text'), text }), { maxLength: 2 })) }),
      fc.record({ type: fc.constant('function_call'), call_id: fc.constant('c1'), name: fc.constant('calc'), arguments: fc.constantFrom('{}', 'oops') }),
      fc.record({ type: fc.constant('function_call_output'), call_id: fc.constantFrom('c1', 'c2'), output: text }),
      fc.record({ type: fc.constant('reasoning'), summary: fc.constant([]), encrypted_content: fc.option(text) }),
    ), { minLength: 1, maxLength: 4 })),
    instructions: text, max_output_tokens: fc.integer({ min: 0, max: 16 }), temperature: fc.double({ min: 0, max: 2, noNaN: true }),
    tools: fc.array(fc.oneof(fc.record({ type: fc.constant('function'), name: fc.constant('calc'), parameters: fc.constant({ type: 'object' }) }), fc.record({ type: fc.constant('custom'), name: fc.constant('apply_patch') }), fc.record({ type: fc.constant('web_search') })), { maxLength: 2 }),
    tool_choice: fc.constantFrom('auto', 'none', 'required'), reasoning: fc.constantFrom({ effort: 'low' }, { summary: 'auto' }), include: fc.constantFrom(['reasoning.encrypted_content'], []),
    store: fc.boolean(), previous_response_id: fc.constantFrom('resp_123'), text: fc.constantFrom({ format: { type: 'text' } }, { verbosity: 'low' }),
  },
  anthropic: {
    messages: fc.array(fc.oneof(
      fc.record({ role: fc.constant('user'), content: fc.oneof(text, fc.array(fc.oneof(fc.record({ type: fc.constant('text'), text }), fc.record({ type: fc.constant('tool_result'), tool_use_id: fc.constantFrom('tu_1', 'tu_x'), content: fc.oneof(text, fc.array(fc.record({ type: fc.constant('text'), text }), { maxLength: 1 })) })), { maxLength: 2 })) }),
      fc.record({ role: fc.constant('assistant'), content: fc.oneof(text, fc.array(fc.oneof(fc.record({ type: fc.constant('text'), text }), fc.record({ type: fc.constant('tool_use'), id: fc.constant('tu_1'), name: fc.constant('calc'), input: fc.constantFrom({}, { q: 1 }) }), fc.record({ type: fc.constant('thinking'), thinking: text, signature: text })), { maxLength: 2 })) }),
    ), { minLength: 1, maxLength: 4 }),
    max_tokens: fc.integer({ min: 0, max: 16 }), system: fc.oneof(text, fc.array(fc.record({ type: fc.constant('text'), text, cache_control: fc.constant({ type: 'ephemeral' }) }), { maxLength: 2 })),
    tools: fc.array(fc.record({ name: fc.constantFrom('calc', 'Bash'), description: text, input_schema: fc.constantFrom({ type: 'object' }, { type: 'object', properties: { q: { type: 'string' } } }) }), { maxLength: 2 }),
    tool_choice: fc.constantFrom({ type: 'auto' }, { type: 'any' }, { type: 'tool', name: 'calc' }, { type: 'none' }),
    thinking: fc.constantFrom({ type: 'enabled', budget_tokens: 1024 }, { type: 'disabled' }), metadata: fc.record({ user_id: text }),
    stop_sequences: fc.array(text, { maxLength: 2 }), temperature: fc.double({ min: 0, max: 1, noNaN: true }),
  },
  gemini: {
    contents: fc.array(fc.record({ role: fc.constantFrom('user', 'model'), parts: fc.array(fc.oneof(
      fc.record({ text }), fc.record({ text, thought: fc.boolean() }),
      fc.record({ functionCall: fc.record({ name: fc.constant('calc'), args: fc.constantFrom({}, { q: '1' }) }) }),
      fc.record({ functionResponse: fc.record({ name: fc.constantFrom('calc', 'other'), response: fc.constantFrom({ output: '2' }, {}) }) }),
    ), { minLength: 1, maxLength: 2 }) }), { minLength: 1, maxLength: 3 }),
    systemInstruction: fc.record({ parts: fc.array(fc.record({ text }), { maxLength: 2 }) }),
    tools: fc.constantFrom([{ functionDeclarations: [{ name: 'calc', parametersJsonSchema: { type: 'object' } }] }], [{ functionDeclarations: [{ name: 'calc', parameters: { type: 'OBJECT' } }] }], [{ googleSearch: {} }]),
    toolConfig: fc.constantFrom({ functionCallingConfig: { mode: 'AUTO' } }, { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['calc'] } }),
    generationConfig: fc.record({ maxOutputTokens: fc.integer({ min: 0, max: 16 }), temperature: fc.double({ min: 0, max: 2, noNaN: true }), thinkingConfig: fc.constantFrom({ thinkingBudget: 0 }, { includeThoughts: true }), responseMimeType: fc.constantFrom('application/json', 'text/plain'), stopSequences: fc.array(text, { maxLength: 1 }) }, { requiredKeys: ['maxOutputTokens'] }),
  },
};

/** A valid request of the dialect with 0–3 fields set to fuzzed values (mostly plausible, sometimes anything). */
function mutated(d: AgentDialect): fc.Arbitrary<Record<string, unknown>> {
  const base = JSON.parse(dialectCall(d, 'http://x', 'k', { stream: false, maxTokens: 8, text: 'hi' }).init.body as string) as Record<string, unknown>;
  const names = Object.keys(fields[d]);
  const edit = fc.oneof(
    { weight: 9, arbitrary: fc.constantFrom(...names).chain((name) => weighted(fields[d][name]!).map((value) => [name, value] as const)) },
    { weight: 1, arbitrary: fc.tuple(fc.string({ maxLength: 12 }), anyValue) },
  );
  return fc.array(edit, { maxLength: 3 }).map((edits) => {
    const body: Record<string, unknown> = { ...base };
    for (const [k, v] of edits) body[k] = v;
    delete body.stream;
    return body;
  });
}

async function send(d: AgentDialect, body: string, stream = false, engine = 'sim-vllm'): Promise<{ status: number; text: string }> {
  const c = dialectCall(d, app.url, keys[engine]!, { stream });
  const res = await fetch(c.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal: AbortSignal.timeout(30_000) });
  return { status: res.status, text: await res.text() };
}

/** Status counts per dialect, so a run shows how many fuzzed requests got past parsing to the engine. */
export const seen: Record<string, Record<number, number>> = {};

function expectDialectAnswer(d: AgentDialect, r: { status: number; text: string }, input: string): void {
  (seen[d] ??= {})[r.status] = (seen[d]![r.status] ?? 0) + 1;
  expect(r.status, `HTTP ${r.status} for ${input.slice(0, 400)}\n→ ${r.text.slice(0, 400)}`).toBeLessThan(500);
  if (r.status >= 400) {
    const body = JSON.parse(r.text);
    if (d === 'anthropic') expect(body).toMatchObject({ type: 'error', error: { message: expect.any(String) } });
    else expect(body.error).toMatchObject({ message: expect.any(String) });
  }
}

describe('fuzzed request bodies', () => {
  for (const d of AGENT_DIALECTS) {
    it(`${d}: random JSON values and broken JSON text → 4xx in the dialect, never 5xx`, async () => {
      await fc.assert(fc.asyncProperty(
        fc.oneof(fc.json({ maxDepth: 3 }), fc.string({ maxLength: 80 }), fc.constantFrom('', '{', '[', 'null', '{"messages":', '\u0000', '{"a":1}{"b":2}')),
        async (text) => expectDialectAnswer(d, await send(d, text), text),
      ), { numRuns: RUNS, interruptAfterTimeLimit: 20_000 });
    });

    it(`${d}: well-formed requests with fuzzed fields → 2xx or 4xx in the dialect, never 5xx`, async () => {
      await fc.assert(fc.asyncProperty(mutated(d), fc.boolean(), fc.constantFrom('sim-vllm', 'sim-sglang'), async (body, stream, engine) => {
        if (d !== 'gemini') body.stream = stream;
        const text = JSON.stringify(body);
        expectDialectAnswer(d, await send(d, text, stream, engine), `${engine}: ${text}`);
      }), { numRuns: RUNS, interruptAfterTimeLimit: 30_000 });
    });
  }

  it('Rollgate is still up and answers a normal request afterwards', async () => {
    expect((await app.api('/api/health')).ok).toBe(true);
    const c = dialectCall('openai-chat', app.url, keys['sim-sglang']!, { stream: false, maxTokens: 8, text: 'hi' });
    const res = await fetch(c.url, c.init);
    expect(res.status).toBe(200);
  });
});
