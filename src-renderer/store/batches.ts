// Batches: the list (GET /api/batches), each opened batch's detail (GET /api/batches/:id) and its trace
// health (GET /api/batches/:id/health, computed on the server: traces, breaks, masked traces, reward per
// policy version). Live updates never refetch a whole running batch: `batch` events patch counts and mean
// reward at once, and the sessions named by `session` / `completion` events are fetched as the tasks
// they belong to (GET /api/batches/:id/samples?sessions=…) and patched into the open details.
import { create } from 'zustand';
import { api } from '../backend/client.js';
import type { BatchEvent } from '../backend/events.js';
import type { BatchDetail, BatchHealth, BatchSummary, TaskResult } from '../backend/types.js';
import { emptyResource, errorText, isAbort, type Resource } from './resource.js';

export const ACTIVE_STATUSES = new Set(['queued', 'running', 'cancelling']);
export const isActive = (status: string | undefined) => !!status && ACTIVE_STATUSES.has(status);

export interface DetailEntry {
  data: BatchDetail | null;
  loading: boolean;
  refreshing: boolean;
  error: string | null;
}

export interface HealthEntry {
  data: BatchHealth | null;
  loading: boolean;
  error: string | null;
  /** A missing route (older server): the view says so instead of retrying. */
  missing: boolean;
}

interface BatchesState extends Resource<BatchSummary[]> {
  details: Record<string, DetailEntry>;
  health: Record<string, HealthEntry>;
  /** Latest install / callback phase per batch, from events. */
  phases: Record<string, { phase: string; message?: string }>;
  /** Live patches applied (for the UI's "updated" hint and the tests). */
  patches: number;
  fetch(opts?: { quiet?: boolean }): Promise<void>;
  fetchDetail(id: string, opts?: { quiet?: boolean }): Promise<void>;
  loadHealth(id: string, opts?: { force?: boolean }): Promise<void>;
  /** Batch progress from events: coalesced, at most one update per EVENTS_MS per batch while it runs. */
  applyEvent(e: BatchEvent): void;
  /** A session changed (started, got a turn, ended): patch the open running batches it belongs to. */
  noteSession(id: string): void;
}

let listInflight: AbortController | null = null;
const detailInflight = new Map<string, AbortController>();
const healthInflight = new Map<string, Promise<void>>();

/** How long changed sessions are collected before one patch request (per open running batch). */
const PATCH_MS = 1000;
/** Trace health of a running batch is recomputed at most this often. */
const HEALTH_MS = 3000;
const MAX_IDS_PER_PATCH = 400;
/** Progress events of a running batch (one per finished sample) are drawn at most this often. */
const EVENTS_MS = 500;

/** The detail with `tasks` replaced where the server sent a newer version (same objects elsewhere). */
function patchTasks(d: BatchDetail, tasks: TaskResult[]): BatchDetail {
  if (tasks.length === 0) return d;
  const by = new Map(tasks.map((t) => [t.taskId, t]));
  return { ...d, tasks: d.tasks.map((t) => by.get(t.taskId) ?? t) };
}

