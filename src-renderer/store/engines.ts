// Engines (GET /api/engines): the pool's engines and replicas, the pause state and the policy version.
// Also used to label simulated engines wherever an engine id appears.
import { create } from 'zustand';
import { api } from '../backend/client.js';
import type { Engine, EnginesResponse } from '../backend/types.js';
import { emptyResource, errorText, isAbort, type Resource } from './resource.js';

interface EnginesState extends Resource<Engine[]> {
  policyVersion: number | null;
  pause: EnginesResponse['pause'] | null;
  fetch(): Promise<void>;
}

let inflight: AbortController | null = null;

export const useEngines = create<EnginesState>((set, get) => ({
  ...emptyResource<Engine[]>(),
  policyVersion: null,
  pause: null,
  async fetch() {
    inflight?.abort();
    const ctrl = new AbortController();
    inflight = ctrl;
    set(get().data === null ? { loading: true, error: null } : { refreshing: true });
    try {
      const body = await api.engines(ctrl.signal);
      const engines = body.engines ?? [];
      const policyVersion = body.policyVersion ?? engines[0]?.policyVersion ?? null;
      set({
        data: engines,
        policyVersion,
        pause: body.pause ?? null,
        loading: false,
        refreshing: false,
        error: null,
        updatedAt: Date.now(),
      });
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
