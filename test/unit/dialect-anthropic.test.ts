import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { DialectError } from '../../src-main/core/dialects/codec.js';
import { anthropicCodec, parseAnthropicCountTokensRequest, parseAnthropicRequest } from '../../src-main/core/dialects/anthropic.js';
import type { CanonicalDelta, CanonicalResponse } from '../../src-main/core/types.js';
import { fakeFetch, loadCaptures, parseSse } from './dialect-fixtures.js';

const captures = loadCaptures((f) => f.endsWith('-anthropic.json'));

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

function runStream(ctx: ReturnType<typeof parseAnthropicRequest>['context'], deltas: CanonicalDelta[], res: CanonicalResponse): string[] {
  const enc = anthropicCodec.streamEncoder(ctx, { id: res.id, model: res.model, created: res.created });
  return [...enc.start(), ...deltas.flatMap((d) => enc.delta(d)), ...enc.finish(res)];
}

const base = { model: 'claude-x', max_tokens: 100 };

describe('anthropic codec: captured requests', () => {
  it('has captures to replay', () => {
    expect(captures.length).toBeGreaterThanOrEqual(8);
  });

  for (const cap of captures) {
    it(`parses ${cap.file}`, () => {
      const body = cap.body as any;
      const { canonical, context } = anthropicCodec.parseRequest(body, {});
      expect(canonical.model).toBe(body.model);
      expect(canonical.stream).toBe(body.stream === true);
      expect(canonical.max_tokens).toBe(body.max_tokens);
      // system first, then the messages in order; role:"system" messages stay in place
      const roles = canonical.messages.map((m) => m.role);
      expect(roles[0]).toBe('system');
      const bodyRoles: string[] = [];
      for (const m of body.messages) {
        if (m.role === 'user' && Array.isArray(m.content)) {
          let inUser = false;
          for (const b of m.content) {
            if (b.type === 'tool_result') { bodyRoles.push('tool'); inUser = false; } else if (!inUser) { bodyRoles.push('user'); inUser = true; }
          }
        } else bodyRoles.push(m.role);
      }
      expect(roles.slice(1)).toEqual(bodyRoles);
      // every tool offered (none of the captured ones is a server tool)
      expect(canonical.tools?.length ?? 0).toBe(body.tools?.length ?? 0);
      expect(context.skippedTools).toEqual([]);
      // tool results point at the preceding tool_use ids
      const callIds = canonical.messages.flatMap((m) => m.tool_calls?.map((c) => c.id) ?? []);
      for (const m of canonical.messages.filter((x) => x.role === 'tool')) expect(callIds).toContain(m.tool_call_id);
    });
  }

  it('keeps the mid-conversation system message of Claude Code where it was', () => {
    const cap = captures.find((c) => c.file === 'claude/p-tool/003-anthropic.json')!;
    const { canonical } = parseAnthropicRequest(cap.body);
    expect(canonical.messages.map((m) => m.role)).toEqual(['system', 'user', 'system', 'assistant', 'tool']);
    const sys = canonical.messages[0].content as any[];
    expect(sys).toHaveLength(3);
    expect(sys[0].text).toMatch(/^x-anthropic-billing-header/);
    const asst = canonical.messages[3];
    expect(asst.content).toBeNull();
    expect(asst.tool_calls).toEqual([{ id: 'toolu_wobfl9zi3t', type: 'function', function: { name: 'Bash', arguments: JSON.stringify({ command: 'echo hi-from-tool', description: 'echo test' }) } }]);
    expect(canonical.messages[4]).toEqual({ role: 'tool', tool_call_id: 'toolu_wobfl9zi3t', content: 'hi-from-tool', dialect_extras: { is_error: false } });
  });

  it('parses metadata.user_id JSON and records thinking options', () => {
    const cap = captures.find((c) => c.file === 'claude/p-tool-v2.1.330/002-anthropic.json')!;
    const { context } = parseAnthropicRequest(cap.body);
    expect((context.userId as any).session_id).toBeTypeOf('string');
    expect(context.thinkingDisplay).toBe('omitted');
    expect(context.options.output_config).toEqual({ effort: 'medium' });
  });
});

