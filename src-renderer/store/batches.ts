// Batches: the list (GET /api/batches), each opened batch's detail (GET /api/batches/:id), and per-batch
// figures the batch API does not carry (sessions, completions, tokens from GET /api/sessions?batch=;
// traces from GET /api/sessions/:id/traces, counted once the batch has ended). Live `batch` events
// patch the list at once and schedule refetches.
import { create } from 'zustand';
import { api } from '../backend/client.js';
import type { BatchEvent } from '../backend/events.js';
import type { BatchDetail, BatchSummary, SessionSummary } from '../backend/types.js';
import { emptyResource, errorText, isAbort, type Resource } from './resource.js';

export const ACTIVE_STATUSES = new Set(['queued', 'running']);
export const isActive = (status: string | undefined) => !!status && ACTIVE_STATUSES.has(status);

export interface Figures {
  sessions: number;
  completions: number;
  tokens: number;
  /** null until counted (only for ended batches). */
  traces: number | null;
}

export interface BatchStats extends Figures {
  /** The sessions list hit its page limit: figures are lower bounds. */
  truncated: boolean;
  byTask: Record<string, Figures>;
  /** Mean session reward per policy version (from the traces' policy versions). */
  byPolicy: Array<{ version: number; meanReward: number | null; sessions: number }>;
  /** skipped: too many sessions to count automatically (the batch API has no trace count). */
  tracesState: 'idle' | 'loading' | 'done' | 'error' | 'skipped';
  tracesError: string | null;
  error: string | null;
  updatedAt: number;
}

export interface DetailEntry {
  data: BatchDetail | null;
  loading: boolean;
  refreshing: boolean;
  error: string | null;
}

interface BatchesState extends Resource<BatchSummary[]> {
  details: Record<string, DetailEntry>;
  stats: Record<string, BatchStats>;
  /** Latest install / callback phase per batch, from events. */
  phases: Record<string, { phase: string; message?: string }>;
  fetch(opts?: { quiet?: boolean }): Promise<void>;
  fetchDetail(id: string, opts?: { quiet?: boolean }): Promise<void>;
  /**
   * Sessions / completions / tokens of a batch, and (once it has ended) its traces, counted one
   * session at a time: skipped for batches over `traceLimit` sessions (default 300) unless asked.
   */
  loadStats(id: string, opts?: { traces?: boolean; traceLimit?: number }): Promise<void>;
  applyEvent(e: BatchEvent): void;
}

let listInflight: AbortController | null = null;
const detailInflight = new Map<string, AbortController>();
const statsInflight = new Map<string, Promise<void>>();

const emptyFigures = (): Figures => ({ sessions: 0, completions: 0, tokens: 0, traces: null });

function aggregate(sessions: SessionSummary[]): Pick<BatchStats, 'sessions' | 'completions' | 'tokens' | 'byTask'> {
  const byTask: Record<string, Figures> = {};
  let completions = 0;
  let tokens = 0;
  for (const s of sessions) {
    const t = (byTask[s.taskId ?? '—'] ??= emptyFigures());
    t.sessions++;
    t.completions += s.completionCount ?? 0;
    t.tokens += s.totalTokens ?? 0;
    completions += s.completionCount ?? 0;
    tokens += s.totalTokens ?? 0;
  }
  return { sessions: sessions.length, completions, tokens, byTask };
}

