import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { DialectError } from '../../src-main/core/dialects/codec.js';
import { parseResponsesRequest, responsesCodec, type ResponsesContext } from '../../src-main/core/dialects/responses.js';
import type { CanonicalDelta, CanonicalResponse } from '../../src-main/core/types.js';
import { fakeFetch, loadCaptures, parseSse } from './dialect-fixtures.js';

const captures = loadCaptures((f) => f.endsWith('-responses.json'));

function response(over: Partial<CanonicalResponse['message']> = {}, finish: CanonicalResponse['finish_reason'] = 'stop'): CanonicalResponse {
  return {
    id: 'abc123',
    model: 'qwen3',
    created: 1_700_000_000,
    message: { role: 'assistant', content: null, reasoning: null, tool_calls: [], ...over },
    finish_reason: finish,
    usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
  };
}

function runStream(ctx: ResponsesContext, deltas: CanonicalDelta[], res: CanonicalResponse): string[] {
  const enc = responsesCodec.streamEncoder(ctx, { id: res.id, model: res.model, created: res.created });
  return [...enc.start(), ...deltas.flatMap((d) => enc.delta(d)), ...enc.finish(res)];
}

function client(body: string, contentType: string) {
  return new OpenAI({ apiKey: 'x', baseURL: 'http://gw.test/v1', fetch: fakeFetch(body, contentType), maxRetries: 0 });
}

const codexTool = captures.find((c) => c.file === 'codex/exec-tool/002-responses.json')!;
const codexKnown = captures.find((c) => c.file === 'codex/exec-known-model-gpt-5.5/001-responses.json')!;

