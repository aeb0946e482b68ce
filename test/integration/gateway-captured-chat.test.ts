// Every captured chat-completions request (qwen-code, opencode) replays through Rollgate to both sims.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedRequests } from '../helpers/captures.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

let app: TestApp;
beforeAll(async () => { app = await startTestApp(); });
afterAll(async () => { await app?.stop(); });

const captures = capturedRequests('chat');

describe('captured OpenAI chat requests replay', () => {
  it('has captures to replay', () => expect(captures.length).toBeGreaterThanOrEqual(8));
  for (const engine of ['sim-vllm', 'sim-sglang']) {
    for (const cap of captures) {
      it(`${cap.file} on ${engine}`, async () => {
        const session = await app.createSession({ engine });
        const client = new OpenAI({ baseURL: session.urls.openai, apiKey: session.key, maxRetries: 0 });
        const body = cap.body;
        if (body.stream) {
          const stream = await client.chat.completions.create(body);
          let text = '';
          let calls = 0;
          let finish: string | null = null;
          for await (const chunk of stream as unknown as AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>) {
            text += chunk.choices[0]?.delta.content ?? '';
            calls += chunk.choices[0]?.delta.tool_calls?.filter((c) => c.id).length ?? 0;
            finish = chunk.choices[0]?.finish_reason ?? finish;
          }
          expect(finish).toMatch(/^(stop|tool_calls|length)$/);
          expect(text.length + calls).toBeGreaterThan(0);
        } else {
          const r = await client.chat.completions.create(body);
          expect(r.choices[0]!.message).toBeTruthy();
        }
        const { completions } = await app.api(`/api/sessions/${session.id}/completions`);
        expect(completions).toHaveLength(1);
        expect(completions[0].status).toBe('ok');
        expect(completions[0].outputIds.length).toBeGreaterThan(0);
      });
    }
  }
});
