// Every captured Gemini request (Gemini CLI: router `generateContent`, main `streamGenerateContent`)
// replays through Rollgate to both sim engines with the official @google/genai SDK, streaming and not.
// Gemini CLI itself talks through @google/genai, so the captured body is sent the way the CLI sent it:
// `generationConfig` fields go into the SDK's `config` with `systemInstruction` and `tools`, and the
// recorded request must equal the captured body.
import { GoogleGenAI, type GenerateContentParameters, type GenerateContentResponse } from '@google/genai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedRequests, type CapturedRequest } from '../helpers/captures.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

let app: TestApp;
beforeAll(async () => { app = await startTestApp({ simSkill: 1 }); });
afterAll(async () => { await app?.stop(); });

const captures = capturedRequests((f) => /-gemini-(generateContent|streamGenerateContent)\.json$/.test(f));

function modelOf(cap: CapturedRequest): string {
  return /\/models\/([^:]+):/.exec(cap.path)![1]!;
}

function sdkParams(cap: CapturedRequest): GenerateContentParameters {
  const { contents, systemInstruction, tools, toolConfig, generationConfig, safetySettings, ...rest } = cap.body;
  expect(rest).toEqual({});
  return { model: modelOf(cap), contents, config: { ...generationConfig, systemInstruction, tools, toolConfig, safetySettings } };
}

function clientFor(session: { key: string; urls: { gemini: string } }) {
  return new GoogleGenAI({ apiKey: session.key, httpOptions: { baseUrl: session.urls.gemini } });
}

/** Merges streamed chunks into one candidate the way the CLI does (text concatenated, calls collected). */
function merge(chunks: GenerateContentResponse[]) {
  let text = '';
  let thought = '';
  const calls: Array<{ name?: string; args?: Record<string, unknown>; id?: string }> = [];
  let finishReason: string | undefined;
  let usage: GenerateContentResponse['usageMetadata'];
  for (const c of chunks) {
    for (const p of c.candidates?.[0]?.content?.parts ?? []) {
      if (p.thought) thought += p.text ?? '';
      else if (p.text) text += p.text;
      if (p.functionCall) calls.push(p.functionCall);
    }
    finishReason = c.candidates?.[0]?.finishReason ?? finishReason;
    usage = c.usageMetadata ?? usage;
  }
  return { text, thought, calls, finishReason, usage };
}

describe('captured Gemini requests replay', () => {
  it('has captures to replay', () => expect(captures.length).toBeGreaterThanOrEqual(5));

  for (const engine of ['sim-vllm', 'sim-sglang']) {
    for (const cap of captures) {
      for (const stream of [true, false]) {
        it(`${cap.file} on ${engine} (${stream ? 'streamGenerateContent' : 'generateContent'})`, async () => {
          const session = await app.createSession({ engine });
          const ai = clientFor(session);
          const params = sdkParams(cap);
          let r: ReturnType<typeof merge>;
          if (stream) {
            const chunks: GenerateContentResponse[] = [];
            for await (const chunk of await ai.models.generateContentStream(params)) chunks.push(chunk);
            expect(chunks.length).toBeGreaterThan(1);
            r = merge(chunks);
          } else {
            const res = await ai.models.generateContent(params);
            r = merge([res]);
            expect(res.text ?? res.functionCalls).toBeTruthy();
          }
          expect(r.finishReason).toBe('STOP');
          expect(r.text.length + r.calls.length).toBeGreaterThan(0);
          expect(r.usage?.promptTokenCount).toBeGreaterThan(0);
          expect(r.usage?.candidatesTokenCount).toBeGreaterThan(0);
          for (const call of r.calls) {
            expect(call.name).toBeTruthy();
            expect(typeof call.args).toBe('object');
          }
          // The router's structured-output call gets schema-valid JSON (an integer score 1-100).
          const schema = cap.body.generationConfig?.responseJsonSchema;
          if (schema) {
            const v = JSON.parse(r.text);
            for (const k of schema.required) expect(v).toHaveProperty(k);
            expect(Number.isInteger(v.complexity_score)).toBe(true);
            expect(v.complexity_score).toBeGreaterThanOrEqual(1);
            expect(v.complexity_score).toBeLessThanOrEqual(100);
          }

          const { completions } = await app.api(`/api/sessions/${session.id}/completions`);
          expect(completions).toHaveLength(1);
          const c = completions[0];
          expect(c.status).toBe('ok');
          expect(c.dialect).toBe('gemini');
          expect(c.engineId).toBe(engine);
          expect(c.promptIds.length).toBeGreaterThan(10);
          expect(c.outputIds.length).toBeGreaterThan(0);
          expect(c.outputLogprobs).toHaveLength(c.outputIds.length);
          expect(c.usage.prompt_tokens).toBe(r.usage!.promptTokenCount);
          // Gemini counts thoughts apart: candidates + thoughts = the sampled tokens.
          expect((r.usage!.candidatesTokenCount ?? 0) + (r.usage!.thoughtsTokenCount ?? 0)).toBe(c.usage.completion_tokens);
          expect(r.usage!.thoughtsTokenCount ?? 0).toBe(c.usage.reasoning_tokens);
          if (c.response.message.reasoning) expect(r.usage!.thoughtsTokenCount).toBeGreaterThan(0);
          // The SDK sent what Gemini CLI sent.
          expect(c.requestReceived).toEqual(cap.body);
        });
      }
    }
  }
});

