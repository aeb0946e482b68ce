// Shared by the traces / rescore / export integration tests: drives tool-using conversations through the
// gateway with the official openai SDK (a tiny agent loop), and checks trace invariants against records.
import OpenAI from 'openai';
import { expect } from 'vitest';
import type { TestApp } from '../helpers/app.js';

export const calculator = {
  type: 'function' as const,
  function: {
    name: 'calculator',
    description: 'Evaluate an arithmetic expression',
    parameters: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] },
  },
};

const MODEL = 'Qwen/Qwen3-8B';
type Msg = OpenAI.Chat.ChatCompletionMessageParam;

function evaluate(expr: string): string {
  const clean = expr.replace(/[^0-9+\-*/(). ]/g, '');
  return String(Function(`"use strict"; return (${clean});`)());
}

export interface AgentRun {
  sessionId: string;
  client: OpenAI;
  messages: Msg[];
  urls: { openai: string };
}

/** One agent turn: asks, runs every requested tool, asks again until the model answers without tools. */
export async function agentTurn(run: AgentRun, userText: string, opts: { stream?: boolean; maxSteps?: number } = {}): Promise<string> {
  run.messages.push({ role: 'user', content: userText });
  for (let step = 0; step < (opts.maxSteps ?? 4); step++) {
    let message: OpenAI.Chat.ChatCompletionMessage;
    if (opts.stream) {
      const s = await run.client.chat.completions.create({ model: MODEL, messages: run.messages, tools: [calculator], stream: true });
      let content = '';
      const calls: Array<{ id: string; name: string; arguments: string }> = [];
      for await (const chunk of s) {
        const d = chunk.choices[0]?.delta;
        if (!d) continue;
        content += d.content ?? '';
        for (const tc of d.tool_calls ?? []) {
          const c = (calls[tc.index] ??= { id: '', name: '', arguments: '' });
          if (tc.id) c.id = tc.id;
          c.name += tc.function?.name ?? '';
          c.arguments += tc.function?.arguments ?? '';
        }
      }
      message = {
        role: 'assistant', content, refusal: null,
        ...(calls.length ? { tool_calls: calls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } })) } : {}),
      };
    } else {
      const r = await run.client.chat.completions.create({ model: MODEL, messages: run.messages, tools: [calculator] });
      message = r.choices[0]!.message;
    }
    run.messages.push(message as Msg);
    const calls = message.tool_calls ?? [];
    if (!calls.length) return message.content ?? '';
    for (const c of calls) {
      const args = JSON.parse((c as { function: { arguments: string } }).function.arguments) as { expression: string };
      run.messages.push({ role: 'tool', tool_call_id: c.id, content: evaluate(args.expression) });
    }
  }
  throw new Error('agent did not finish');
}

export async function startAgent(app: TestApp, engine: string, body: Record<string, unknown> = {}): Promise<AgentRun> {
  const s = await app.createSession({ engine, ...body });
  const client = new OpenAI({ baseURL: s.urls.openai, apiKey: 'not-a-real-key', maxRetries: 0 });
  return { sessionId: s.id, client, messages: [{ role: 'system', content: 'You are a careful assistant. Use tools.' }], urls: s.urls };
}

/** A two-question tool session: 17*23 with the calculator, then a follow-up user turn 12+30. */
export async function toolSession(app: TestApp, engine: string, opts: { reward?: number | null; stream?: boolean; body?: Record<string, unknown> } = {}): Promise<AgentRun> {
  const run = await startAgent(app, engine, opts.body);
  expect(await agentTurn(run, 'What is 17*23? Use the calculator.', { stream: opts.stream })).toContain('391');
  expect(await agentTurn(run, 'Now what is 12+30? Use the calculator.', { stream: opts.stream })).toContain('42');
  if (opts.reward !== undefined) {
    await app.api(`/api/sessions/${run.sessionId}/finish`, { method: 'POST', body: JSON.stringify({ reward: opts.reward }) });
  }
  return run;
}

export interface TraceJson {
  id: string;
  sessionId: string;
  completionIds: string[];
  promptIds: number[];
  responseIds: number[];
  lossMask: number[];
  responseLogprobs: number[];
  reward: number | null;
  breaks: Array<{ reason: string; atCompletionId: string; tokenIndex?: number }>;
  proof: { ok: boolean; turns: Array<{ completionId: string; promptLength: number; outputLength: number; rerendered?: number; outputStart?: number }> };
  rerendered?: Array<{ at: number; sampled: number[]; served: number[] }>;
  origin: { kind: string; samePromptAs?: string; fromTraceId?: string };
  skipped: Array<{ completionId: string; reason: string }>;
  groupId: string | null;
  taskId: string | null;
  batchId: string | null;
  sampleIndex: number | null;
  engine: string | null;
  rewardSource: string | null;
}

export interface CompletionJson {
  id: string;
  status: string;
  promptIds: number[];
  outputIds: number[];
  outputLogprobs: number[];
  engineId: string;
}

/**
 * The invariants on real records: lengths agree; every proof turn's prompt is the concatenation
 * so far; every mask-1 token is a sampled id with its recorded logprob (the float32 value stored); every
 * sampled token of an ok completion appears in exactly one trace; non-ok completions contribute nothing.
 */
export function checkTraces(traces: TraceJson[], completions: CompletionJson[]): void {
  const byId = new Map(completions.map((c) => [c.id, c]));
  const placed = new Map<string, number>();
  for (const t of traces) {
    const n = t.responseIds.length;
    expect(t.lossMask).toHaveLength(n);
    expect(t.responseLogprobs).toHaveLength(n);
    expect(t.proof.ok).toBe(true);
    const full = [...t.promptIds, ...t.responseIds];
    const mask = [...new Array<number>(t.promptIds.length).fill(0), ...t.lossMask];
    const lps = [...new Array<number>(t.promptIds.length).fill(0), ...t.responseLogprobs];
    const covered = new Array<boolean>(full.length).fill(false);
    for (const turn of t.proof.turns) {
      const c = byId.get(turn.completionId)!;
      expect(c.status).toBe('ok');
      // chat mode: the engine read the trace's first `rerendered` spans in their served form
      const served = [...full];
      for (const span of (t.rerendered ?? []).slice(0, turn.rerendered ?? 0).reverse()) served.splice(span.at, span.sampled.length, ...span.served);
      expect(served.slice(0, turn.promptLength)).toEqual(c.promptIds);
      const start = turn.outputStart ?? turn.promptLength;
      expect(full.slice(start, start + turn.outputLength)).toEqual(c.outputIds);
      expect(lps.slice(start, start + turn.outputLength)).toEqual(c.outputLogprobs);
      for (let i = 0; i < turn.outputLength; i++) {
        expect(mask[start + i]).toBe(1);
        covered[start + i] = true;
      }
      placed.set(c.id, (placed.get(c.id) ?? 0) + 1);
    }
    for (let i = 0; i < full.length; i++) {
      if (!covered[i]) {
        expect(mask[i]).toBe(0);
        expect(lps[i]).toBe(0);
      }
    }
  }
  for (const c of completions) {
    if (c.status === 'ok' && c.outputIds.length > 0) expect(placed.get(c.id), `completion ${c.id} placed once`).toBe(1);
    if (c.status !== 'ok') expect(placed.has(c.id)).toBe(false);
  }
}
