// Sessions list (GET /api/sessions), newest first.
import { create } from 'zustand';
import { api } from '../backend/client.js';
import type { SessionSummary } from '../backend/types.js';
import { emptyResource, errorText, isAbort, type Resource } from './resource.js';

interface SessionsState extends Resource<SessionSummary[]> {
  /** Keyboard/mouse selection in the list, kept across navigation. */
  selectedId: string | null;
  select(id: string | null): void;
  fetch(opts?: { quiet?: boolean }): Promise<void>;
}

let inflight: AbortController | null = null;

export const useSessions = create<SessionsState>((set, get) => ({
  ...emptyResource<SessionSummary[]>(),
  selectedId: null,
  select(selectedId) {
    set({ selectedId });
  },
  async fetch({ quiet = false } = {}) {
    inflight?.abort();
    const ctrl = new AbortController();
    inflight = ctrl;
    const first = get().data === null;
    set(quiet || !first ? { refreshing: true } : { loading: true, error: null });
    try {
      const { sessions } = await api.sessions(ctrl.signal);
      const sorted = [...(sessions ?? [])].sort((a, b) => (b.createdAt ?? 0) - (a.createdAt ?? 0));
      set({ data: sorted, loading: false, refreshing: false, error: null, updatedAt: Date.now() });
    } catch (err) {
      if (isAbort(err)) return;
      set({ loading: false, refreshing: false, error: errorText(err) });
    } finally {
      if (inflight === ctrl) inflight = null;
    }
  },
}));