describe('anthropic codec: request mapping', () => {
  it('maps blocks, tool results with parts and errors, images, tool choice', () => {
    const { canonical } = parseAnthropicRequest({
      ...base,
      system: 'be nice',
      stop_sequences: ['END'],
      temperature: 0.5,
      top_k: 20,
      tool_choice: { type: 'tool', name: 'f' },
      tools: [
        { name: 'f', description: 'd', input_schema: { type: 'object' } },
        { type: 'web_search_20250305', name: 'web_search', max_uses: 3 },
        { name: 'g', input_schema: { type: 'object' }, defer_loading: true },
      ],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }] },
        { role: 'assistant', content: [{ type: 'text', text: 'calling' }, { type: 'tool_use', id: 't1', name: 'f', input: { a: 1 } }, { type: 'tool_use', id: 't2', name: 'g', input: {} }] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'r1' }], is_error: true },
            { type: 'tool_result', tool_use_id: 't2' },
            { type: 'text', text: 'continue' },
          ],
        },
      ],
    });
    expect(canonical.messages).toEqual([
      { role: 'system', content: 'be nice' },
      { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
      { role: 'assistant', content: 'calling', tool_calls: [
        { id: 't1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } },
        { id: 't2', type: 'function', function: { name: 'g', arguments: '{}' } },
      ] },
      { role: 'tool', tool_call_id: 't1', content: [{ type: 'text', text: 'r1' }], dialect_extras: { is_error: true } },
      { role: 'tool', tool_call_id: 't2', content: '' },
      { role: 'user', content: [{ type: 'text', text: 'continue' }] },
    ]);
    expect(canonical.tools?.map((t) => t.function.name)).toEqual(['f', 'g']);
    expect(canonical.tool_choice).toEqual({ type: 'function', function: { name: 'f' } });
    expect(canonical.stop).toEqual(['END']);
    expect(canonical.temperature).toBe(0.5);
    expect(canonical.top_k).toBe(20);
    const { context } = parseAnthropicRequest({ ...base, messages: [], tools: [{ type: 'web_search_20250305', name: 'web_search' }] });
    expect(context.skippedTools).toEqual([{ index: 0, type: 'web_search_20250305', name: 'web_search' }]);
  });

  it('maps tool_choice any/none/auto and thinking disabled', () => {
    expect(parseAnthropicRequest({ ...base, messages: [], tool_choice: { type: 'any' } }).canonical.tool_choice).toBe('required');
    expect(parseAnthropicRequest({ ...base, messages: [], tool_choice: { type: 'none' } }).canonical.tool_choice).toBe('none');
    expect(parseAnthropicRequest({ ...base, messages: [], tool_choice: { type: 'auto' } }).canonical.tool_choice).toBe('auto');
    expect(parseAnthropicRequest({ ...base, messages: [], thinking: { type: 'disabled' } }).canonical.chat_template_kwargs).toEqual({ enable_thinking: false });
  });

  it('tolerates redacted_thinking and keeps it in dialect_extras', () => {
    const { canonical } = parseAnthropicRequest({ ...base, messages: [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: [{ type: 'redacted_thinking', data: 'xyz' }, { type: 'thinking', thinking: 'hmm', signature: 'sig-from-elsewhere' }, { type: 'text', text: 'a' }] },
    ] });
    expect(canonical.messages[1]).toEqual({ role: 'assistant', content: 'a', reasoning: 'hmm', dialect_extras: { thinking_blocks: [{ type: 'redacted_thinking', data: 'xyz' }, { type: 'thinking', signature: 'sig-from-elsewhere' }] } });
  });

  it('count_tokens does not need max_tokens', () => {
    const c = parseAnthropicCountTokensRequest({ model: 'm', messages: [{ role: 'user', content: 'hi' }], system: 's' });
    expect(c.messages.map((m) => m.role)).toEqual(['system', 'user']);
  });

  const bad: Array<[string, unknown, RegExp]> = [
    ['non-object', [1, 2], /request body: expected a JSON object/],
    ['null', null, /request body/],
    ['missing max_tokens', { model: 'm', messages: [] }, /max_tokens/],
    ['missing model', { max_tokens: 1, messages: [] }, /^model: required/],
    ['messages not array', { ...base, messages: 'hi' }, /^messages: expected array/],
    ['bad content', { ...base, messages: [{ role: 'user', content: 5 }] }, /^messages\.0\.content: expected string or array/],
    ['bad role', { ...base, messages: [{ role: 'robot', content: 'x' }] }, /^messages\.0\.role/],
    ['bad block', { ...base, messages: [{ role: 'user', content: [{ type: 'text', text: 3 }] }] }, /^messages\.0\.content\.0\.text: expected string/],
    ['tool_result without id', { ...base, messages: [{ role: 'user', content: [{ type: 'tool_result', content: 'x' }] }] }, /messages\.0\.content\.0\.tool_use_id/],
    ['tool without schema', { ...base, messages: [], tools: [{ name: 'x' }] }, /^tools\.0\.input_schema/],
    ['bad max_tokens', { ...base, max_tokens: 'many', messages: [] }, /^max_tokens: expected number/],
    ['tool choice tool w/o name', { ...base, messages: [], tool_choice: { type: 'tool' } }, /tool_choice\.name/],
    ['block not object', { ...base, messages: [{ role: 'user', content: ['x'] }] }, /messages\.0\.content\.0: expected object/],
  ];
  for (const [name, body, re] of bad) {
    it(`rejects ${name} with a 400 DialectError`, () => {
      let err: unknown;
      try { anthropicCodec.parseRequest(body, {}); } catch (e) { err = e; }
      expect(err).toBeInstanceOf(DialectError);
      expect((err as DialectError).status).toBe(400);
      expect((err as DialectError).message).toMatch(re);
      const shaped = anthropicCodec.encodeError(400, (err as DialectError).message, (err as DialectError).type);
      expect(shaped.body).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: (err as DialectError).message } });
    });
  }
});