export const useBatches = create<BatchesState>((set, get) => {
  const timers = new Map<string, ReturnType<typeof setTimeout>>();
  const later = (key: string, ms: number, fn: () => void) => {
    if (timers.has(key)) return;
    timers.set(key, setTimeout(() => {
      timers.delete(key);
      fn();
    }, ms));
  };
  const pending = new Set<string>();
  const queued = new Map<string, BatchEvent>();

  async function flushSessions() {
    const ids = [...pending].slice(0, MAX_IDS_PER_PATCH);
    for (const id of ids) pending.delete(id);
    if (pending.size > 0) later('sessions', PATCH_MS, () => void flushSessions());
    const open = Object.entries(get().details).filter(([, d]) => d.data && isActive(d.data.status)).map(([id]) => id);
    await Promise.all(open.map(async (batchId) => {
      try {
        const { tasks } = await api.batchSamples(batchId, ids);
        if (tasks.length === 0) return;
        set((s) => {
          const cur = s.details[batchId];
          if (!cur?.data) return {};
          return { details: { ...s.details, [batchId]: { ...cur, data: patchTasks(cur.data, tasks) } }, patches: s.patches + 1 };
        });
      } catch {
        // The next event (or the batch's end, which refetches the detail) brings it up to date.
      }
    }));
  }

  function apply(e: BatchEvent) {
    const s = get();
    const known = s.data?.some((b) => b.id === e.id);
    if (e.phase) set({ phases: { ...s.phases, [e.id]: { phase: e.phase, message: e.message } } });
    const counts = (c: BatchSummary['counts']) => e.total === undefined ? c : {
      total: e.total ?? c.total,
      done: e.done ?? c.done,
      running: e.running ?? c.running,
      queued: e.queued ?? c.queued,
      finished: e.finished ?? c.finished,
      failed: e.failed ?? c.failed,
      interrupted: e.interrupted ?? c.interrupted,
    };
    const patch = <T extends BatchSummary>(b: T): T => ({
      ...b,
      status: e.status || b.status,
      meanReward: e.meanReward !== undefined ? e.meanReward : b.meanReward,
      counts: counts(b.counts),
    });
    if (known) set({ data: s.data!.map((b) => (b.id === e.id ? patch(b) : b)) });
    const detail = s.details[e.id]?.data;
    if (detail) set((st) => ({ details: { ...st.details, [e.id]: { ...st.details[e.id], data: patch(detail) } } }));
    // A new batch: the list learns of it. An ended one: its final detail and health, once.
    if (!known) later('list', 150, () => void get().fetch({ quiet: true }));
    if (!isActive(e.status) && e.status) {
      later('list', 600, () => void get().fetch({ quiet: true }));
      if (get().details[e.id]) later(`detail:${e.id}`, 200, () => void get().fetchDetail(e.id, { quiet: true }));
      if (get().health[e.id]) later(`health:${e.id}`, 300, () => void get().loadHealth(e.id, { force: true }));
    } else if (get().health[e.id]) {
      later(`health:${e.id}`, HEALTH_MS, () => void get().loadHealth(e.id, { force: true }));
    }
  }

  return {
    ...emptyResource<BatchSummary[]>(),
    details: {},
    health: {},
    phases: {},
    patches: 0,

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
          data: s.data?.map((b) => (b.id === id ? { ...b, status: data.status, counts: data.counts, meanReward: data.meanReward, passAtK: data.passAtK, finishedAt: data.finishedAt, error: data.error, usage: data.usage } : b)) ?? s.data,
        }));
      } catch (err) {
        if (isAbort(err)) return;
        set((s) => ({ details: { ...s.details, [id]: { ...(s.details[id] ?? { data: null }), loading: false, refreshing: false, error: errorText(err) } } }));
      } finally {
        if (detailInflight.get(id) === ctrl) detailInflight.delete(id);
      }
    },

    async loadHealth(id, { force = false } = {}) {
      const running = healthInflight.get(id);
      if (running) return running;
      const cur = get().health[id];
      const status = get().data?.find((b) => b.id === id)?.status ?? get().details[id]?.data?.status;
      // An ended batch's health does not change: fetched once.
      if (!force && cur?.data && !isActive(status) && cur.data.sessions > 0) return;
      if (cur?.missing) return;
      const job = (async () => {
        set((s) => ({ health: { ...s.health, [id]: { data: s.health[id]?.data ?? null, loading: true, error: null, missing: false } } }));
        try {
          const data = await api.batchHealth(id);
          set((s) => ({ health: { ...s.health, [id]: { data, loading: false, error: null, missing: false } } }));
        } catch (err) {
          const missing = (err as { missingRoute?: boolean }).missingRoute === true;
          set((s) => ({ health: { ...s.health, [id]: { data: s.health[id]?.data ?? null, loading: false, error: errorText(err), missing } } }));
        } finally {
          healthInflight.delete(id);
        }
      })();
      healthInflight.set(id, job);
      return job;
    },

    applyEvent(e) {
      // The latest counts win; a phase or an end is never dropped.
      const prev = queued.get(e.id);
      queued.set(e.id, prev ? { ...prev, ...Object.fromEntries(Object.entries(e).filter(([, v]) => v !== undefined)), phase: e.phase ?? prev.phase, message: e.phase ? e.message : prev.message } as BatchEvent : e);
      const flush = () => {
        const ev = queued.get(e.id);
        queued.delete(e.id);
        if (ev) apply(ev);
      };
      if (!isActive(e.status) && e.status) {
        const t = timers.get(`events:${e.id}`);
        if (t) clearTimeout(t);
        timers.delete(`events:${e.id}`);
        flush();
      } else later(`events:${e.id}`, EVENTS_MS, flush);
    },

    noteSession(id) {
      const anyOpen = Object.values(get().details).some((d) => d.data && isActive(d.data.status));
      if (!anyOpen) return;
      pending.add(id);
      later('sessions', PATCH_MS, () => void flushSessions());
    },
  };


});
