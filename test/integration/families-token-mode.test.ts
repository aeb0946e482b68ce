// Every model family on both sim flavours in token mode (issue 13): the OpenAI SDK runs a ten-turn tool
// conversation, streaming and not; the recorded ids are the engine's; each turn's prompt is the previous
// prompt + the previous sampled ids + the new messages, with nothing re-tokenized.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAMILY_NAMES, getFamily } from '../../src-main/core/families/index.js';
import { startSimEngine, type SimEngine } from '../../src-main/engines/sim/index.js';
import { loadTokenFormat } from '../../src-main/engines/token-format.js';
import type { EngineConfig } from '../../src-main/engines/types.js';
import type { TestApp } from '../helpers/app.js';
import { calculatorTool, startFleetApp } from '../helpers/fleet.js';

const FLAVORS = ['vllm', 'sglang'] as const;
let app: TestApp;
const sims = new Map<string, SimEngine>();

beforeAll(async () => {
  const engines: EngineConfig[] = [];
  for (const family of FAMILY_NAMES) {
    for (const flavor of FLAVORS) {
      // Some multi-character tokens are sampled as two shorter ones, so re-tokenizing would show.
      const sim = await startSimEngine({ flavor, family, seed: 5, skill: 1, ttftMs: 0, perTokenMs: 0, maxModelLen: 131072, nonCanonicalRate: 0.3 });
      sims.set(`${family}-${flavor}`, sim);
      engines.push({ id: `${family}-${flavor}`, kind: flavor, replicas: [sim.url], model: sim.model, mode: 'token', family });
    }
  }
  app = await startFleetApp(engines);
}, 120_000);
afterAll(async () => {
  await app?.stop();
  await Promise.all([...sims.values()].map((s) => s.close()));
});

type Completion = { seq: number; promptIds: number[]; outputIds: number[]; outputLogprobs: number[]; requestServed: Record<string, unknown>; response: any };

/** Five calculator tasks, each a tool call then an answer: ten model turns in one growing conversation. */
async function tenTurns(engineId: string, stream: boolean) {
  const session = await app.createSession({ engine: engineId });
  const client = new OpenAI({ apiKey: session.key, baseURL: session.urls.openai });
  const model = sims.get(engineId)!.model;
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'system', content: 'You are a careful assistant. Always use the calculator.' }];
  const ask = async (): Promise<OpenAI.ChatCompletionMessage> => {
    if (!stream) return (await client.chat.completions.create({ model, messages, tools: [calculatorTool] })).choices[0]!.message;
    const s = client.chat.completions.stream({ model, messages, tools: [calculatorTool] });
    return (await s.finalChatCompletion()).choices[0]!.message;
  };
  for (let task = 0; task < 5; task++) {
    const [a, b] = [13 + task, 7 + task];
    messages.push({ role: 'user', content: `What is ${a}*${b}? Use the calculator.` });
    const call = await ask();
    expect(call.tool_calls, JSON.stringify(call)).toHaveLength(1);
    const tc = call.tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(tc.function.name).toBe('calculator');
    expect(JSON.parse(tc.function.arguments)).toEqual({ expression: `${a}*${b}` });
    messages.push({ role: 'assistant', content: call.content, tool_calls: call.tool_calls, ...(call as { reasoning_content?: string }).reasoning_content ? { reasoning_content: (call as { reasoning_content?: string }).reasoning_content } : {} } as OpenAI.ChatCompletionMessageParam);
    messages.push({ role: 'tool', tool_call_id: tc.id, content: String(a * b) });
    const answer = await ask();
    expect(answer.tool_calls ?? []).toHaveLength(0);
    expect(answer.content).toContain(String(a * b));
    messages.push({ role: 'assistant', content: answer.content });
  }
  const { completions } = await app.api(`/api/sessions/${session.id}/completions`);
  expect(completions).toHaveLength(10);
  return completions as Completion[];
}

describe('every model family in token mode', () => {
  for (const family of FAMILY_NAMES) {
    for (const flavor of FLAVORS) {
      for (const stream of [false, true]) {
        it(`${family} on ${flavor}${stream ? ', streaming' : ''}: ten turns, each prompt extends the last prompt + sampled ids`, async () => {
          const engineId = `${family}-${flavor}`;
          const before = sims.get(engineId)!.stats().completionTokens;
          const completions = await tenTurns(engineId, stream);
          const fmt = await loadTokenFormat({ family });
          for (const [i, c] of completions.entries()) {
            // The ids recorded are the ids the engine was sent and sampled, ending on the family's stop token.
            const sent = (c.requestServed.prompt ?? c.requestServed.input_ids) as number[];
            expect(sent).toEqual(c.promptIds);
            expect(c.outputLogprobs).toHaveLength(c.outputIds.length);
            expect(fmt.stopIds).toContain(c.outputIds.at(-1));
            if (i === 0) continue;
            const prev = completions[i - 1]!;
            expect(c.promptIds.slice(0, prev.promptIds.length + prev.outputIds.length), `turn ${i}`).toEqual([...prev.promptIds, ...prev.outputIds]);
          }
          expect(sims.get(engineId)!.stats().completionTokens - before).toBe(completions.reduce((n, c) => n + c.outputIds.length, 0));
          // Each turn stopped on the token its family ends a tool call, or an answer, with.
          const view = { turns: [], tools: [], generation: 'free' as const, preamble: '' };
          const callEnd = getFamily(family).formatTurn({ toolCalls: [{ name: 'calculator', arguments: {} }] }, view).end;
          const answerEnd = getFamily(family).formatTurn({ content: 'done' }, view).end;
          expect(completions.map((c) => fmt.tok.tokenText(c.outputIds.at(-1)!))).toEqual(completions.map((_, i) => (i % 2 === 0 ? callEnd : answerEnd)));
        }, 60_000);
      }
    }
  }
});
