// Every captured OpenAI Responses request (Codex, opencode's @ai-sdk/openai) replays through Rollgate to
// both sim engines and parses with the official openai SDK (`responses.create` / `responses.stream`).
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedRequests } from '../helpers/captures.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

let app: TestApp;
beforeAll(async () => { app = await startTestApp({ simSkill: 1 }); });
afterAll(async () => { await app?.stop(); });

const captures = capturedRequests('responses');

function checkResponse(r: OpenAI.Responses.Response, model: string) {
  expect(r.object).toBe('response');
  expect(r.id).toMatch(/^resp_/);
  expect(r.status).toBe('completed');
  expect(r.model).toBe(model);
  expect(r.usage?.input_tokens).toBeGreaterThan(0);
  expect(r.usage?.output_tokens).toBeGreaterThan(0);
  const visible = r.output.filter((o) => o.type === 'message' || o.type === 'function_call' || o.type === 'custom_tool_call');
  expect(visible.length).toBeGreaterThan(0);
  for (const o of r.output) {
    if (o.type === 'function_call') {
      expect(o.call_id).toBeTruthy();
      expect(() => JSON.parse(o.arguments)).not.toThrow();
    }
    if (o.type === 'message') expect(o.content.every((c) => c.type === 'output_text' || c.type === 'refusal')).toBe(true);
  }
}

describe('captured Responses requests replay', () => {
  it('has captures to replay', () => expect(captures.length).toBeGreaterThanOrEqual(7));

  for (const engine of ['sim-vllm', 'sim-sglang']) {
    for (const cap of captures) {
      for (const stream of [true, false]) {
        it(`${cap.file} on ${engine} (${stream ? 'stream' : 'non-stream'})`, async () => {
          const session = await app.createSession({ engine });
          const client = new OpenAI({ baseURL: session.urls.openai, apiKey: session.key, maxRetries: 0 });
          let response: OpenAI.Responses.Response;
          if (stream) {
            const events: string[] = [];
            const s = client.responses.stream({ ...cap.body, stream: true });
            s.on('event', (e) => events.push(e.type));
            response = await s.finalResponse();
            expect(events.slice(0, 2)).toEqual(['response.created', 'response.in_progress']);
            expect(events.at(-1)).toBe('response.completed');
            expect(events).toContain('response.output_item.done');
          } else {
            response = await client.responses.create({ ...cap.body, stream: false });
          }
          checkResponse(response, cap.body.model);
          // Codex sends `include: ["reasoning.encrypted_content"]` with store:false: reasoning comes back encrypted.
          if (cap.body.include?.includes('reasoning.encrypted_content')) {
            const reasoning = response.output.find((o) => o.type === 'reasoning');
            if (reasoning) expect((reasoning as OpenAI.Responses.ResponseReasoningItem).encrypted_content).toBeTruthy();
          }

          const { completions } = await app.api(`/api/sessions/${session.id}/completions`);
          expect(completions).toHaveLength(1);
          const c = completions[0];
          expect(c.status).toBe('ok');
          expect(c.dialect).toBe('openai-responses');
          expect(c.engineId).toBe(engine);
          expect(c.promptIds.length).toBeGreaterThan(10);
          expect(c.outputIds.length).toBeGreaterThan(0);
          expect(c.outputLogprobs).toHaveLength(c.outputIds.length);
          expect(c.usage.prompt_tokens).toBe(response.usage!.input_tokens);
          // Reasoning tokens: the think block through </think> (151668) in the sampled ids.
          const thinkEnd = c.outputIds.indexOf(151668);
          expect(response.usage!.output_tokens_details.reasoning_tokens).toBe(c.response.message.reasoning ? (thinkEnd >= 0 ? thinkEnd + 1 : c.outputIds.length) : 0);
          expect(c.usage.reasoning_tokens).toBe(response.usage!.output_tokens_details.reasoning_tokens);
          // The SDK sent the captured body as it was, and it is recorded as received.
          expect(c.requestReceived).toEqual({ ...cap.body, stream });
        });
      }
    }
  }
});

describe('Responses tool round trip (Codex shape)', () => {
  const exec = capturedRequests('responses').find((c) => c.file === 'codex/exec-tool/001-responses.json')!;
  for (const engine of ['sim-vllm', 'sim-sglang']) {
    it(`calls exec_command, replays the function_call + output verbatim, and answers on ${engine}`, async () => {
      const session = await app.createSession({ engine });
      const client = new OpenAI({ baseURL: session.urls.openai, apiKey: session.key, maxRetries: 0 });
      const input = exec.body.input.slice(0, -1).concat([{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'How many lines are in notes.txt?' }] }]);
      const first = await client.responses.stream({ ...exec.body, input }).finalResponse();
      const call = first.output.find((o) => o.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
      expect(call, JSON.stringify(first.output)).toBeTruthy();
      expect(call.name).toBe('exec_command');
      expect(JSON.parse(call.arguments).cmd).toMatch(/wc -l/);
      // Codex sends the server's items back as they came, then the tool output.
      const next = [...input, ...first.output, { type: 'function_call_output', call_id: call.call_id, output: 'Chunk ID: 1\nProcess exited with code 0\nOutput:\n3\n' }];
      const second = await client.responses.stream({ ...exec.body, input: next }).finalResponse();
      expect(second.output_text).toContain('3');
      const { completions } = await app.api(`/api/sessions/${session.id}/completions`);
      expect(completions.map((c: any) => c.status)).toEqual(['ok', 'ok']);
      if (engine === 'sim-sglang') {
        const [c1, c2] = completions;
        expect(c2.promptIds.slice(0, c1.promptIds.length + c1.outputIds.length)).toEqual([...c1.promptIds, ...c1.outputIds]);
      }
    });
  }
});
