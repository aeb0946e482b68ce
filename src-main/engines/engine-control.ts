// Forwards weight-sync pause/resume to the engines' own routes (vLLM /pause, SGLang /pause_generation),
// after Rollgate has drained its own calls, so trainers can update weights with the engines idle.
import { engineRequest } from './http.js';
import type { PauseMode } from './pause-gate.js';
import type { EngineKind } from './types.js';

export interface ForwardResult { engineId: string; replica: string; ok: boolean; status?: number; error?: string }

function pauseRoute(kind: EngineKind, mode: PauseMode): { path: string; body?: unknown } {
  if (kind === 'vllm') return { path: `/pause?mode=${mode === 'abort' ? 'abort' : 'wait'}` };
  return { path: '/pause_generation', body: { mode: mode === 'abort' ? 'abort' : 'in_place' } };
}

function resumeRoute(kind: EngineKind): { path: string; body?: unknown } {
  return kind === 'vllm' ? { path: '/resume' } : { path: '/continue_generation', body: {} };
}

export async function forwardToEngine(engineId: string, kind: EngineKind, replica: string, action: 'pause' | 'resume', mode: PauseMode = 'queue'): Promise<ForwardResult> {
  const route = action === 'pause' ? pauseRoute(kind, mode) : resumeRoute(kind);
  try {
    const res = await engineRequest({ baseUrl: replica, path: route.path, method: 'POST', body: route.body ?? {}, timeoutMs: 30_000 });
    const text = await res.body.text();
    return res.statusCode < 300 ? { engineId, replica, ok: true, status: res.statusCode } : { engineId, replica, ok: false, status: res.statusCode, error: text.slice(0, 300) };
  } catch (err) {
    return { engineId, replica, ok: false, error: (err as Error).message };
  }
}
