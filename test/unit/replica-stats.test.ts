// The engine panel's rolling per-replica figures.
import { describe, expect, it } from 'vitest';
import { ReplicaStats } from '../../src-main/engines/replica-stats.js';

describe('ReplicaStats', () => {
  it('rates over the window, latency and TTFT percentiles, errors; old samples age out after 60 s', () => {
    const s = new ReplicaStats();
    const t0 = 1_000_000;
    for (let i = 0; i < 100; i++) s.observe({ tokens: 10, totalMs: i + 1, ttftMs: i % 10 === 0 ? null : (i + 1) / 10, ok: i !== 5 }, t0 + i * 100);
    const f = s.figures(t0 + 10_000);
    expect(f.requestsPerSec).toBeCloseTo(10, 5);
    expect(f.tokensPerSec).toBeCloseTo(100, 5);
    expect(f.p50LatencyMs).toBe(51);
    expect(f.p99LatencyMs).toBe(100);
    expect(f.p50TtftMs).toBe(5.2); // 90 TTFTs (every 10th call has none): the 46th smallest
    expect(f.p99TtftMs).toBe(10);
    expect(f.errors).toBe(1);
    expect(f.completed).toBe(100);
    const later = s.figures(t0 + 200_000);
    expect(later).toMatchObject({ requestsPerSec: 0, p50LatencyMs: null, p99TtftMs: null, errors: 0, completed: 100 });
  });
});
