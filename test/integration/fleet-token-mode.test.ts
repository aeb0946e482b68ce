// Token mode on both engines: a 10-turn tool session's prompts extend the previous prompt + sampled ids
// exactly, even when the sampled ids are not what re-tokenizing the text would give (issue 6).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimEngine } from '../../src-main/engines/sim/index.js';
import { loadTokenizer, type ChatTokenizer } from '../../src-main/engines/tokenizer/index.js';
import type { TestApp } from '../helpers/app.js';
import { calculatorTool, chat, engine, startFleetApp, startSims } from '../helpers/fleet.js';

let sims: SimEngine[];
let app: TestApp;
let tok: ChatTokenizer;
beforeAll(async () => {
  // Half of the multi-character tokens are sampled as two shorter ones, as real models sometimes do.
  const knobs = { ttftMs: 0, perTokenMs: 0, nonCanonicalRate: 0.5 };
  sims = [...await startSims('vllm', 1, knobs), ...await startSims('sglang', 1, knobs), ...await startSims('vllm', 1, knobs)];
  app = await startFleetApp([
    engine('vllm-token', 'vllm', [sims[0]!], 'token'),
    engine('sglang-token', 'sglang', [sims[1]!], 'token'),
    engine('vllm-chat', 'vllm', [sims[2]!], 'chat'),
  ]);
  tok = await loadTokenizer();
});
afterAll(async () => {
  await app?.stop();
  await Promise.all(sims.map((s) => s.close()));
});

/** Five calculator tasks, each a tool call then an answer: ten model turns in one growing conversation. */
async function tenTurnSession(engineId: string) {
  const session = await app.createSession({ engine: engineId });
  const messages: any[] = [{ role: 'system', content: 'You are a careful assistant. Always use the calculator.' }];
  for (let task = 0; task < 5; task++) {
    messages.push({ role: 'user', content: `What is ${13 + task}*${7 + task}? Use the calculator.` });
    const call = await chat(session.urls.openai, { messages, tools: [calculatorTool] });
    expect(call.status, call.text).toBe(200);
    const message = call.json.choices[0].message;
    expect(message.tool_calls).toHaveLength(1);
    messages.push(message, { role: 'tool', tool_call_id: message.tool_calls[0].id, content: String((13 + task) * (7 + task)) });
    const answer = await chat(session.urls.openai, { messages, tools: [calculatorTool] });
    expect(answer.status, answer.text).toBe(200);
    messages.push(answer.json.choices[0].message);
  }
  const { completions } = await app.api(`/api/sessions/${session.id}/completions`);
  expect(completions).toHaveLength(10);
  return completions as Array<{ promptIds: number[]; outputIds: number[] }>;
}

function extendsPrevious(prev: { promptIds: number[]; outputIds: number[] }, next: { promptIds: number[] }): boolean {
  const prefix = [...prev.promptIds, ...prev.outputIds];
  return prefix.every((id, i) => next.promptIds[i] === id);
}

describe('token mode', () => {
  for (const engineId of ['vllm-token', 'sglang-token']) {
    it(`${engineId}: every prompt starts with the previous prompt + sampled ids`, async () => {
      const completions = await tenTurnSession(engineId);
      let nonCanonical = 0;
      for (let i = 1; i < completions.length; i++) {
        const prev = completions[i - 1]!;
        expect(extendsPrevious(prev, completions[i]!), `turn ${i}`).toBe(true);
        const retokenized = tok.encode(tok.decode(prev.outputIds));
        if (retokenized.join() !== prev.outputIds.join()) nonCanonical++;
      }
      expect(nonCanonical, 'turns whose sampled ids re-tokenize differently').toBeGreaterThan(5);
    });
  }

  it('chat mode, for contrast, drifts: the engine re-tokenizes the replayed text', async () => {
    const completions = await tenTurnSession('vllm-chat');
    const drifted = completions.slice(1).filter((c, i) => !extendsPrevious(completions[i]!, c)).length;
    expect(drifted).toBeGreaterThan(0);
  });
});
