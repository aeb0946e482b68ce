// Standalone sim replicas behind one Rollgate, for fleet tests (routing, failover, pause, token mode).
import { startSimEngine, type SimEngine } from '../../src-main/engines/sim/index.js';
import type { EngineConfig } from '../../src-main/engines/types.js';
import { startTestApp, type TestApp } from './app.js';

export const MODEL = 'Qwen/Qwen3-8B';

export async function startSims(flavor: 'vllm' | 'sglang', count: number, knobs: Parameters<typeof startSimEngine>[0] extends infer O ? Partial<O> : never = {}): Promise<SimEngine[]> {
  return Promise.all(Array.from({ length: count }, () => startSimEngine({ flavor, seed: 11, skill: 1, maxModelLen: 131072, ...knobs })));
}

export function engine(id: string, kind: 'vllm' | 'sglang', sims: SimEngine[], mode: 'chat' | 'token'): EngineConfig {
  return { id, kind, replicas: sims.map((s) => s.url), model: MODEL, mode, tokenizer: 'builtin:qwen3' };
}

export async function startFleetApp(engines: EngineConfig[], healthIntervalMs = 100): Promise<TestApp> {
  return startTestApp({ sim: false, engines, healthIntervalMs });
}

export const calculatorTool = {
  type: 'function' as const,
  function: {
    name: 'calculator',
    description: 'Evaluate an arithmetic expression',
    parameters: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] },
  },
};

/** One agent turn over raw HTTP (OpenAI chat), so tests see exactly what an agent would. */
export async function chat(baseUrl: string, body: Record<string, unknown>): Promise<{ status: number; json: any; text: string; headers: Headers }> {
  const res = await fetch(`${baseUrl}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, ...body }) });
  const text = await res.text();
  let json: any = null;
  try { json = JSON.parse(text); } catch { /* SSE */ }
  return { status: res.status, json, text, headers: res.headers };
}
