// Engines: one card per engine with its replicas' health and load. Polled while on screen.
import { useEffect } from 'react';
import type { Engine } from '../backend/types.js';
import { SimulatedBadge } from '../components/Badges.js';
import { Empty, ErrorState, Loading } from '../components/States.js';
import { useEngines } from '../store/engines.js';

const POLL_MS = 3000;

function EngineCard({ e }: { e: Engine }) {
  const healthy = e.replicas.filter((r) => r.healthy).length;
  return (
    <article className="card engine" data-engine-id={e.id}>
      <header className="card-head">
        <h2 className="mono">{e.id}</h2>
        <span className="chip">{e.kind}</span>
        {e.simulated && <SimulatedBadge />}
        {e.paused && <span className="badge badge-warn">paused</span>}
      </header>
      <dl className="facts">
        <dt>Model</dt>
        <dd className="mono">{e.model}</dd>
        <dt>Mode</dt>
        <dd>{e.mode === 'token' ? 'token (Rollgate renders the template)' : e.mode}</dd>
        <dt>Replicas</dt>
        <dd>
          {healthy}/{e.replicas.length} healthy
        </dd>
      </dl>
      <table className="replicas">
        <thead>
          <tr>
            <th>Replica</th>
            <th>Health</th>
            <th className="num">In flight</th>
          </tr>
        </thead>
        <tbody>
          {e.replicas.map((r) => (
            <tr key={r.url}>
              <td className="mono ellipsis" title={r.url}>
                {r.url}
              </td>
              <td>
                <span className={`health ${r.healthy ? 'up' : 'down'}`}>
                  <span className="dot" aria-hidden="true" /> {r.healthy ? 'healthy' : 'down'}
                </span>
              </td>
              <td className="num">{r.inFlight}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </article>
  );
}

export function EnginesView() {
  const { data, loading, error, fetch } = useEngines();
  useEffect(() => {
    void fetch();
    const t = setInterval(() => void fetch(), POLL_MS);
    return () => clearInterval(t);
  }, [fetch]);

  let body;
  if (loading && !data) body = <Loading label="Loading engines…" />;
  else if (error && !data) body = <ErrorState message={error} onRetry={() => void fetch()} />;
  else if (data && data.length === 0)
    body = (
      <Empty title="No engines configured">
        Start with the embedded simulated engines (the default) or pass <code>--topology FILE</code>.
      </Empty>
    );
  else body = <div className="cards">{(data ?? []).map((e) => <EngineCard key={e.id} e={e} />)}</div>;

  return (
    <div className="view">
      <div className="view-head">
        <h1>Engines</h1>
        {error && data && <span className="inline-error" title={error}>refresh failed</span>}
      </div>
      {body}
    </div>
  );
}