describe('responses codec: captured requests', () => {
  it('has captures to replay', () => {
    expect(captures.length).toBeGreaterThanOrEqual(8);
  });

  for (const cap of captures) {
    it(`parses ${cap.file}`, () => {
      const body = cap.body as any;
      const { canonical, context } = responsesCodec.parseRequest(body, {});
      expect(canonical.model).toBe(body.model);
      expect(canonical.stream).toBe(body.stream === true);
      // one canonical message per input message item (roles in order), function calls merged into assistant turns
      const expectedRoles: string[] = [];
      for (const it of body.input) {
        const type = it.type ?? 'message';
        if (type === 'message') expectedRoles.push(it.role);
        else if (type === 'function_call' && expectedRoles.at(-1) !== 'assistant') expectedRoles.push('assistant');
        else if (type === 'function_call_output') expectedRoles.push('tool');
      }
      expect(canonical.messages.map((m) => m.role)).toEqual(expectedRoles);
      // function tools + namespace members offered; hosted tools recorded, not offered
      let offered = 0;
      const hosted: string[] = [];
      for (const t of body.tools ?? []) {
        if (t.type === 'function' || t.type === 'custom') offered++;
        else if (t.type === 'namespace') offered += t.tools.length;
        else hosted.push(t.type);
      }
      expect(canonical.tools?.length ?? 0).toBe(offered);
      expect(context.skippedTools.map((s) => s.type)).toEqual(hosted);
      const callIds = canonical.messages.flatMap((m) => m.tool_calls?.map((c) => c.id) ?? []);
      for (const m of canonical.messages.filter((x) => x.role === 'tool')) expect(callIds).toContain(m.tool_call_id);
    });
  }

  it('keeps Codex developer messages in place and attaches the tool output to its call', () => {
    const { canonical, context } = parseResponsesRequest(codexTool.body);
    expect(canonical.messages.map((m) => m.role)).toEqual(['developer', 'developer', 'user', 'user', 'assistant', 'tool']);
    expect((canonical.messages[1].content as any[]).length).toBe(2);
    expect(canonical.messages[4].tool_calls).toEqual([{ id: 'call_8ralj5bw2s', type: 'function', function: { name: 'exec_command', arguments: '{"cmd":"echo hi-from-tool"}' } }]);
    expect(canonical.messages[5].tool_call_id).toBe('call_8ralj5bw2s');
    expect(canonical.messages[5].content).toMatch(/hi-from-tool/);
    const names = canonical.tools!.map((t) => t.function.name);
    expect(names).toContain('multi_agent_v1__spawn_agent');
    expect(context.toolNames['multi_agent_v1__spawn_agent']).toEqual({ kind: 'function', name: 'spawn_agent', namespace: 'multi_agent_v1' });
    expect(context.includeEncryptedReasoning).toBe(true);
    expect(canonical.tool_choice).toBe('auto');
  });

  it('maps the custom apply_patch grammar tool to a one-string-argument function', () => {
    const { canonical, context } = parseResponsesRequest(codexKnown.body);
    const ap = canonical.tools!.find((t) => t.function.name === 'apply_patch')!;
    expect(ap.function.parameters).toMatchObject({ type: 'object', properties: { input: { type: 'string' } }, required: ['input'] });
    expect(ap.function.description).toMatch(/begin_patch/);
    expect(context.toolNames.apply_patch).toEqual({ kind: 'custom', name: 'apply_patch' });
    expect(context.skippedTools.map((t) => t.type)).toEqual(['tool_search', 'web_search']);
  });

  it('takes opencode system input messages (no item type) as they are', () => {
    const cap = captures.find((c) => c.file === 'opencode/run-openai-responses-provider/002-responses.json')!;
    const { canonical } = parseResponsesRequest(cap.body);
    expect(canonical.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(canonical.max_tokens).toBe(32000);
  });
});

describe('responses codec: request mapping', () => {
  it('instructions lead, developer stays in place, turn items merge, reasoning and custom calls map', () => {
    const { canonical } = parseResponsesRequest({
      model: 'm',
      instructions: 'sys',
      input: [
        { role: 'user', content: 'hi' },
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'sum' }], encrypted_content: 'opaque-from-openai' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'calling' }] },
        { type: 'function_call', call_id: 'c1', name: 'spawn_agent', namespace: 'multi', arguments: '{}' },
        { type: 'custom_tool_call', call_id: 'c2', name: 'apply_patch', input: '*** Begin Patch\n' },
        { type: 'function_call_output', call_id: 'c1', output: [{ type: 'input_text', text: 'ok' }] },
        { type: 'custom_tool_call_output', call_id: 'c2', output: 'done' },
        { type: 'message', role: 'developer', content: 'dev note' },
        { type: 'web_search_call', id: 'ws', status: 'completed' },
        { role: 'user', content: [{ type: 'input_text', text: 'see' }, { type: 'input_image', image_url: 'data:image/png;base64,AA', detail: 'auto' }] },
      ],
      text: { format: { type: 'json_schema', name: 'x', schema: { type: 'object' } } },
      max_output_tokens: 50,
    });
    expect(canonical.messages).toEqual([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: 'calling',
        reasoning: 'sum',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'multi__spawn_agent', arguments: '{}' } },
          { id: 'c2', type: 'function', function: { name: 'apply_patch', arguments: JSON.stringify({ input: '*** Begin Patch\n' }) } },
        ],
        dialect_extras: { reasoning_item: { id: 'rs_1', summary: [{ type: 'summary_text', text: 'sum' }], encrypted_content: 'opaque-from-openai' } },
      },
      { role: 'tool', tool_call_id: 'c1', content: [{ type: 'text', text: 'ok' }] },
      { role: 'tool', tool_call_id: 'c2', content: 'done', dialect_extras: { item_type: 'custom_tool_call_output' } },
      { role: 'developer', content: 'dev note' },
      { role: 'user', content: [{ type: 'text', text: 'see' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AA', detail: 'auto' } }] },
    ]);
    expect(canonical.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' } } });
    expect(canonical.max_tokens).toBe(50);
    expect(parseResponsesRequest({ model: 'm', input: [{ type: 'web_search_call', id: 'x' }] }).context.skippedItems).toEqual([{ index: 0, type: 'web_search_call' }]);
  });

  it('string input becomes one user message; tool_choice maps through the namespace', () => {
    const { canonical } = parseResponsesRequest({
      model: 'm', input: 'hello',
      tools: [{ type: 'namespace', name: 'ns', tools: [{ type: 'function', name: 'f', parameters: { type: 'object' } }] }],
      tool_choice: { type: 'function', name: 'f', namespace: 'ns' },
    });
    expect(canonical.messages).toEqual([{ role: 'user', content: 'hello' }]);
    expect(canonical.tool_choice).toEqual({ type: 'function', function: { name: 'ns__f' } });
  });

  const bad: Array<[string, unknown, RegExp]> = [
    ['non-object', 'hello', /request body: expected a JSON object/],
    ['missing model', { input: 'x' }, /^model: required/],
    ['missing input', { model: 'm' }, /^input: required/],
    ['input wrong type', { model: 'm', input: 5 }, /^input: expected string or array/],
    ['message content wrong type', { model: 'm', input: [{ role: 'user', content: 5 }] }, /^input\.0\.content: expected string or array/],
    ['bad role', { model: 'm', input: [{ role: 'wizard', content: 'x' }] }, /^input\.0\.role/],
    ['function_call without call_id', { model: 'm', input: [{ type: 'function_call', name: 'f', arguments: '{}' }] }, /^input\.0\.call_id/],
    ['output without output', { model: 'm', input: [{ type: 'function_call_output', call_id: 'c' }] }, /^input\.0\.output/],
    ['bad part', { model: 'm', input: [{ role: 'user', content: [{ type: 'input_text' }] }] }, /^input\.0\.content\.0\.text/],
    ['tool without name', { model: 'm', input: 'x', tools: [{ type: 'function' }] }, /^tools\.0\.name/],
    ['previous_response_id', { model: 'm', input: 'x', previous_response_id: 'resp_1' }, /previous_response_id/],
    ['item_reference', { model: 'm', input: [{ type: 'item_reference', id: 'x' }] }, /item_reference/],
    ['unknown tool_choice name', { model: 'm', input: 'x', tool_choice: { type: 'function', name: 'nope' } }, /tool_choice\.name/],
    ['bad max_output_tokens', { model: 'm', input: 'x', max_output_tokens: -1 }, /^max_output_tokens/],
  ];
  for (const [name, body, re] of bad) {
    it(`rejects ${name} with a 400 DialectError`, () => {
      let err: unknown;
      try { responsesCodec.parseRequest(body, {}); } catch (e) { err = e; }
      expect(err).toBeInstanceOf(DialectError);
      expect((err as DialectError).status).toBe(400);
      expect((err as DialectError).message).toMatch(re);
    });
  }
});

