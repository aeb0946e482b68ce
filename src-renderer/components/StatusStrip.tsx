// The global state a researcher must never have to look for, on every page: paused (mode, since when,
// calls queued) or running, the policy version, unhealthy engines, and whether rollouts run sandboxed.
import { useEffect, useState } from 'react';
import type { BatchSummary, Engine } from '../backend/types.js';
import { formatInt, formatMs, formatTime } from '../lib/format.js';
import { routeHref } from '../lib/router.js';
import { isActive, useBatches } from '../store/batches.js';
import { useEngines } from '../store/engines.js';

/** Engines are polled this often for health (health changes send no event). */
const POLL_MS = 10_000;

function unhealthy(engines: Engine[]): Array<{ id: string; down: number; of: number }> {
  return engines
    .map((e) => ({ id: e.id, down: e.replicas.filter((r) => !r.healthy).length, of: e.replicas.length }))
    .filter((e) => e.down > 0);
}

/** The runtime of the running batches (else the newest batch): `local` runs are unsandboxed. */
export function runtimeOf(batches: BatchSummary[] | null): { runtime: string; sandboxed: boolean; from: string } | null {
  const list = batches ?? [];
  const b = list.find((x) => isActive(x.status) && typeof x.spec.runtime === 'string') ?? list.find((x) => typeof x.spec.runtime === 'string');
  if (!b) return null;
  const runtime = String(b.spec.runtime);
  return { runtime, sandboxed: runtime !== 'local' && runtime !== 'unsandboxed', from: isActive(b.status) ? 'running batches' : 'latest batch' };
}

export function StatusStrip() {
  const engines = useEngines((s) => s.data);
  const pause = useEngines((s) => s.pause);
  const policy = useEngines((s) => s.policyVersion);
  const error = useEngines((s) => s.error);
  const batches = useBatches((s) => s.data);
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (useBatches.getState().data === null) void useBatches.getState().fetch({ quiet: true });
    const t = setInterval(() => {
      setNow(Date.now());
      void useEngines.getState().fetch();
    }, POLL_MS);
    return () => clearInterval(t);
  }, []);
  useEffect(() => {
    if (!pause?.since) return;
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [pause?.since]);

  const paused = !!pause?.mode || !!engines?.some((e) => e.paused);
  const down = unhealthy(engines ?? []);
  const rt = runtimeOf(batches);
  const running = (batches ?? []).filter((b) => isActive(b.status)).length;
  return (
    <div className="status-strip" data-testid="status-strip" role="status" aria-label="Global state">
      {engines === null && error ? (
        <span className="strip-item strip-bad" data-strip="server">server unreachable</span>
      ) : paused ? (
        <a className="strip-item strip-warn" data-strip="pause" href={routeHref({ view: 'topology' })} title="Engine calls are held; resume on the Topology page">
          PAUSED{pause?.mode ? ` · ${pause.mode}` : ''}
          {pause?.since ? ` · since ${formatTime(pause.since)} (${formatMs(now - pause.since)})` : ''}
          {` · ${formatInt(pause?.queued ?? 0)} queued`}
        </a>
      ) : (
        <span className="strip-item strip-good" data-strip="pause">▶ serving{running ? ` · ${running} batch${running === 1 ? '' : 'es'} running` : ''}</span>
      )}
      <span className="strip-item" data-strip="policy" title="Policy version stamped on new completions">
        policy <strong className="mono">{policy === null ? '—' : `v${policy}`}</strong>
      </span>
      {down.length > 0 ? (
        <a className="strip-item strip-bad" data-strip="unhealthy" href={routeHref({ view: 'topology' })}>
          ⚠ unhealthy: {down.map((d) => `${d.id} (${d.down}/${d.of} replicas)`).join(', ')}
        </a>
      ) : (
        engines !== null && <span className="strip-item" data-strip="unhealthy">engines healthy ({engines.length})</span>
      )}
      {rt && (
        <span className={`strip-item ${rt.sandboxed ? '' : 'strip-warn'}`} data-strip="runtime" title={`runtime of the ${rt.from}`}>
          runtime <strong>{rt.runtime}</strong> · {rt.sandboxed ? 'sandboxed' : 'UNSANDBOXED'}
        </span>
      )}
    </div>
  );
}