describe('anthropic codec: responses', () => {
  const ctx = parseAnthropicRequest({ ...base, messages: [{ role: 'user', content: 'hi' }] }).context;

  it('encodes text, thinking and tool calls in order', () => {
    const res = response({ content: 'Hello', reasoning: 'think', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"x":1}' } }] }, 'tool_calls');
    const body = anthropicCodec.encodeResponse(res, ctx) as any;
    expect(body.id).toBe('msg_abc123');
    expect(body.model).toBe('claude-x');
    expect(body.content.map((b: any) => b.type)).toEqual(['thinking', 'text', 'tool_use']);
    expect(body.content[0].thinking).toBe('think');
    expect(body.content[0].signature).toBeTypeOf('string');
    expect(body.content[2]).toEqual({ type: 'tool_use', id: 'call_1', name: 'f', input: { x: 1 } });
    expect(body.stop_reason).toBe('tool_use');
    expect(body.usage).toEqual({ input_tokens: 11, output_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
    expect((anthropicCodec.encodeResponse(response({ content: 'x' }, 'length'), ctx) as any).stop_reason).toBe('max_tokens');
    expect((anthropicCodec.encodeResponse(response({ content: 'x' }), ctx) as any).stop_reason).toBe('end_turn');
  });

  it('reports a matched stop sequence, in the message and in the stream', () => {
    const res = { ...response({ content: 'Hello ' }), stop_sequence: 'END' };
    expect(anthropicCodec.encodeResponse(res, ctx)).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'END' });
    const enc = anthropicCodec.streamEncoder(ctx, { id: 'abc123', model: 'qwen3', created: 1 });
    const frames = [...enc.start(), ...enc.delta({ kind: 'content', text: 'Hello ' }), ...enc.finish(res)].join('');
    expect(frames).toContain('"delta":{"stop_reason":"stop_sequence","stop_sequence":"END"}');
    const noMatch = anthropicCodec.encodeResponse(response({ content: 'x' }), ctx) as any;
    expect([noMatch.stop_reason, noMatch.stop_sequence]).toEqual(['end_turn', null]);
  });

  it('round-trips the thinking signature, even when the thinking text is omitted', () => {
    const res = response({ content: 'ok', reasoning: 'secret chain ü' });
    const block = (anthropicCodec.encodeResponse(res, ctx) as any).content[0];
    const back = parseAnthropicRequest({ ...base, messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: [block, { type: 'text', text: 'ok' }] }] });
    expect(back.canonical.messages[1].reasoning).toBe('secret chain ü');
    expect(back.canonical.messages[1].dialect_extras).toEqual({ thinking_blocks: [{ type: 'thinking', signature: block.signature }] });
    const omittedCtx = { ...ctx, thinkingDisplay: 'omitted' };
    const omitted = (anthropicCodec.encodeResponse(res, omittedCtx) as any).content[0];
    expect(omitted.thinking).toBe('');
    const back2 = parseAnthropicRequest({ ...base, messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: [omitted, { type: 'text', text: 'ok' }] }] });
    expect(back2.canonical.messages[1].reasoning).toBe('secret chain ü');
  });

  it('streams the documented event sequence and concatenates to the final text', () => {
    const deltas: CanonicalDelta[] = [
      { kind: 'reasoning', text: 'let me ' },
      { kind: 'reasoning', text: 'think' },
      { kind: 'content', text: 'Hel' },
      { kind: 'content', text: 'lo' },
      { kind: 'tool_call', index: 0, id: 'call_a', name: 'f', arguments: '{"x":' },
      { kind: 'tool_call', index: 0, arguments: '1}' },
      { kind: 'tool_call', index: 1, id: 'call_b', name: 'g', arguments: '{}' },
    ];
    const res = response({ reasoning: 'let me think', content: 'Hello', tool_calls: [
      { id: 'call_a', type: 'function', function: { name: 'f', arguments: '{"x":1}' } },
      { id: 'call_b', type: 'function', function: { name: 'g', arguments: '{}' } },
    ] }, 'tool_calls');
    const events = parseSse(runStream(ctx, deltas, res));
    for (const e of events) expect(e.event).toBe(e.json.type);
    expect(events.map((e) => e.event + (e.json.delta?.type ? `:${e.json.delta.type}` : ''))).toEqual([
      'message_start',
      'content_block_start', 'content_block_delta:thinking_delta', 'content_block_delta:thinking_delta', 'content_block_delta:signature_delta', 'content_block_stop',
      'content_block_start', 'content_block_delta:text_delta', 'content_block_delta:text_delta', 'content_block_stop',
      'content_block_start', 'content_block_delta:input_json_delta', 'content_block_delta:input_json_delta', 'content_block_stop',
      'content_block_start', 'content_block_delta:input_json_delta', 'content_block_stop',
      'message_delta', 'message_stop',
    ]);
    const text = events.filter((e) => e.json.delta?.type === 'text_delta').map((e) => e.json.delta.text).join('');
    expect(text).toBe('Hello');
    const md = events.find((e) => e.event === 'message_delta')!.json;
    expect(md.delta.stop_reason).toBe('tool_use');
    expect(md.usage.output_tokens).toBe(7);
  });

  it('the official SDK accumulates the streamed message', async () => {
    const deltas: CanonicalDelta[] = [
      { kind: 'reasoning', text: 'hmm' },
      { kind: 'content', text: 'Hi ' },
      { kind: 'content', text: 'there' },
      { kind: 'tool_call', index: 0, id: 'call_a', name: 'Bash', arguments: '{"command"' },
      { kind: 'tool_call', index: 0, arguments: ':"ls"}' },
    ];
    const res = response({ reasoning: 'hmm', content: 'Hi there', tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'Bash', arguments: '{"command":"ls"}' } }] }, 'tool_calls');
    const client = new Anthropic({ apiKey: 'x', baseURL: 'http://gw.test', fetch: fakeFetch(runStream(ctx, deltas, res).join(''), 'text/event-stream'), maxRetries: 0 });
    const msg = await client.messages.stream({ model: 'claude-x', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
    expect(msg.id).toBe('msg_abc123');
    expect(msg.stop_reason).toBe('tool_use');
    expect(msg.usage.output_tokens).toBe(7);
    expect(msg.usage.input_tokens).toBe(11);
    expect(msg.content).toEqual([
      { type: 'thinking', thinking: 'hmm', signature: expect.any(String) },
      { type: 'text', text: 'Hi there' },
      { type: 'tool_use', id: 'call_a', name: 'Bash', input: { command: 'ls' } },
    ]);
    // and the SDK's final message fed back as history gives back the same canonical assistant turn
    const back = parseAnthropicRequest({ ...base, messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: msg.content as any }] });
    expect(back.canonical.messages[1]).toMatchObject({ role: 'assistant', content: 'Hi there', reasoning: 'hmm', tool_calls: res.message.tool_calls });
  });

  it('the official SDK parses the non-stream message', async () => {
    const res = response({ content: 'Hello' });
    const client = new Anthropic({ apiKey: 'x', baseURL: 'http://gw.test', fetch: fakeFetch(JSON.stringify(anthropicCodec.encodeResponse(res, ctx)), 'application/json'), maxRetries: 0 });
    const msg = await client.messages.create({ model: 'claude-x', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
    expect(msg.content).toEqual([{ type: 'text', text: 'Hello' }]);
    expect(msg.stop_reason).toBe('end_turn');
  });

  it('sends blocks the engine only reported in the final response, and an empty text block when there is nothing', () => {
    const events = parseSse(runStream(ctx, [], response({ content: 'late', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] }, 'tool_calls')));
    expect(events.filter((e) => e.event === 'content_block_start').map((e) => e.json.content_block.type)).toEqual(['text', 'tool_use']);
    const empty = parseSse(runStream(ctx, [], response({ content: '' })));
    expect(empty.filter((e) => e.event === 'content_block_start')).toHaveLength(1);
  });

  it('text arriving while a tool_use block is open waits until after the calls (no delta to a closed block)', async () => {
    const deltas: CanonicalDelta[] = [
      { kind: 'content', text: '\n\n' },
      { kind: 'tool_call', index: 0, id: 'call_a', name: 'Bash', arguments: '{"command":' },
      { kind: 'content', text: '\n' },
      { kind: 'tool_call', index: 0, arguments: '"ls"}' },
    ];
    const res = response({ content: '\n\n\n', tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'Bash', arguments: '{"command":"ls"}' } }] }, 'tool_calls');
    const frames = runStream(ctx, deltas, res);
    const closed = new Set<number>();
    for (const e of parseSse(frames)) {
      if (e.event === 'content_block_delta') expect(closed.has(e.json.index), `delta to closed block ${e.json.index}`).toBe(false);
      if (e.event === 'content_block_stop') closed.add(e.json.index);
    }
    const client = new Anthropic({ apiKey: 'x', baseURL: 'http://gw.test', fetch: fakeFetch(frames.join(''), 'text/event-stream'), maxRetries: 0 });
    const msg = await client.messages.stream({ model: 'claude-x', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
    expect(msg.content).toEqual([
      { type: 'text', text: '\n\n' },
      { type: 'tool_use', id: 'call_a', name: 'Bash', input: { command: 'ls' } },
      { type: 'text', text: '\n' },
    ]);
  });

  it('omitted thinking display streams only the signature', () => {
    const events = parseSse(runStream({ ...ctx, thinkingDisplay: 'omitted' }, [{ kind: 'reasoning', text: 'x' }, { kind: 'content', text: 'y' }], response({ reasoning: 'x', content: 'y' })));
    expect(events.some((e) => e.json.delta?.type === 'thinking_delta')).toBe(false);
    expect(events.some((e) => e.json.delta?.type === 'signature_delta')).toBe(true);
  });

  it('mid-stream errors are an `event: error` frame the SDK throws on', async () => {
    const enc = anthropicCodec.streamEncoder(ctx, { id: 'e1', model: 'm', created: 0 });
    const frames = [...enc.start(), ...enc.delta({ kind: 'content', text: 'partial' }), ...enc.error(529, 'engine died')];
    const last = parseSse(frames).at(-1)!;
    expect(last.event).toBe('error');
    expect(last.json).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'engine died' } });
    const client = new Anthropic({ apiKey: 'x', baseURL: 'http://gw.test', fetch: fakeFetch(frames.join(''), 'text/event-stream'), maxRetries: 0 });
    await expect(client.messages.stream({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content: 'x' }] }).finalMessage()).rejects.toThrow(/engine died/);
  });

  it('error envelopes per status', () => {
    expect(anthropicCodec.encodeError(401, 'bad key').body).toEqual({ type: 'error', error: { type: 'authentication_error', message: 'bad key' } });
    expect((anthropicCodec.encodeError(404, 'x').body as any).error.type).toBe('not_found_error');
    expect((anthropicCodec.encodeError(429, 'x').body as any).error.type).toBe('rate_limit_error');
    expect((anthropicCodec.encodeError(500, 'x').body as any).error.type).toBe('api_error');
    expect((anthropicCodec.encodeError(503, 'x').body as any).error.type).toBe('overloaded_error');
  });
});
