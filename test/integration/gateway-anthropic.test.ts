// Every captured Anthropic Messages request (Claude Code, opencode's @ai-sdk/anthropic) replays through
// Rollgate to both sim engines and parses with the official @anthropic-ai/sdk, streaming and not.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedRequests, type CapturedRequest } from '../helpers/captures.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

let app: TestApp;
beforeAll(async () => { app = await startTestApp({ simSkill: 1 }); });
afterAll(async () => { await app?.stop(); });

const captures = capturedRequests('anthropic');

/** The agent's own headers that say something about the request (betas, app), not transport or auth. */
function agentHeaders(cap: CapturedRequest): Record<string, string> {
  const keep: Record<string, string> = {};
  for (const [k, v] of Object.entries(cap.headers)) {
    if (/^(anthropic-beta|anthropic-version|x-app|x-claude-code-session-id|x-session-id|x-session-affinity|anthropic-dangerous-direct-browser-access)$/i.test(k)) keep[k] = v;
  }
  return keep;
}

/** The captured path says which SDK resource the agent used: `?beta=true` is `client.beta.messages`. */
function messagesApi(client: Anthropic, cap: CapturedRequest) {
  return (cap.query.beta === 'true' ? client.beta.messages : client.messages) as unknown as Anthropic.Messages;
}

function checkMessage(m: Anthropic.Message, model: string) {
  expect(m.type).toBe('message');
  expect(m.role).toBe('assistant');
  expect(m.id).toMatch(/^msg_/);
  expect(m.model).toBe(model);
  expect(['end_turn', 'tool_use', 'max_tokens']).toContain(m.stop_reason);
  expect(m.usage.input_tokens).toBeGreaterThan(0);
  expect(m.usage.output_tokens).toBeGreaterThan(0);
  const visible = m.content.filter((b) => b.type === 'text' || b.type === 'tool_use');
  expect(visible.length).toBeGreaterThan(0);
  for (const b of m.content) {
    if (b.type === 'tool_use') {
      expect(m.stop_reason).toBe('tool_use');
      expect(b.id).toBeTruthy();
      expect(typeof b.input).toBe('object');
    }
    if (b.type === 'thinking') expect(b.signature).toBeTruthy();
  }
}

async function recorded(sessionId: string) {
  const { completions } = await app.api(`/api/sessions/${sessionId}/completions`);
  return completions as any[];
}

describe('captured Anthropic requests replay', () => {
  it('has captures to replay', () => expect(captures.length).toBeGreaterThanOrEqual(8));

  for (const engine of ['sim-vllm', 'sim-sglang']) {
    for (const cap of captures) {
      for (const stream of [true, false]) {
        it(`${cap.file} on ${engine} (${stream ? 'stream' : 'non-stream'})`, async () => {
          const session = await app.createSession({ engine });
          const client = new Anthropic({ baseURL: session.urls.anthropic, apiKey: session.key, maxRetries: 0, defaultHeaders: agentHeaders(cap) });
          const api = messagesApi(client, cap);
          const body = { ...cap.body, stream };
          let message: Anthropic.Message;
          if (stream) {
            const events: string[] = [];
            const s = api.stream(body);
            s.on('streamEvent', (e) => events.push(e.type));
            message = await s.finalMessage();
            expect(events[0]).toBe('message_start');
            expect(events.at(-1)).toBe('message_stop');
            expect(events).toContain('message_delta');
          } else {
            // The SDK refuses long non-streaming calls unless a timeout is given (max_tokens is up to 128k here).
            message = await api.create(body as Anthropic.MessageCreateParamsNonStreaming, { timeout: 60_000 });
          }
          checkMessage(message, cap.body.model);

          const completions = await recorded(session.id);
          expect(completions).toHaveLength(1);
          const c = completions[0];
          expect(c.status).toBe('ok');
          expect(c.dialect).toBe('anthropic');
          expect(c.engineId).toBe(engine);
          expect(c.promptIds.length).toBeGreaterThan(10);
          expect(c.outputIds.length).toBeGreaterThan(0);
          expect(c.outputLogprobs).toHaveLength(c.outputIds.length);
          expect(c.usage.prompt_tokens).toBe(message.usage.input_tokens);
          expect(c.usage.completion_tokens).toBe(message.usage.output_tokens);
          // The SDK sent the captured body as it was, and it is recorded as received.
          expect(c.requestReceived).toEqual(body);
        });
      }
    }
  }
});