/** Runs fn over items with at most `limit` in flight. */
async function eachLimit<T>(items: T[], limit: number, fn: (t: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

export const useBatches = create<BatchesState>((set, get) => {
  const timers = new Map<string, ReturnType<typeof setTimeout>>();
  const later = (key: string, ms: number, fn: () => void) => {
    if (timers.has(key)) return;
    timers.set(
      key,
      setTimeout(() => {
        timers.delete(key);
        fn();
      }, ms),
    );
  };

  async function countTraces(id: string, sessions: SessionSummary[]) {
    set((s) => ({ stats: { ...s.stats, [id]: { ...s.stats[id], tracesState: 'loading', tracesError: null } } }));
    const perTask: Record<string, number> = {};
    const policyOf = new Map<string, number>();
    let total = 0;
    try {
      await eachLimit(sessions, 3, async (ses) => {
        const { traces } = await api.traces(ses.id, 'prefix-merge');
        total += traces.length;
        const k = ses.taskId ?? '—';
        perTask[k] = (perTask[k] ?? 0) + traces.length;
        let v = -1;
        for (const t of traces) for (const pv of t.policyVersions ?? []) v = Math.max(v, pv);
        if (v >= 0) policyOf.set(ses.id, v);
      });
    } catch (err) {
      set((s) => ({ stats: { ...s.stats, [id]: { ...s.stats[id], tracesState: 'error', tracesError: errorText(err) } } }));
      return;
    }
    const groups = new Map<number, { sum: number; scored: number; sessions: number }>();
    for (const ses of sessions) {
      const v = policyOf.get(ses.id);
      if (v === undefined) continue;
      const g = groups.get(v) ?? { sum: 0, scored: 0, sessions: 0 };
      g.sessions++;
      if (typeof ses.reward === 'number') {
        g.sum += ses.reward;
        g.scored++;
      }
      groups.set(v, g);
    }
    set((s) => {
      const cur = s.stats[id];
      const byTask = { ...cur.byTask };
      for (const [k, f] of Object.entries(byTask)) byTask[k] = { ...f, traces: perTask[k] ?? 0 };
      return {
        stats: {
          ...s.stats,
          [id]: {
            ...cur,
            traces: total,
            byTask,
            byPolicy: [...groups.entries()]
              .sort((a, b) => a[0] - b[0])
              .map(([version, g]) => ({ version, sessions: g.sessions, meanReward: g.scored ? g.sum / g.scored : null })),
            tracesState: 'done',
            tracesError: null,
          },
        },
      };
    });
  }

  return {
    ...emptyResource<BatchSummary[]>(),
    details: {},
    stats: {},
    phases: {},

    async fetch({ quiet = false } = {}) {
      listInflight?.abort();
      const ctrl = new AbortController();
      listInflight = ctrl;
      const first = get().data === null;
      set(quiet || !first ? { refreshing: true } : { loading: true, error: null });
      try {
        const { batches } = await api.batches(ctrl.signal);
        const sorted = [...(batches ?? [])].sort((a, b) => b.createdAt - a.createdAt);
        set({ data: sorted, loading: false, refreshing: false, error: null, updatedAt: Date.now() });
      } catch (err) {
        if (isAbort(err)) return;
        set({ loading: false, refreshing: false, error: errorText(err) });
      } finally {
        if (listInflight === ctrl) listInflight = null;
      }
    },

    async fetchDetail(id, { quiet = false } = {}) {
      detailInflight.get(id)?.abort();
      const ctrl = new AbortController();
      detailInflight.set(id, ctrl);
      const prev = get().details[id];
      set((s) => ({
        details: {
          ...s.details,
          [id]: prev?.data ? { ...prev, refreshing: true } : { data: null, loading: !quiet, refreshing: quiet, error: null },
        },
      }));
      try {
        const data = await api.batch(id, ctrl.signal);
        set((s) => ({
          details: { ...s.details, [id]: { data, loading: false, refreshing: false, error: null } },
          // Keep the list row in step with the detail.
          data: s.data?.map((b) => (b.id === id ? { ...b, status: data.status, counts: data.counts, meanReward: data.meanReward, passAtK: data.passAtK, finishedAt: data.finishedAt, error: data.error } : b)) ?? s.data,
        }));
      } catch (err) {
        if (isAbort(err)) return;
        set((s) => ({ details: { ...s.details, [id]: { ...(s.details[id] ?? { data: null }), loading: false, refreshing: false, error: errorText(err) } } }));
      } finally {
        if (detailInflight.get(id) === ctrl) detailInflight.delete(id);
      }
    },

    async loadStats(id, { traces = true, traceLimit = 300 } = {}) {
      const running = statsInflight.get(id);
      if (running) return running;
      const job = (async () => {
        try {
          const { sessions } = await api.sessions(undefined, { batch: id });
          const agg = aggregate(sessions ?? []);
          const prev = get().stats[id];
          const ended = !isActive(get().data?.find((b) => b.id === id)?.status ?? get().details[id]?.data?.status);
          // Trace counts stay valid once the batch has ended and the session count has not moved.
          const keepTraces = prev?.tracesState === 'done' && prev.sessions === agg.sessions && ended;
          const byTask = keepTraces
            ? Object.fromEntries(Object.entries(agg.byTask).map(([k, f]) => [k, { ...f, traces: prev.byTask[k]?.traces ?? null }]))
            : agg.byTask;
          set((s) => ({
            stats: {
              ...s.stats,
              [id]: {
                ...agg,
                byTask,
                truncated: (sessions?.length ?? 0) >= 1000,
                traces: keepTraces ? prev.traces : null,
                byPolicy: keepTraces ? prev.byPolicy : [],
                tracesState: keepTraces ? 'done' : prev?.tracesState === 'loading' ? 'loading' : 'idle',
                tracesError: null,
                error: null,
                updatedAt: Date.now(),
              },
            },
          }));
          const many = (sessions?.length ?? 0) > traceLimit;
          if (traces && ended && !keepTraces && many) {
            set((s) => ({ stats: { ...s.stats, [id]: { ...s.stats[id], tracesState: 'skipped' } } }));
          } else if (traces && ended && !keepTraces && get().stats[id].tracesState !== 'loading') await countTraces(id, sessions ?? []);
        } catch (err) {
          set((s) => ({
            stats: {
              ...s.stats,
              [id]: {
                ...(s.stats[id] ?? { ...emptyFigures(), truncated: false, byTask: {}, byPolicy: [], tracesState: 'idle', tracesError: null, updatedAt: Date.now() }),
                error: errorText(err),
              },
            },
          }));
        } finally {
          statsInflight.delete(id);
        }
      })();
      statsInflight.set(id, job);
      return job;
    },

    applyEvent(e) {
      const s = get();
      const known = s.data?.some((b) => b.id === e.id);
      if (e.phase) set({ phases: { ...s.phases, [e.id]: { phase: e.phase, message: e.message } } });
      if (known) {
        set({
          data: s.data!.map((b) =>
            b.id === e.id
              ? {
                  ...b,
                  status: e.status || b.status,
                  meanReward: e.meanReward !== undefined ? e.meanReward : b.meanReward,
                  counts: e.total === undefined ? b.counts : {
                    total: e.total ?? b.counts.total,
                    done: e.done ?? b.counts.done,
                    running: e.running ?? b.counts.running,
                    queued: e.queued ?? b.counts.queued,
                    finished: e.finished ?? b.counts.finished,
                    failed: e.failed ?? b.counts.failed,
                    interrupted: e.interrupted ?? b.counts.interrupted,
                  },
                }
              : b,
          ),
        });
      }
      later('list', known ? 600 : 150, () => void get().fetch({ quiet: true }));
      if (get().details[e.id]) later(`detail:${e.id}`, 500, () => void get().fetchDetail(e.id, { quiet: true }));
      if (get().stats[e.id]) later(`stats:${e.id}`, isActive(e.status) ? 1500 : 300, () => void get().loadStats(e.id));
    },
  };
});
