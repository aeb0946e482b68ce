// A fetched resource with loading / error / refreshing states. `load` shows a spinner the first time;
// `refresh` keeps the current data on screen while refetching (live updates must not flash).

export interface Resource<T> {
  data: T | null;
  loading: boolean;
  refreshing: boolean;
  error: string | null;
  updatedAt: number | null;
}

export const emptyResource = <T,>(): Resource<T> => ({
  data: null,
  loading: false,
  refreshing: false,
  error: null,
  updatedAt: null,
});

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export const isAbort = (err: unknown): boolean => err instanceof Error && err.name === 'AbortError';
