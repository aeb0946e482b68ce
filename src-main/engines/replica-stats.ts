// Rolling per-replica figures for the engine panel: requests/s, tokens/s, latency and TTFT percentiles.
const WINDOW_MS = 60_000;

interface Sample { at: number; tokens: number; totalMs: number; ttftMs: number | null; ok: boolean }

export interface ReplicaFigures {
  requestsPerSec: number;
  tokensPerSec: number;
  p50LatencyMs: number | null;
  p99LatencyMs: number | null;
  p50TtftMs: number | null;
  p99TtftMs: number | null;
  errors: number;
  completed: number;
}

function percentile(sorted: number[], p: number): number | null {
  if (!sorted.length) return null;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export class ReplicaStats {
  private samples: Sample[] = [];
  completed = 0;

  observe(s: Omit<Sample, 'at'>, now = Date.now()): void {
    this.samples.push({ ...s, at: now });
    this.completed++;
    if (this.samples.length > 4096) this.prune(now);
  }

  figures(now = Date.now()): ReplicaFigures {
    this.prune(now);
    const span = Math.max(1, Math.min(WINDOW_MS, now - (this.samples[0]?.at ?? now))) / 1000;
    const lat = this.samples.map((s) => s.totalMs).sort((a, b) => a - b);
    const ttft = this.samples.flatMap((s) => (s.ttftMs === null ? [] : [s.ttftMs])).sort((a, b) => a - b);
    return {
      requestsPerSec: this.samples.length / span,
      tokensPerSec: this.samples.reduce((a, s) => a + s.tokens, 0) / span,
      p50LatencyMs: percentile(lat, 50),
      p99LatencyMs: percentile(lat, 99),
      p50TtftMs: percentile(ttft, 50),
      p99TtftMs: percentile(ttft, 99),
      errors: this.samples.filter((s) => !s.ok).length,
      completed: this.completed,
    };
  }

  private prune(now: number): void {
    const cutoff = now - WINDOW_MS;
    let i = 0;
    while (i < this.samples.length && this.samples[i]!.at < cutoff) i++;
    if (i) this.samples = this.samples.slice(i);
  }
}
