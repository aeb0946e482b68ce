// What a batch can be made of: harness presets (GET /api/harnesses) and demo datasets
// (GET /api/datasets). Fetched once per app start; both change only with a server upgrade.
import { create } from 'zustand';
import { api } from '../backend/client.js';
import type { DatasetInfo, Harness } from '../backend/types.js';
import { errorText } from './resource.js';

interface CatalogState {
  harnesses: Harness[] | null;
  datasets: DatasetInfo[] | null;
  harnessError: string | null;
  datasetError: string | null;
  loading: boolean;
  load(force?: boolean): Promise<void>;
}

export const useCatalog = create<CatalogState>((set, get) => ({
  harnesses: null,
  datasets: null,
  harnessError: null,
  datasetError: null,
  loading: false,
  async load(force = false) {
    const s = get();
    if (s.loading || (!force && s.harnesses && s.datasets)) return;
    set({ loading: true });
    const [h, d] = await Promise.allSettled([api.harnesses(), api.datasets()]);
    set({
      loading: false,
      harnesses: h.status === 'fulfilled' ? (h.value.harnesses ?? []) : get().harnesses,
      harnessError: h.status === 'rejected' ? errorText(h.reason) : null,
      datasets: d.status === 'fulfilled' ? (d.value.datasets ?? []) : get().datasets,
      datasetError: d.status === 'rejected' ? errorText(d.reason) : null,
    });
  },
}));