describe('responses codec: responses', () => {
  const ctx = parseResponsesRequest(codexTool.body).context;
  const knownCtx = parseResponsesRequest(codexKnown.body).context;

  it('encodes reasoning, message and function calls with namespace names mapped back', () => {
    const res = response({ reasoning: 'think', content: 'Hello', tool_calls: [
      { id: 'call_1', type: 'function', function: { name: 'multi_agent_v1__spawn_agent', arguments: '{"a":1}' } },
      { id: 'call_2', type: 'function', function: { name: 'exec_command', arguments: '{"cmd":"ls"}' } },
    ] }, 'tool_calls');
    const body = responsesCodec.encodeResponse(res, ctx) as any;
    expect(body).toMatchObject({ id: 'resp_abc123', object: 'response', status: 'completed', model: 'my-gateway-model', error: null, incomplete_details: null });
    expect(body.output.map((o: any) => o.type)).toEqual(['reasoning', 'message', 'function_call', 'function_call']);
    expect(body.output[0].summary).toEqual([{ type: 'summary_text', text: 'think' }]);
    expect(body.output[0].encrypted_content).toBeTypeOf('string');
    expect(body.output[1]).toEqual({ id: 'msg_abc123', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hello', annotations: [], logprobs: [] }] });
    expect(body.output[2]).toMatchObject({ type: 'function_call', call_id: 'call_1', name: 'spawn_agent', namespace: 'multi_agent_v1', arguments: '{"a":1}', status: 'completed' });
    expect(body.output[3]).toMatchObject({ type: 'function_call', call_id: 'call_2', name: 'exec_command' });
    expect(body.usage).toEqual({ input_tokens: 11, input_tokens_details: { cached_tokens: 0 }, output_tokens: 7, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 18 });
    const inc = responsesCodec.encodeResponse(response({ content: 'x' }, 'length'), ctx) as any;
    expect(inc.status).toBe('incomplete');
    expect(inc.incomplete_details).toEqual({ reason: 'max_output_tokens' });
  });

  it('round-trips encrypted reasoning and namespace/custom names through the next request', () => {
    const res = response({ reasoning: 'deep thought ✓', content: null, tool_calls: [
      { id: 'call_1', type: 'function', function: { name: 'apply_patch', arguments: JSON.stringify({ input: '*** Begin Patch\n*** End Patch\n' }) } },
    ] }, 'tool_calls');
    const out = (responsesCodec.encodeResponse(res, knownCtx) as any).output;
    expect(out[1]).toMatchObject({ type: 'custom_tool_call', call_id: 'call_1', name: 'apply_patch', input: '*** Begin Patch\n*** End Patch\n' });
    // Codex replays reasoning with an empty summary when it keeps only the encrypted content
    const replay = [{ ...out[0], summary: [] }, out[1], { type: 'custom_tool_call_output', call_id: 'call_1', output: 'ok' }];
    const back = parseResponsesRequest({ ...(codexKnown.body as object), input: [...(codexKnown.body as any).input, ...replay] }).canonical;
    const asst = back.messages.at(-2)!;
    expect(asst.reasoning).toBe('deep thought ✓');
    expect(asst.tool_calls).toEqual(res.message.tool_calls);
    expect(back.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_1', content: 'ok' });
    // namespace function call too
    const out2 = (responsesCodec.encodeResponse(response({ tool_calls: [{ id: 'c9', type: 'function', function: { name: 'multi_agent_v1__wait_agent', arguments: '{}' } }] }, 'tool_calls'), ctx) as any).output;
    const back2 = parseResponsesRequest({ model: 'm', input: out2 }).canonical;
    expect(back2.messages[0].tool_calls![0].function.name).toBe('multi_agent_v1__wait_agent');
  });

  it('streams the full event sequence with increasing sequence numbers', () => {
    const deltas: CanonicalDelta[] = [
      { kind: 'reasoning', text: 'let me ' },
      { kind: 'reasoning', text: 'think' },
      { kind: 'content', text: 'Hel' },
      { kind: 'content', text: 'lo' },
      { kind: 'tool_call', index: 0, id: 'call_a', name: 'exec_command', arguments: '{"cmd":' },
      { kind: 'tool_call', index: 0, arguments: '"ls"}' },
    ];
    const res = response({ reasoning: 'let me think', content: 'Hello', tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'exec_command', arguments: '{"cmd":"ls"}' } }] }, 'tool_calls');
    const events = parseSse(runStream(ctx, deltas, res));
    events.forEach((e, i) => {
      expect(e.event).toBe(e.json.type);
      expect(e.json.sequence_number).toBe(i);
    });
    expect(events.map((e) => e.event)).toEqual([
      'response.created', 'response.in_progress',
      'response.output_item.added', 'response.reasoning_summary_part.added', 'response.reasoning_summary_text.delta', 'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done', 'response.reasoning_summary_part.done', 'response.output_item.done',
      'response.output_item.added', 'response.content_part.added', 'response.output_text.delta', 'response.output_text.delta',
      'response.output_text.done', 'response.content_part.done', 'response.output_item.done',
      'response.output_item.added', 'response.function_call_arguments.delta', 'response.function_call_arguments.delta', 'response.function_call_arguments.done', 'response.output_item.done',
      'response.completed',
    ]);
    const text = events.filter((e) => e.event === 'response.output_text.delta').map((e) => e.json.delta).join('');
    expect(text).toBe('Hello');
    const completed = events.at(-1)!.json.response;
    expect(completed.status).toBe('completed');
    expect(completed.output.map((o: any) => o.type)).toEqual(['reasoning', 'message', 'function_call']);
    expect(completed.usage.output_tokens).toBe(7);
  });

  it('the official SDK accumulates the streamed response', async () => {
    const deltas: CanonicalDelta[] = [
      { kind: 'reasoning', text: 'hmm' },
      { kind: 'content', text: 'Hi ' },
      { kind: 'content', text: 'there' },
      { kind: 'tool_call', index: 0, id: 'call_a', name: 'multi_agent_v1__spawn_agent', arguments: '{"task"' },
      { kind: 'tool_call', index: 0, arguments: ':"x"}' },
      { kind: 'tool_call', index: 1, id: 'call_b', name: 'exec_command', arguments: '{}' },
    ];
    const res = response({ reasoning: 'hmm', content: 'Hi there', tool_calls: [
      { id: 'call_a', type: 'function', function: { name: 'multi_agent_v1__spawn_agent', arguments: '{"task":"x"}' } },
      { id: 'call_b', type: 'function', function: { name: 'exec_command', arguments: '{}' } },
    ] }, 'tool_calls');
    const sdk = client(runStream(ctx, deltas, res).join(''), 'text/event-stream');
    const final = await sdk.responses.stream({ model: 'my-gateway-model', input: 'hi' }).finalResponse();
    expect(final.id).toBe('resp_abc123');
    expect(final.status).toBe('completed');
    expect(final.output_text).toBe('Hi there');
    expect(final.usage?.total_tokens).toBe(18);
    expect(final.output.map((o) => o.type)).toEqual(['reasoning', 'message', 'function_call', 'function_call']);
    expect(final.output[2]).toMatchObject({ call_id: 'call_a', name: 'spawn_agent', namespace: 'multi_agent_v1', arguments: '{"task":"x"}' });
    // what the SDK accumulated, replayed as input, gives back the same assistant turn
    const back = parseResponsesRequest({ ...(codexTool.body as object), input: final.output }).canonical;
    expect(back.messages[0]).toMatchObject({ role: 'assistant', content: 'Hi there', reasoning: 'hmm', tool_calls: res.message.tool_calls });
  });

  it('streams custom tool calls as custom_tool_call items the SDK accepts', async () => {
    const deltas: CanonicalDelta[] = [
      { kind: 'tool_call', index: 0, id: 'call_p', name: 'apply_patch', arguments: '{"input":"*** Begin' },
      { kind: 'tool_call', index: 0, arguments: ' Patch\\n"}' },
    ];
    const res = response({ tool_calls: [{ id: 'call_p', type: 'function', function: { name: 'apply_patch', arguments: '{"input":"*** Begin Patch\\n"}' } }] }, 'tool_calls');
    const frames = runStream(knownCtx, deltas, res);
    const events = parseSse(frames);
    expect(events.map((e) => e.event)).toEqual([
      'response.created', 'response.in_progress', 'response.output_item.added',
      'response.custom_tool_call_input.delta', 'response.custom_tool_call_input.done', 'response.output_item.done', 'response.completed',
    ]);
    const final = await client(frames.join(''), 'text/event-stream').responses.stream({ model: 'gpt-5.5', input: 'x' }).finalResponse();
    expect(final.output[0]).toMatchObject({ type: 'custom_tool_call', call_id: 'call_p', name: 'apply_patch', input: '*** Begin Patch\n' });
  });

  it('ends with response.incomplete on max tokens', () => {
    const events = parseSse(runStream(ctx, [{ kind: 'content', text: 'cut' }], response({ content: 'cut' }, 'length')));
    expect(events.at(-1)!.event).toBe('response.incomplete');
    expect(events.at(-1)!.json.response.incomplete_details).toEqual({ reason: 'max_output_tokens' });
  });

  it('the official SDK parses the non-stream response', async () => {
    const res = response({ content: 'Hello', tool_calls: [{ id: 'c', type: 'function', function: { name: 'exec_command', arguments: '{}' } }] }, 'tool_calls');
    const r = await client(JSON.stringify(responsesCodec.encodeResponse(res, ctx)), 'application/json').responses.create({ model: 'm', input: 'x' });
    expect(r.output_text).toBe('Hello');
    expect(r.output[1]).toMatchObject({ type: 'function_call', name: 'exec_command' });
  });

  it('mid-stream errors: error + response.failed (the SDK throws)', async () => {
    const enc = responsesCodec.streamEncoder(ctx, { id: 'e1', model: 'm', created: 0 });
    const frames = [...enc.start(), ...enc.delta({ kind: 'content', text: 'partial' }), ...enc.error(502, 'engine died')];
    const events = parseSse(frames);
    expect(events.slice(-2).map((e) => e.event)).toEqual(['error', 'response.failed']);
    expect(events.at(-1)!.json.response).toMatchObject({ status: 'failed', error: { code: 'server_error', message: 'engine died' } });
    await expect(client(frames.join(''), 'text/event-stream').responses.stream({ model: 'm', input: 'x' }).finalResponse()).rejects.toThrow(/engine died/);
  });

  it('error envelopes', () => {
    expect(responsesCodec.encodeError(400, 'bad').body).toEqual({ error: { message: 'bad', type: 'invalid_request_error', param: null, code: null } });
    expect(responsesCodec.encodeError(401, 'who').body).toMatchObject({ error: { type: 'authentication_error' } });
    expect(responsesCodec.encodeError(429, 'slow').body).toMatchObject({ error: { code: 'rate_limit_exceeded' } });
  });
});
