// Loading, error and empty placeholders with consistent look.
import { useEffect, useRef, type ReactNode } from 'react';
import { useConnection } from '../store/live.js';

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <div className="state state-loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      {label}
    </div>
  );
}

/** With `onRetry`, the view retries by itself when the live connection to the server comes back. */
export function ErrorState({ message, onRetry }: { message: string; onRetry?: () => void }) {
  const conn = useConnection((s) => s.state);
  const prev = useRef(conn);
  const retry = useRef(onRetry);
  retry.current = onRetry;
  useEffect(() => {
    if (conn === 'open' && prev.current !== 'open') retry.current?.();
    prev.current = conn;
  }, [conn]);
  return (
    <div className="state state-error" role="alert">
      <strong>Something went wrong.</strong>
      <span className="state-detail">{message}</span>
      {onRetry && (
        <button type="button" className="btn" onClick={onRetry}>
          Retry
        </button>
      )}
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="state state-empty">
      <strong>{title}</strong>
      {children && <div className="state-detail">{children}</div>}
    </div>
  );
}
