// Capture health (issue 14, DESIGN §9 custody): per engine and overall, how trustworthy a set of sessions'
// captures are — masked traces with reasons, chain breaks with reasons, prompt reuse in token mode, retries,
// completions per trace. Pure: fed one session at a time (its built traces and records), so callers can
// stream any number of sessions. Shape documented in src-main/api/README.md ("Capture health").
import type { Trace } from '../trajectory/types.js';
import type { CompletionRecord } from '../types.js';

export interface CaptureHealth {
  sessions: number;
  incompleteSessions: number;
  completions: number;
  incompleteCompletions: number;
  traces: number;
  maskedTraces: number;
  maskedFraction: number | null;
  maskReasons: Record<string, number>;
  chainBreaks: { total: number; perTrace: number | null; reasons: Record<string, number> };
  promptReuse: { turns: number; reused: number; rate: number | null };
  retries: number;
  meanCompletionsPerTrace: number | null;
}

/** Breaks where the next prompt did not reuse the previous turn's sampled ids verbatim. */
const NOT_REUSED = new Set(['prompt-diverged', 'rewritten-history']);

interface Tally {
  sessions: number; incompleteSessions: number; completions: number; incompleteCompletions: number; traces: number;
  maskedTraces: number; maskReasons: Record<string, number>; breaks: number; breakReasons: Record<string, number>;
  turns: number; reused: number; retries: number; traceCompletions: number;
}

const newTally = (): Tally => ({
  sessions: 0, incompleteSessions: 0, completions: 0, incompleteCompletions: 0, traces: 0, maskedTraces: 0, maskReasons: {},
  breaks: 0, breakReasons: {}, turns: 0, reused: 0, retries: 0, traceCompletions: 0,
});
const bump = (m: Record<string, number>, k: string, n = 1) => { m[k] = (m[k] ?? 0) + n; };
const ratio = (a: number, b: number) => (b > 0 ? Math.round((a / b) * 1e6) / 1e6 : null);

function view(t: Tally): CaptureHealth {
  return {
    sessions: t.sessions, incompleteSessions: t.incompleteSessions, completions: t.completions, incompleteCompletions: t.incompleteCompletions,
    traces: t.traces, maskedTraces: t.maskedTraces, maskedFraction: ratio(t.maskedTraces, t.traces), maskReasons: t.maskReasons,
    chainBreaks: { total: t.breaks, perTrace: ratio(t.breaks, t.traces), reasons: t.breakReasons },
    promptReuse: { turns: t.turns, reused: t.reused, rate: ratio(t.reused, t.turns) },
    retries: t.retries, meanCompletionsPerTrace: ratio(t.traceCompletions, t.traces),
  };
}

export class CaptureHealthTally {
  private readonly overall = newTally();
  private readonly engines = new Map<string, Tally>();

  /** `tokenMode(engineId)`: whether the engine builds prompts from ids (prompt reuse is measured there only). */
  constructor(private readonly tokenMode: (engineId: string) => boolean) {}

  private of(engineId: string): Tally {
    let t = this.engines.get(engineId);
    if (!t) this.engines.set(engineId, (t = newTally()));
    return t;
  }

  /** One session: its completions and the traces built from them (custody applied). */
  add(records: readonly Pick<CompletionRecord, 'id' | 'engineId' | 'status' | 'retryOf'>[], traces: readonly Trace[]): void {
    const engineOf = new Map(records.map((r) => [r.id, r.engineId]));
    const touched = new Set<string>();
    const incompleteIn = new Set<string>();
    for (const r of records) {
      touched.add(r.engineId);
      for (const t of [this.overall, this.of(r.engineId)]) {
        t.completions++;
        if (r.status === 'incomplete') t.incompleteCompletions++;
        if (r.retryOf) t.retries++;
      }
      if (r.status === 'incomplete') incompleteIn.add(r.engineId);
    }
    this.overall.sessions++;
    if (incompleteIn.size) this.overall.incompleteSessions++;
    for (const e of touched) {
      this.of(e).sessions++;
      if (incompleteIn.size) this.of(e).incompleteSessions++;
    }
    for (const trace of traces) {
      const engine = engineOf.get(trace.completionIds[trace.completionIds.length - 1]!) ?? '';
      const token = this.tokenMode(engine);
      for (const t of [this.overall, this.of(engine)]) {
        t.traces++;
        t.traceCompletions += trace.completionIds.length;
        if (trace.masked) {
          t.maskedTraces++;
          bump(t.maskReasons, trace.maskReason ?? 'masked');
        }
        for (const b of trace.breaks) {
          t.breaks++;
          bump(t.breakReasons, b.reason);
        }
        if (token) {
          const diverged = trace.breaks.filter((b) => NOT_REUSED.has(b.reason)).length;
          t.reused += trace.completionIds.length - 1;
          t.turns += trace.completionIds.length - 1 + diverged;
        }
      }
    }
  }

  result(): { overall: CaptureHealth; byEngine: Record<string, CaptureHealth> } {
    return { overall: view(this.overall), byEngine: Object.fromEntries([...this.engines].sort(([a], [b]) => a.localeCompare(b)).map(([k, t]) => [k, view(t)])) };
  }
}
