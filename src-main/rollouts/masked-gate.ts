// Batch custody gate (issue 14, DESIGN §9): a batch may set `maxMaskedFraction`; once at least
// `maskedMinTraces` traces are in, a masked share above it stops the batch with a clear error instead of
// producing mostly masked (untrainable) data. Counted per finished session, prefix-merge traces.
import { buildSessionTraces } from '../core/export/session-traces.js';
import type { Store } from '../store/index.js';

export class MaskedGate {
  traces = 0;
  masked = 0;
  readonly reasons: Record<string, number> = {};

  constructor(readonly maxFraction: number, readonly minTraces: number) {}

  /** Adds a finished session's traces; returns the error that stops the batch, or null. */
  async add(store: Pick<Store, 'sessions' | 'completions'>, sessionId: string): Promise<string | null> {
    const [session, completions] = await Promise.all([store.sessions.get(sessionId), store.completions.listBySession(sessionId)]);
    const built = buildSessionTraces('prefix-merge', session, completions);
    for (const { trace } of built.traces) {
      this.traces++;
      if (trace.masked) {
        this.masked++;
        const why = trace.maskReason ?? 'masked';
        this.reasons[why] = (this.reasons[why] ?? 0) + 1;
      }
    }
    if (this.traces < this.minTraces || this.masked / this.traces <= this.maxFraction) return null;
    const why = Object.entries(this.reasons).map(([k, n]) => `${k} ${n}`).join(', ');
    return `stopped: ${this.masked} of ${this.traces} traces masked (${(this.masked / this.traces).toFixed(2)} > maxMaskedFraction ${this.maxFraction}; ${why}) — the engine's captures cannot be trusted`;
  }
}
