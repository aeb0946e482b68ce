// Capture health per engine (custody, DESIGN §9; GET /api/capture-health): sessions with an incomplete
// call, masked traces and why, chain breaks per trace and why, prompt reuse in token mode, SDK retries.
import { api } from '../backend/client.js';
import type { CaptureHealth } from '../backend/types.js';
import { EngineLabel } from '../components/EngineLabel.js';
import { Empty, ErrorState, Loading } from '../components/States.js';
import { formatPct } from '../lib/batch.js';
import { formatInt } from '../lib/format.js';
import { useAsync } from '../lib/useAsync.js';

const reasons = (r: Record<string, number>) =>
  Object.entries(r).sort((a, b) => b[1] - a[1]).map(([k, n]) => (
    <span key={k} className="chip" data-reason={k}>
      {k} ×{n}
    </span>
  ));

function Row({ engine, h }: { engine: string; h: CaptureHealth }) {
  return (
    <tr data-engine={engine}>
      <td>
        <EngineLabel id={engine} />
      </td>
      <td className="num">{formatInt(h.sessions)}</td>
      <td className={`num ${h.incompleteSessions ? 'warn-text' : ''}`}>{formatInt(h.incompleteSessions)}</td>
      <td className="num">{formatInt(h.traces)}</td>
      <td className={`num ${h.maskedTraces ? 'warn-text' : ''}`} data-cell="masked-fraction">{formatPct(h.maskedFraction)}</td>
      <td className="reason-cell">{Object.keys(h.maskReasons).length ? reasons(h.maskReasons) : <span className="muted">—</span>}</td>
      <td className="num" data-cell="breaks-per-trace">{h.chainBreaks.perTrace === null ? '—' : h.chainBreaks.perTrace.toFixed(2)}</td>
      <td className="reason-cell">{Object.keys(h.chainBreaks.reasons).length ? reasons(h.chainBreaks.reasons) : <span className="muted">—</span>}</td>
      <td className="num">{formatPct(h.promptReuse.rate)}</td>
    </tr>
  );
}

/** `batch`: one batch's sessions; without it every recorded session. `version` refetches. */
export function CaptureHealthCard({ batch, version }: { batch?: string; version?: string }) {
  const r = useAsync((signal) => api.captureHealth({ batch }, signal), [batch, version]);
  if (r.status === 404) return null; // a server without custody
  const engines = Object.entries(r.data?.byEngine ?? {});
  return (
    <section className="card" aria-label="Capture health per engine" data-testid="capture-health">
      <header className="card-head">
        <h2>Capture health per engine</h2>
        <span className="muted">{batch ? 'this batch' : 'all sessions'} · custody and chain breaks · prefix-merge</span>
        <span className="spacer" />
        <button type="button" className="btn btn-small" onClick={r.reload} disabled={r.loading}>
          {r.loading ? 'Counting…' : 'Refresh'}
        </button>
      </header>
      {r.loading && !r.data ? (
        <Loading label="Reading every session's capture…" />
      ) : r.error && !r.data ? (
        <ErrorState message={r.error} onRetry={r.reload} />
      ) : engines.length === 0 ? (
        <Empty title="Nothing recorded yet" />
      ) : (
        <div className="table-wrap">
          <table className="table table-compact">
            <thead>
              <tr>
                <th>Engine</th>
                <th className="num">Sessions</th>
                <th className="num" title="sessions with a lost or malformed capture">Incomplete</th>
                <th className="num">Traces</th>
                <th className="num">Masked</th>
                <th>Mask reasons</th>
                <th className="num">Breaks / trace</th>
                <th>Break reasons</th>
                <th className="num" title="token mode: turns that reused the previous sampled ids verbatim">Prompt reuse</th>
              </tr>
            </thead>
            <tbody>
              {engines.map(([e, h]) => (
                <Row key={e} engine={e} h={h} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
