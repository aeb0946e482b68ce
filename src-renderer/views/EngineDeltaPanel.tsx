// Per-token engine differences for one session (DESIGN §8): re-score its traces on another engine, or
// reopen a kept re-scoring (its own, or a batch re-scoring that covered it), then see every trained
// token coloured by Δlogprob, sortable by |Δ|.
import { useEffect, useState } from 'react';
import { api } from '../backend/client.js';
import { DeltaTokens } from '../components/DeltaTokens.js';
import { Empty, ErrorState, Loading } from '../components/States.js';
import { formatLogprob, formatTime } from '../lib/format.js';
import { useAsync } from '../lib/useAsync.js';
import { useEngines } from '../store/engines.js';
import { errorText } from '../store/resource.js';

export function EngineDeltaPanel({ sessionId, engineId }: { sessionId: string; engineId: string | null }) {
  const engines = useEngines((s) => s.data) ?? [];
  const others = engines.filter((e) => e.id !== engineId);
  const [target, setTarget] = useState<string>('');
  useEffect(() => {
    if (!target && others[0]) setTarget(others[0].id);
  }, [others.length]);
  const [tick, setTick] = useState(0);
  const list = useAsync((signal) => api.rescores({ session: sessionId }, signal), [sessionId, tick]);
  const [chosen, setChosen] = useState<string | null>(null);
  const current = chosen ?? list.data?.rescores[0]?.id ?? null;
  const tokens = useAsync(current ? (signal) => api.rescoreTokens(current, { session: sessionId }, signal) : null, [current, sessionId]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [pick, setPick] = useState(0);

  const run = async () => {
    setBusy(true);
    setError(null);
    try {
      const r = await api.rescore({ sessionId, engine: target, builder: 'prefix-merge' });
      if (r.id) setChosen(r.id);
      setTick((t) => t + 1);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  const runs = list.data?.rescores ?? [];
  const traces = tokens.data?.traces ?? [];
  const k = Math.min(pick, Math.max(0, traces.length - 1));
  return (
    <section className="card" aria-label="Engine differences per token" data-testid="engine-delta">
      <header className="card-head">
        <h2>Engine differences per token</h2>
        <span className="muted">this session&apos;s trained tokens re-scored on another engine</span>
        <span className="spacer" />
        <label className="field-inline">
          Re-score on
          <select className="input input-narrow" aria-label="Re-scoring engine" value={target} onChange={(e) => setTarget(e.target.value)}>
            {others.map((e) => (
              <option key={e.id} value={e.id}>
                {e.id}
              </option>
            ))}
          </select>
        </label>
        <button type="button" className="btn btn-primary" onClick={() => void run()} disabled={busy || !target}>
          {busy ? 'Re-scoring…' : 'Re-score'}
        </button>
      </header>
      {error && <ErrorState message={error} onRetry={() => void run()} />}
      {runs.length > 0 && (
        <div className="rescore-runs" role="group" aria-label="Kept re-scorings">
          {runs.map((r) => (
            <button key={r.id} type="button" className={`btn btn-small ${r.id === current ? 'on' : ''}`} aria-pressed={r.id === current} onClick={() => setChosen(r.id)} data-rescore-id={r.id}>
              {r.sourceEngine ?? '?'} → {r.engine} · {r.batchId ? 'batch' : 'session'} · {formatTime(r.createdAt)} · mean |Δ| {formatLogprob(r.overall.meanAbsDelta)}
            </button>
          ))}
          {current && (
            <a className="btn btn-small" href={api.rescoreExportUrl(current)} download>
              ⬇ JSONL
            </a>
          )}
        </div>
      )}
      {list.loading && !list.data ? (
        <Loading label="Looking for kept re-scorings…" />
      ) : list.error && !list.data ? (
        list.status === 404 ? <Empty title="This server keeps no re-scorings" /> : <ErrorState message={list.error} onRetry={list.reload} />
      ) : runs.length === 0 ? (
        <Empty title="Not re-scored yet">Re-score this session&apos;s traces on {target || 'another engine'} to see, token by token, how differently the two engines rate what was sampled.</Empty>
      ) : tokens.loading && !tokens.data ? (
        <Loading label="Loading per-token logprobs…" />
      ) : tokens.error && !tokens.data ? (
        <ErrorState message={tokens.error} onRetry={tokens.reload} />
      ) : traces.length === 0 ? (
        <Empty title="No trained tokens were compared" />
      ) : (
        <>
          {traces.length > 1 && (
            <div className="seg" role="group" aria-label="Trace">
              {traces.map((t, i) => (
                <button key={t.traceId} type="button" className={i === k ? 'on' : ''} aria-pressed={i === k} onClick={() => setPick(i)}>
                  trace #{i + 1}
                </button>
              ))}
            </div>
          )}
          <DeltaTokens key={traces[k].traceId} t={traces[k]} engineA={traces[k].sourceEngine ?? tokens.data!.rescore.sourceEngine ?? 'A'} engineB={tokens.data!.rescore.engine} />
        </>
      )}
    </section>
  );
}
