// The cluster's nodes on the topology view (DESIGN §12): every Rollgate node on the shared Postgres with its
// liveness, engines and load. Shown only when this Rollgate is a node of a cluster (a single process has one).
import { useEffect, useState } from 'react';
import { api } from '../backend/client.js';
import type { NodesResponse } from '../backend/types.js';
import { formatInt, formatMs } from '../lib/format.js';
import { errorText } from '../store/resource.js';

const POLL_MS = 2000;

export function NodesCard() {
  const [data, setData] = useState<NodesResponse | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const ctl = new AbortController();
    const load = () => api.nodes(ctl.signal).then((d) => { setData(d); setError(null); }, (e) => { if (!ctl.signal.aborted) setError(errorText(e)); });
    void load();
    const t = setInterval(() => void load(), POLL_MS);
    return () => { clearInterval(t); ctl.abort(); };
  }, []);
  if (!data || data.self === 'local') return null;
  const live = data.nodes.filter((n) => n.alive).length;
  return (
    <section className="card" aria-label="Cluster nodes" data-testid="cluster-nodes">
      <header className="card-head">
        <h2>Nodes</h2>
        <span className="muted">{live} of {data.nodes.length} live · this is {data.self}</span>
        {error && <span className="badge badge-warn" title={error}>stale</span>}
      </header>
      <div className="table-wrap">
        <table className="table table-compact">
          <thead>
            <tr>
              <th>Node</th>
              <th>Status</th>
              <th>Address</th>
              <th>Engines</th>
              <th className="num">Active sessions</th>
              <th className="num">Running samples</th>
              <th className="num">Calls in flight</th>
              <th className="num">Heartbeat</th>
            </tr>
          </thead>
          <tbody>
            {data.nodes.map((n) => (
              <tr key={n.id} data-node-id={n.id}>
                <td className="mono">{n.id}{n.id === data.self ? ' (this)' : ''}</td>
                <td>
                  <span className={`badge badge-${n.alive ? 'good' : n.status === 'stopped' ? 'muted' : 'bad'}`}>{n.alive ? (n.drained ? 'live · drained' : 'live') : n.status === 'live' ? 'late' : n.status}</span>
                </td>
                <td className="mono">{n.advertiseUrl}</td>
                <td>{n.engines.map((e) => `${e.id} (${e.healthy}/${e.replicas})`).join(', ') || '—'}</td>
                <td className="num">{formatInt(n.load.activeSessions)}</td>
                <td className="num">{formatInt(n.load.runningTasks)}</td>
                <td className="num">{formatInt(n.load.inFlightCalls)}</td>
                <td className="num">{formatMs(n.heartbeatAgeMs)} ago</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
