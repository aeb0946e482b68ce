// Small status chips used across views.

export function SimulatedBadge() {
  return (
    <span className="badge badge-sim" title="Simulated engine: deterministic fake model, not a real vLLM/SGLang server">
      SIMULATED
    </span>
  );
}

const statusTone: Record<string, string> = {
  ok: 'good',
  finished: 'good',
  completed: 'good',
  active: 'info',
  running: 'info',
  queued: 'muted',
  error: 'bad',
  failed: 'bad',
  aborted: 'warn',
  cancelled: 'warn',
  interrupted: 'warn',
  paused: 'warn',
  healthy: 'good',
  unhealthy: 'bad',
};

export function StatusBadge({ status }: { status: string | null | undefined }) {
  const s = status ?? 'unknown';
  return <span className={`badge badge-${statusTone[s] ?? 'muted'}`} data-status={s}>{s}</span>;
}
