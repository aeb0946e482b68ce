// Trace health of a batch (or one of its tasks): chain-break rate and masked traces, each with its
// reasons; every figure links to the sessions it counts.
import type { ReactNode } from 'react';
import { StatTile } from '../components/Widgets.js';
import { formatPct } from '../lib/batch.js';
import { formatInt } from '../lib/format.js';
import { routeHref } from '../lib/router.js';
import type { HealthEntry } from '../store/batches.js';
import { BREAK_HELP } from './breaks.js';

function Reasons({ reasons, help }: { reasons: Record<string, number>; help?: Record<string, string> }): ReactNode {
  const list = Object.entries(reasons).sort((a, b) => b[1] - a[1]);
  if (list.length === 0) return <span className="muted">none</span>;
  return (
    <span className="reason-list">
      {list.map(([k, n]) => (
        <span key={k} className="chip" title={help?.[k] ?? k} data-reason={k}>
          {k} ×{n}
        </span>
      ))}
    </span>
  );
}

export function TraceHealthCard({ health, batchId, taskId }: { health: HealthEntry | undefined; batchId: string; taskId?: string }) {
  const h = health?.data;
  if (!h) {
    if (health?.missing) return null;
    return <div className="muted" data-testid="trace-health">{health?.error ? `Trace health unavailable: ${health.error}` : 'Counting traces, breaks and masked traces…'}</div>;
  }
  const t = taskId ? h.byTask[taskId] : null;
  const breaks = t ? t.breaks : h.breaks;
  const traces = t ? t.traces : h.traces;
  const masked = t ? t.masked : h.masked;
  return (
    <section className="card trace-health" aria-label="Trace health" data-testid="trace-health">
      <header className="card-head">
        <h2>Trace health</h2>
        <span className="muted">prefix-merge · {formatInt(traces)} traces</span>
      </header>
      <div className="health-row">
        <StatTile
          label="Sessions with chain breaks"
          value={<a href={routeHref({ view: 'batch', id: batchId, taskId, q: 'breaks:>0' })}>{t ? `${formatInt(breaks)} breaks` : formatPct(h.breakRate)}</a>}
          hint={t ? undefined : `${formatInt(h.sessionsWithBreaks)} of ${formatInt(h.sessions)} sessions · ${formatInt(h.breaks)} breaks`}
          tone={h.breakRate && h.breakRate > 0.2 ? 'warn' : undefined}
        />
        <div className="health-reasons">
          <div className="tile-label">Break reasons</div>
          <Reasons reasons={h.breakReasons} help={BREAK_HELP} />
        </div>
        <StatTile
          label="Masked traces"
          value={<a href={routeHref({ view: 'batch', id: batchId, taskId, q: 'masked:>0' })}>{t ? formatInt(masked) : formatPct(h.maskedFraction)}</a>}
          hint={`${formatInt(masked)} of ${formatInt(traces)} traces left out of training`}
          tone={masked > 0 ? 'warn' : undefined}
        />
        <div className="health-reasons">
          <div className="tile-label">Mask reasons</div>
          <Reasons reasons={h.maskedReasons} />
        </div>
      </div>
    </section>
  );
}
