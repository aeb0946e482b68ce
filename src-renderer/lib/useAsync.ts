// A fetch tied to a component: loading / error / data, refetched when `deps` change, aborted on
// unmount. Keeps the previous data on screen while refetching (live updates must not flash).
import { useCallback, useEffect, useRef, useState, type DependencyList } from 'react';

export interface AsyncState<T> {
  data: T | null;
  loading: boolean;
  error: string | null;
  /** HTTP status of the last error, when there was one. */
  status: number | null;
  reload(): void;
}

export function useAsync<T>(fn: ((signal: AbortSignal) => Promise<T>) | null, deps: DependencyList): AsyncState<T> {
  const [state, setState] = useState<{ data: T | null; loading: boolean; error: string | null; status: number | null }>({ data: null, loading: !!fn, error: null, status: null });
  const [tick, setTick] = useState(0);
  const fnRef = useRef(fn);
  fnRef.current = fn;
  useEffect(() => {
    const f = fnRef.current;
    if (!f) {
      setState({ data: null, loading: false, error: null, status: null });
      return;
    }
    const ctrl = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    f(ctrl.signal).then(
      (data) => !ctrl.signal.aborted && setState({ data, loading: false, error: null, status: null }),
      (err: unknown) => {
        if (ctrl.signal.aborted || (err as Error)?.name === 'AbortError') return;
        const status = typeof (err as { status?: unknown })?.status === 'number' ? (err as { status: number }).status : null;
        setState((s) => ({ ...s, loading: false, error: err instanceof Error ? err.message : String(err), status }));
      },
    );
    return () => ctrl.abort();
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}