describe('Gemini tool round trip (Gemini CLI shape)', () => {
  const yolo = captures.find((c) => c.file === 'gemini/p-tool-yolo/001-gemini-streamGenerateContent.json')!;
  for (const engine of ['sim-vllm', 'sim-sglang']) {
    it(`calls run_shell_command, gets the functionResponse back by id, and answers on ${engine}`, async () => {
      const session = await app.createSession({ engine });
      const ai = clientFor(session);
      const params = sdkParams(yolo);
      const contents = [...(params.contents as any[]).slice(0, -1), { role: 'user', parts: [{ text: 'How many lines are in notes.txt?' }] }];
      const chunks: GenerateContentResponse[] = [];
      for await (const chunk of await ai.models.generateContentStream({ ...params, contents })) chunks.push(chunk);
      const first = merge(chunks);
      expect(first.calls).toHaveLength(1);
      const call = first.calls[0]!;
      expect(call.name).toBe('run_shell_command');
      expect(String(call.args!.command)).toMatch(/wc -l/);
      expect(call.id).toBeTruthy();
      contents.push({ role: 'model', parts: [{ functionCall: call, thoughtSignature: 'skip_thought_signature_validator' }] });
      contents.push({ role: 'user', parts: [{ functionResponse: { id: call.id, name: call.name, response: { output: '<untrusted_context>\nOutput: 3\nProcess Group PGID: 1\n</untrusted_context>' } } }] });
      const second = merge([await ai.models.generateContent({ ...params, contents })]);
      expect(second.calls).toHaveLength(0);
      expect(second.text).toContain('3');
      const { completions } = await app.api(`/api/sessions/${session.id}/completions`);
      expect(completions.map((c: any) => c.status)).toEqual(['ok', 'ok']);
    });
  }
});

describe('Gemini URLs', () => {
  it('serves model names with a slash, on v1beta (Gemini CLI) and v1 (@google/genai default)', async () => {
    const session = await app.createSession({ engine: 'sim-vllm' });
    for (const apiVersion of ['v1beta', 'v1']) {
      const ai = new GoogleGenAI({ apiKey: session.key, httpOptions: { baseUrl: session.urls.gemini, apiVersion } });
      const r = await ai.models.generateContent({ model: 'Qwen/Qwen3-8B', contents: 'say hi' });
      expect(r.text).toBeTruthy();
      expect(r.modelVersion).toBe('Qwen/Qwen3-8B');
    }
    const unknown = await fetch(`${session.urls.gemini}/v1beta/models/Qwen/Qwen3-8B:embedContent`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error).toMatchObject({ code: 404, status: 'NOT_FOUND' });
  });
});
