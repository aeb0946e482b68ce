// Forwards weight-sync pause/resume to the engines' own routes (the driver names them), after Rollgate has
// drained its own calls, so trainers can update weights with the engines idle.
import { driverFor } from './drivers/index.js';
import { engineRequest } from './http.js';
import type { PauseMode } from './pause-gate.js';

export interface ForwardResult { engineId: string; replica: string; ok: boolean; status?: number; error?: string }

export async function forwardToEngine(engineId: string, kind: string, replica: string, action: 'pause' | 'resume', mode: PauseMode = 'queue'): Promise<ForwardResult> {
  const driver = driverFor(kind);
  const route = action === 'pause' ? driver.pauseRoute(mode) : driver.resumeRoute();
  try {
    const res = await engineRequest({ baseUrl: replica, path: route.path, method: 'POST', body: route.body ?? {}, timeoutMs: 30_000 });
    const text = await res.body.text();
    return res.statusCode < 300 ? { engineId, replica, ok: true, status: res.statusCode } : { engineId, replica, ok: false, status: res.statusCode, error: text.slice(0, 300) };
  } catch (err) {
    return { engineId, replica, ok: false, error: (err as Error).message };
  }
}
