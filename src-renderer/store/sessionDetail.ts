// The session open in the inspector: GET /api/sessions/:id and /completions, refetched on events.
import { create } from 'zustand';
import { api } from '../backend/client.js';
import type { Completion, SessionSummary } from '../backend/types.js';
import { errorText, isAbort } from './resource.js';

interface SessionDetailState {
  id: string | null;
  session: SessionSummary | null;
  completions: Completion[] | null;
  loading: boolean;
  refreshing: boolean;
  error: string | null;
  open(id: string): Promise<void>;
  refresh(): Promise<void>;
  close(): void;
}

let inflight: AbortController | null = null;

/** Same recorded turn: a completion record does not change once written, apart from its status. */
function same(a: Completion, b: Completion): boolean {
  return a.status === b.status && a.promptIds.length === b.promptIds.length && a.outputIds.length === b.outputIds.length && a.error === b.error && a.retryOf === b.retryOf;
}

export const useSessionDetail = create<SessionDetailState>((set, get) => {
  async function load(id: string, quiet: boolean) {
    inflight?.abort();
    const ctrl = new AbortController();
    inflight = ctrl;
    set(quiet ? { refreshing: true } : { loading: true, error: null });
    try {
      const [session, { completions }] = await Promise.all([
        api.session(id, ctrl.signal),
        api.completions(id, ctrl.signal),
      ]);
      if (get().id !== id) return;
      const sorted = [...(completions ?? [])].sort((a, b) => a.seq - b.seq || a.createdAt - b.createdAt);
      // A refetch after a live event returns every turn again: keep the objects of turns that did not
      // change, so their (possibly 200k-token) token views are not laid out again.
      const before = new Map((get().completions ?? []).map((c) => [c.id, c]));
      const merged = sorted.map((c) => {
        const p = before.get(c.id);
        return p && same(p, c) ? p : c;
      });
      const prev = get().completions;
      const unchanged = !!prev && prev.length === merged.length && merged.every((c, i) => c === prev[i]);
      set({ session, completions: unchanged ? prev : merged, loading: false, refreshing: false, error: null });
    } catch (err) {
      if (isAbort(err) || get().id !== id) return;
      set({ loading: false, refreshing: false, error: errorText(err) });
    } finally {
      if (inflight === ctrl) inflight = null;
    }
  }
  return {
    id: null,
    session: null,
    completions: null,
    loading: false,
    refreshing: false,
    error: null,
    async open(id) {
      if (get().id === id && (get().session || get().loading)) return load(id, true);
      set({ id, session: null, completions: null, error: null });
      return load(id, false);
    },
    async refresh() {
      const id = get().id;
      if (id) await load(id, true);
    },
    close() {
      inflight?.abort();
      set({ id: null, session: null, completions: null, loading: false, refreshing: false, error: null });
    },
  };
});