describe('count_tokens', () => {
  for (const engine of ['sim-vllm', 'sim-sglang']) {
    for (const cap of captures.filter((c) => /claude\/p-tool\/|run-anthropic-provider\/001/.test(c.file))) {
      it(`counts ${cap.file} with the served model's tokenizer on ${engine}`, async () => {
        const session = await app.createSession({ engine });
        const client = new Anthropic({ baseURL: session.urls.anthropic, apiKey: session.key, maxRetries: 0 });
        const { max_tokens: _m, stream: _s, metadata: _md, context_management: _cm, ...countBody } = cap.body;
        const counted = await client.beta.messages.countTokens(countBody);
        expect(counted.input_tokens).toBeGreaterThan(10);
        // The count is the prompt the engine then sees for the same request.
        await messagesApi(client, cap).create({ ...cap.body, stream: false }, { timeout: 60_000 });
        const [c] = await recorded(session.id);
        expect(counted.input_tokens).toBe(c.promptIds.length);
        // count_tokens is not a completion.
        expect(await recorded(session.id)).toHaveLength(1);
      });
    }
  }

  it('rejects an unknown key in the Anthropic shape', async () => {
    const client = new Anthropic({ baseURL: `${app.url}/s/${'0'.repeat(32)}`, apiKey: 'x', maxRetries: 0 });
    await expect(client.messages.countTokens({ model: 'm', messages: [{ role: 'user', content: 'hi' }] })).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
  });
});

describe('Anthropic tool round trip', () => {
  for (const engine of ['sim-vllm', 'sim-sglang']) {
    it(`calls Bash, gets the result back, and answers from it on ${engine}`, async () => {
      {
        const session = await app.createSession({ engine });
        const client = new Anthropic({ baseURL: session.urls.anthropic, apiKey: session.key, maxRetries: 0 });
        const tools: Anthropic.Tool[] = [{
          name: 'Bash', description: 'Executes a given bash command and returns its output.',
          input_schema: { type: 'object', properties: { command: { type: 'string' }, description: { type: 'string' } }, required: ['command'] },
        }];
        const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'How many lines are in notes.txt?' }];
        const first = await client.messages.stream({ model: 'Qwen/Qwen3-8B', max_tokens: 2048, tools, messages }).finalMessage();
        expect(first.stop_reason).toBe('tool_use');
        const use = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')!;
        expect(use.name).toBe('Bash');
        expect((use.input as { command: string }).command).toMatch(/wc -l/);
        messages.push({ role: 'assistant', content: first.content as Anthropic.ContentBlockParam[] });
        messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '3', is_error: false }] });
        const second = await client.messages.create({ model: 'Qwen/Qwen3-8B', max_tokens: 2048, tools, messages });
        expect(second.stop_reason).toBe('end_turn');
        expect(second.content.find((b) => b.type === 'text')).toMatchObject({ text: expect.stringContaining('3') });
        const { completions } = await app.api(`/api/sessions/${session.id}/completions`);
        expect(completions).toHaveLength(2);
        // The thinking block came back with its signature: the second prompt carries the first output verbatim.
        const [c1, c2] = completions;
        if (engine === 'sim-sglang') expect(c2.promptIds.slice(0, c1.promptIds.length + c1.outputIds.length)).toEqual([...c1.promptIds, ...c1.outputIds]);
      }
    });
  }
});

describe('Anthropic stop sequences', () => {
  for (const engine of ['sim-vllm', 'sim-sglang']) {
    it(`reports the matched stop sequence on ${engine}, streaming and not`, async () => {
      const session = await app.createSession({ engine });
      const client = new Anthropic({ apiKey: session.key, baseURL: session.urls.anthropic, maxRetries: 0 });
      const body = { model: 'Qwen/Qwen3-8B', max_tokens: 200, messages: [{ role: 'user' as const, content: 'Hello there' }] };

      const plain = await client.messages.create(body);
      expect(plain).toMatchObject({ stop_reason: 'end_turn', stop_sequence: null });
      const greeting = plain.content.find((b) => b.type === 'text')!.text;
      // Every sim greeting asks how it can help ("How can I help", "What can I do").
      const stop = 'can';
      expect(greeting).toContain(stop);

      const stopped = await client.messages.create({ ...body, stop_sequences: ['NEVER-SEEN', stop] });
      expect(stopped).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: stop });
      const text = stopped.content.find((b) => b.type === 'text')!.text;
      expect(text).not.toContain(stop);
      expect(text.trim().length).toBeGreaterThan(0);

      const stream = client.messages.stream({ ...body, stop_sequences: [stop] });
      const streamed = await stream.finalMessage();
      expect(streamed).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: stop });
      expect(streamed.content.find((b) => b.type === 'text')!.text).not.toContain(stop);

      const rec = (await recorded(session.id)).filter((c) => c.status === 'ok');
      expect(rec.map((c) => c.response.stop_sequence)).toEqual([null, stop, stop]);
      expect(rec.map((c) => c.finishReason)).toEqual(['stop', 'stop', 'stop']);
    });
  }
});

describe('base URL probes', () => {
  it('HEAD and GET on the session base URL answer 200, with or without a trailing slash', async () => {
    const session = await app.createSession({ engine: 'sim-vllm' });
    for (const url of [session.urls.anthropic, `${session.urls.anthropic}/`]) {
      expect((await fetch(url, { method: 'HEAD' })).status, url).toBe(200);
      expect((await fetch(url)).status, url).toBe(200);
    }
  });
});
