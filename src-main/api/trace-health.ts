// Trace health of sessions and batches (DESIGN §6, §9 custody): how many prefix-merge traces a session
// makes, how many chain breaks (with their reasons) and how many traces are masked out of training. A
// session's figures are cached until its completion count or status changes, so a dashboard of large
// finished batches costs one build per session, ever (per server run).
import type { EngineTokenTexts } from '../engines/token-text.js';
import { buildSessionTraces } from '../core/export/session-traces.js';
import type { SessionSummary, Store } from '../store/index.js';

export interface SessionHealth {
  sessionId: string;
  traces: number;
  /** Chain breaks over all the session's traces. */
  breaks: number;
  breakReasons: Record<string, number>;
  /** Traces masked out of training (custody), with their reasons. */
  masked: number;
  maskedReasons: Record<string, number>;
  /** Newest policy version among the session's completions (null without completions). */
  policyVersion: number | null;
}

const bump = (m: Record<string, number>, k: string) => { m[k] = (m[k] ?? 0) + 1; };

export class TraceHealth {
  private readonly cache = new Map<string, { key: string; health: SessionHealth }>();
  constructor(private readonly store: Store, private readonly tokenTexts?: Pick<EngineTokenTexts, 'get'>) {}

  async of(s: Pick<SessionSummary, 'id' | 'completionCount' | 'status'>): Promise<SessionHealth> {
    const key = `${s.completionCount}:${s.status}`;
    const hit = this.cache.get(s.id);
    if (hit && hit.key === key) return hit.health;
    const [session, records] = await Promise.all([this.store.sessions.get(s.id), this.store.completions.listBySession(s.id)]);
    const built = buildSessionTraces('prefix-merge', session, records, { tokenText: this.tokenTexts?.get(session?.engineId) });
    const health: SessionHealth = { sessionId: s.id, traces: built.traces.length, breaks: 0, breakReasons: {}, masked: 0, maskedReasons: {}, policyVersion: null };
    for (const { trace } of built.traces) {
      for (const b of trace.breaks) {
        health.breaks++;
        bump(health.breakReasons, b.reason);
      }
      // Custody (DESIGN §9) marks traces an incomplete call spoiled; they stay out of training exports.
      if (trace.masked) {
        health.masked++;
        bump(health.maskedReasons, trace.maskReason ?? 'masked');
      }
    }
    for (const r of records) health.policyVersion = Math.max(health.policyVersion ?? r.policyVersion, r.policyVersion);
    this.cache.set(s.id, { key, health });
    return health;
  }
}

export interface PolicyPoint { version: number; sessions: number; scored: number; mean: number | null; stderr: number | null }

export interface BatchHealth {
  batchId: string;
  sessions: number;
  traces: number;
  breaks: number;
  /** Sessions with at least one chain break. */
  sessionsWithBreaks: number;
  /** sessionsWithBreaks / sessions (null without sessions). */
  breakRate: number | null;
  breakReasons: Record<string, number>;
  masked: number;
  /** masked / traces (null without traces). */
  maskedFraction: number | null;
  maskedReasons: Record<string, number>;
  byTask: Record<string, { traces: number; breaks: number; masked: number }>;
  bySession: Record<string, { traces: number; breaks: number; masked: number }>;
  /** Mean session reward per policy version, with its standard error (error bars). */
  byPolicy: PolicyPoint[];
  /** Mean reward over the batch's scored sessions, with its standard error. */
  reward: { mean: number | null; stderr: number | null; scored: number };
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;

/** Mean and standard error of the mean (null below two values for the error). */
export function meanStderr(xs: number[]): { mean: number | null; stderr: number | null } {
  if (xs.length === 0) return { mean: null, stderr: null };
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  if (xs.length < 2) return { mean: round(mean), stderr: null };
  const v = xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (xs.length - 1);
  return { mean: round(mean), stderr: round(Math.sqrt(v / xs.length)) };
}

/** Yields to the event loop every `every` sessions, so a large batch does not stall the gateway. */
const YIELD_EVERY = 16;

export async function batchHealth(health: TraceHealth, batchId: string, sessions: SessionSummary[]): Promise<BatchHealth> {
  const out: BatchHealth = {
    batchId, sessions: sessions.length, traces: 0, breaks: 0, sessionsWithBreaks: 0, breakRate: null, breakReasons: {},
    masked: 0, maskedFraction: null, maskedReasons: {}, byTask: {}, bySession: {}, byPolicy: [], reward: { mean: null, stderr: null, scored: 0 },
  };
  const scored: number[] = [];
  const policies = new Map<number, { sessions: number; rewards: number[] }>();
  for (let i = 0; i < sessions.length; i++) {
    if (i > 0 && i % YIELD_EVERY === 0) await new Promise((r) => setImmediate(r));
    const s = sessions[i];
    const h = await health.of(s);
    out.traces += h.traces;
    out.breaks += h.breaks;
    out.masked += h.masked;
    if (h.breaks > 0) out.sessionsWithBreaks++;
    for (const [k, n] of Object.entries(h.breakReasons)) out.breakReasons[k] = (out.breakReasons[k] ?? 0) + n;
    for (const [k, n] of Object.entries(h.maskedReasons)) out.maskedReasons[k] = (out.maskedReasons[k] ?? 0) + n;
    out.bySession[s.id] = { traces: h.traces, breaks: h.breaks, masked: h.masked };
    const t = (out.byTask[s.taskId ?? '—'] ??= { traces: 0, breaks: 0, masked: 0 });
    t.traces += h.traces;
    t.breaks += h.breaks;
    t.masked += h.masked;
    const reward = typeof s.reward === 'number' && s.status !== 'active' && s.status !== 'interrupted' ? s.reward : null;
    if (reward !== null) scored.push(reward);
    if (h.policyVersion !== null) {
      const p = policies.get(h.policyVersion) ?? { sessions: 0, rewards: [] };
      p.sessions++;
      if (reward !== null) p.rewards.push(reward);
      policies.set(h.policyVersion, p);
    }
  }
  out.breakRate = out.sessions ? round(out.sessionsWithBreaks / out.sessions) : null;
  out.maskedFraction = out.traces ? round(out.masked / out.traces) : null;
  out.reward = { ...meanStderr(scored), scored: scored.length };
  out.byPolicy = [...policies.entries()].sort((a, b) => a[0] - b[0])
    .map(([version, p]) => ({ version, sessions: p.sessions, scored: p.rewards.length, ...meanStderr(p.rewards) }));
  return out;
}
