// Load an engine reports on /metrics (gauge names from its driver), for least-loaded routing.
import { driverFor } from './drivers/index.js';
import { engineRequest } from './http.js';

/** Sums a Prometheus gauge over its label sets; null when the metric is absent. */
export function promGauge(text: string, name: string): number | null {
  let total: number | null = null;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (rest[0] !== '{' && rest[0] !== ' ') continue;
    const value = Number(line.trim().split(/\s+/).at(-1));
    if (Number.isFinite(value)) total = (total ?? 0) + value;
  }
  return total;
}

export async function readEngineLoad(kind: string, replica: string, signal?: AbortSignal): Promise<{ running: number; waiting: number } | null> {
  try {
    const res = await engineRequest({ baseUrl: replica, path: '/metrics', signal, timeoutMs: 3000 });
    const text = await res.body.text();
    if (res.statusCode !== 200) return null;
    const m = driverFor(kind).loadMetrics;
    const running = promGauge(text, m.running);
    const waiting = promGauge(text, m.waiting);
    return running === null && waiting === null ? null : { running: running ?? 0, waiting: waiting ?? 0 };
  } catch { return null; }
}
