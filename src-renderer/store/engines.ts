// Engines (GET /api/engines). Also used to label simulated engines wherever an engine id appears.
import { create } from 'zustand';
import { api } from '../backend/client.js';
import type { Engine } from '../backend/types.js';
import { emptyResource, errorText, isAbort, type Resource } from './resource.js';

interface EnginesState extends Resource<Engine[]> {
  fetch(): Promise<void>;
}

let inflight: AbortController | null = null;

export const useEngines = create<EnginesState>((set, get) => ({
  ...emptyResource<Engine[]>(),
  async fetch() {
    inflight?.abort();
    const ctrl = new AbortController();
    inflight = ctrl;
    set(get().data === null ? { loading: true, error: null } : { refreshing: true });
    try {
      const { engines } = await api.engines(ctrl.signal);
      set({ data: engines ?? [], loading: false, refreshing: false, error: null, updatedAt: Date.now() });
    } catch (err) {
      if (isAbort(err)) return;
      set({ loading: false, refreshing: false, error: errorText(err) });
    } finally {
      if (inflight === ctrl) inflight = null;
    }
  },
}));

/** True when the engine with this id is known to be simulated. */
export function useIsSimulated(engineId: string | null | undefined): boolean {
  return useEngines((s) => !!engineId && !!s.data?.some((e) => e.id === engineId && e.simulated));
}
