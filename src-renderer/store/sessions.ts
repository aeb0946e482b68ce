// Sessions list (GET /api/sessions), newest first: the newest SESSIONS_PAGE at first, more on demand.
import { create } from 'zustand';
import { api, SESSIONS_PAGE } from '../backend/client.js';
import type { SessionSummary } from '../backend/types.js';
import { emptyResource, errorText, isAbort, type Resource } from './resource.js';

interface SessionsState extends Resource<SessionSummary[]> {
  /** How many sessions the server has (data holds the newest of them). */
  total: number | null;
  /** How many of the newest sessions the list keeps loaded; live refreshes reload that many. */
  wanted: number;
  /** Sessions views on screen: live events refetch the list only while one is. */
  watching: number;
  watch(): () => void;
  /** Keyboard/mouse selection in the list, kept across navigation. */
  selectedId: string | null;
  select(id: string | null): void;
  fetch(opts?: { quiet?: boolean }): Promise<void>;
  loadMore(): Promise<void>;
}

let inflight: AbortController | null = null;
/** A quiet refresh asked for while one runs: fetch once more when it ends (restarting could starve it). */
let again = false;

export const useSessions = create<SessionsState>((set, get) => ({
  ...emptyResource<SessionSummary[]>(),
  total: null,
  wanted: SESSIONS_PAGE,
  selectedId: null,
  watching: 0,
  watch() {
    set({ watching: get().watching + 1 });
    return () => set({ watching: Math.max(0, get().watching - 1) });
  },
  select(selectedId) {
    set({ selectedId });
  },
  async fetch({ quiet = false } = {}) {
    if (quiet && inflight) {
      again = true;
      return;
    }
    inflight?.abort();
    again = false;
    const ctrl = new AbortController();
    inflight = ctrl;
    const first = get().data === null;
    set(quiet || !first ? { refreshing: true } : { loading: true, error: null });
    try {
      const { sessions, total } = await api.sessions(ctrl.signal, { upTo: get().wanted });
      const sorted = [...(sessions ?? [])].sort((a, b) => (b.createdAt ?? 0) - (a.createdAt ?? 0));
      set({ data: sorted, total, loading: false, refreshing: false, error: null, updatedAt: Date.now() });
    } catch (err) {
      if (isAbort(err)) return;
      set({ loading: false, refreshing: false, error: errorText(err) });
    } finally {
      if (inflight === ctrl) {
        inflight = null;
        if (again) {
          again = false;
          void get().fetch({ quiet: true });
        }
      }
    }
  },
  async loadMore() {
    set({ wanted: Math.max(get().wanted, get().data?.length ?? 0) + SESSIONS_PAGE });
    await get().fetch({ quiet: true });
  },
}));
