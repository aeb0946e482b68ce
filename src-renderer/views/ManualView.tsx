// Manual session: pick a harness and an engine → POST /api/sessions → copyable env / config snippets
// for running that agent by hand (GET /api/harnesses/:name/snippet, or built here from the harness
// recipes when the server has no snippet route), then watch the turns arrive live.
import { useEffect, useState } from 'react';
import { create } from 'zustand';
import { api, postJson } from '../backend/client.js';
import type { CreatedSession, HarnessSnippet } from '../backend/types.js';
import { StatusBadge } from '../components/Badges.js';
import { HarnessSelect } from '../components/HarnessSelect.js';
import { EngineLabel } from '../components/EngineLabel.js';
import { Empty, ErrorState, Loading } from '../components/States.js';
import { CodeBlock, CopyButton, useListKeys } from '../components/Widgets.js';
import { formatInt, formatMs, formatReward, formatTime } from '../lib/format.js';
import { navigate, routeHref } from '../lib/router.js';
import { summarizeResponse } from '../lib/summary.js';
import { useAsync } from '../lib/useAsync.js';
import { useCatalog } from '../store/catalog.js';
import { useEngines } from '../store/engines.js';
import { errorText } from '../store/resource.js';
import { useSessionDetail } from '../store/sessionDetail.js';

const STORE_KEY = 'rollgate.manualSessions';

/** Sessions created here, with the key (the server hands it out only once). Kept for this tab. */
const useCreated = create<{ byId: Record<string, CreatedSession & { harness: string }>; add(s: CreatedSession & { harness: string }): void }>((set, get) => {
  let initial: Record<string, CreatedSession & { harness: string }> = {};
  try {
    initial = JSON.parse(window.sessionStorage.getItem(STORE_KEY) ?? '{}') as typeof initial;
  } catch {
    /* storage unavailable */
  }
  return {
    byId: initial,
    add(s) {
      const byId = { ...get().byId, [s.id]: s };
      set({ byId });
      try {
        window.sessionStorage.setItem(STORE_KEY, JSON.stringify(byId));
      } catch {
        /* storage unavailable */
      }
    },
  };
});

function CreateForm() {
  const catalog = useCatalog();
  const engines = useEngines();
  const add = useCreated((s) => s.add);
  const [harness, setHarness] = useState('qwen-code');
  const [engine, setEngine] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    void catalog.load();
    if (!engines.data) void engines.fetch();
  }, []);
  useEffect(() => {
    if (!engine && engines.data?.length) setEngine(engines.data[0].id);
  }, [engines.data]);
  useEffect(() => {
    if (catalog.harnesses && !catalog.harnesses.some((h) => h.name === harness)) setHarness(catalog.harnesses[0]?.name ?? '');
  }, [catalog.harnesses]);
  const h = catalog.harnesses?.find((x) => x.name === harness);
  const create = async () => {
    setBusy(true);
    setError(null);
    try {
      const s = await api.createSession({ engine: engine || undefined, harness });
      add({ ...s, harness });
      navigate({ view: 'manual', id: s.id });
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  if (catalog.loading && !catalog.harnesses) return <Loading label="Loading harnesses…" />;
  return (
    <form className="card form" aria-label="New manual session" onSubmit={(e) => { e.preventDefault(); void create(); }}>
      <div className="field-row">
        <label className="field">
          <span className="field-label">Harness</span>
          <HarnessSelect value={harness} onChange={setHarness} agentsOnly />
          {h && <span className="field-hint">{h.description}</span>}
        </label>
        <label className="field">
          <span className="field-label">Engine</span>
          <select className="input" aria-label="Engine" value={engine} onChange={(e) => setEngine(e.target.value)}>
            {(engines.data ?? []).map((x) => (
              <option key={x.id} value={x.id}>
                {x.id}
                {x.simulated ? ' (SIMULATED)' : ''}
              </option>
            ))}
          </select>
        </label>
      </div>
      <div className="form-actions">
        <button type="submit" className="btn btn-primary" disabled={busy || !harness}>
          {busy ? 'Creating…' : 'Create session'}
        </button>
        {error && <span className="inline-error" role="alert">{error}</span>}
      </div>
    </form>
  );
}

function Turns({ id }: { id: string }) {
  const { session, completions, loading, error, open, close, refresh } = useSessionDetail();
  useEffect(() => {
    void open(id);
    return () => close();
  }, [id]);
  const list = completions ?? [];
  const keys = useListKeys(list.length, () => navigate({ view: 'session', id }));
  const [reward, setReward] = useState('');
  const [finishing, setFinishing] = useState<string | null>(null);
  const finish = async () => {
    setFinishing('…');
    try {
      const r = reward.trim() === '' ? undefined : Number(reward);
      await postJson(`/api/sessions/${encodeURIComponent(id)}/finish`, r === undefined ? {} : { reward: r });
      setFinishing(null);
      void refresh();
    } catch (err) {
      setFinishing(errorText(err));
    }
  };
  let body;
  if (loading && !session) body = <Loading label="Loading session…" />;
  else if (error && !session) body = <ErrorState message={error} onRetry={() => void refresh()} />;
  else if (list.length === 0)
    body = (
      <div className="waiting" data-testid="waiting-turns">
        <span className="spinner" aria-hidden="true" /> Waiting for the agent&apos;s first request… turns appear here as soon as they are recorded.
      </div>
    );
  else
    body = (
      <div className="table-wrap" ref={keys.ref} tabIndex={0} onKeyDown={keys.onKeyDown} aria-label="Turns; Enter opens the inspector" data-testid="manual-turns">
        <table className="table">
          <thead>
            <tr>
              <th>#</th>
              <th>Status</th>
              <th>Dialect</th>
              <th>Response</th>
              <th className="num">Tokens</th>
              <th className="num">Time</th>
              <th>At</th>
            </tr>
          </thead>
          <tbody>
            {list.map((c, i) => (
              <tr key={c.id} data-index={i} data-completion-id={c.id} className={i === keys.index ? 'active' : ''} onClick={() => keys.setIndex(i)}>
                <td className="mono">#{c.seq}</td>
                <td>
                  <StatusBadge status={c.status} />
                </td>
                <td>{c.dialect}</td>
                <td className="ellipsis mono turn-summary-cell">{summarizeResponse(c.response) || <span className="muted">—</span>}</td>
                <td className="num">
                  {formatInt(c.promptIds.length)} → {formatInt(c.outputIds.length)}
                </td>
                <td className="num">{formatMs(c.timings?.totalMs)}</td>
                <td>{formatTime(c.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    );
  return (
    <section className="card" aria-label="Live turns">
      <header className="card-head">
        <h2>Turns</h2>
        {session && <StatusBadge status={session.status} />}
        <span className="muted">{list.length} recorded · live</span>
        <span className="spacer" />
        {session?.status === 'active' && (
          <>
            <input className="input input-narrow" aria-label="Reward" placeholder="reward (optional)" value={reward} onChange={(e) => setReward(e.target.value)} />
            <button type="button" className="btn btn-small" onClick={() => void finish()}>
              Finish session
            </button>
          </>
        )}
        {session?.reward !== null && session?.reward !== undefined && <span className="chip">reward {formatReward(session.reward)}</span>}
        <a className="btn btn-small" href={routeHref({ view: 'session', id })}>
          Open in inspector →
        </a>
      </header>
      {finishing && finishing !== '…' && <div className="inline-error">Finish failed: {finishing}</div>}
      {body}
    </section>
  );
}

function Snippets({ id }: { id: string }) {
  const created = useCreated((s) => s.byId[id]);
  const catalog = useCatalog();
  const [harness, setHarness] = useState(created?.harness ?? '');
  const session = useSessionDetail((s) => (s.id === id ? s.session : null));
  useEffect(() => {
    void catalog.load();
  }, []);
  useEffect(() => {
    if (!harness && session?.harness) setHarness(session.harness);
  }, [session?.harness]);
  const name = harness || session?.harness || 'builtin';
  const snip = useAsync(created ? (signal) => api.snippet(name, created, signal) : null, [name, id, created?.key]);
  const snippet: HarnessSnippet | null = snip.data ?? null;
  const known = (catalog.harnesses ?? []).some((h) => h.name === name);

  return (
    <section className="card" aria-label="Run an agent against this session" data-testid="snippets">
      <header className="card-head">
        <h2>Run an agent against this session</h2>
        <span className="spacer" />
        <label className="field-inline">
          Harness
          <select className="input input-narrow" aria-label="Snippet harness" value={name} onChange={(e) => setHarness(e.target.value)}>
            {!known && <option value={name}>{name}</option>}
            {(catalog.harnesses ?? []).filter((h) => h.kind !== 'reference').map((h) => (
              <option key={h.name} value={h.name}>
                {h.name}
              </option>
            ))}
          </select>
        </label>
      </header>
      {created ? (
        <dl className="facts facts-urls">
          <dt>OpenAI base URL</dt>
          <dd className="mono">
            {created.urls.openai} <CopyButton text={created.urls.openai} />
          </dd>
          <dt>Anthropic / Gemini base URL</dt>
          <dd className="mono">
            {created.urls.anthropic} <CopyButton text={created.urls.anthropic} />
          </dd>
          <dt>API key</dt>
          <dd className="mono">
            {created.key} <CopyButton text={created.key} />
          </dd>
        </dl>
      ) : (
        <div className="muted">The session key is handed out once, when the session is created, and Rollgate keeps only its hash. This window did not create the session, so it cannot make a snippet for it; create a new session here to get one.</div>
      )}
      {snip.loading && !snippet && <Loading label="Preparing the snippet…" />}
      {snip.error && !snippet && <ErrorState message={snip.error} onRetry={snip.reload} />}
      {snippet && (
        <>
          <CodeBlock title="Paste into a terminal (private HOME, config files, env, command)" text={snippet.shell} testId="snippet-shell" />
          <div className="grid-2">
            <CodeBlock title="Environment" text={Object.entries(snippet.env).map(([k, v]) => `export ${k}=${JSON.stringify(v)}`).join('\n')} testId="snippet-env" />
            <CodeBlock title={snippet.install ? `Command (install: ${snippet.install})` : 'Command'} text={snippet.command} />
          </div>
          {snippet.files.map((f) => (
            <CodeBlock key={f.path} title={<span className="mono">~/{f.path}</span>} text={f.content} />
          ))}
        </>
      )}
    </section>
  );
}

export function ManualView({ id }: { id?: string }) {
  const created = useCreated((s) => s.byId);
  const recent = Object.values(created).slice(-6).reverse();
  return (
    <div className="view">
      <div className="view-head">
        <h1>Manual session</h1>
        {id && (
          <>
            <span className="mono">{id}</span>
            <EngineLabel id={created[id]?.engine ?? null} />
          </>
        )}
        <span className="spacer" />
        {id && (
          <a className="btn" href="#/manual">
            + New session
          </a>
        )}
      </div>
      {!id ? (
        <>
          <p className="muted intro">Create a session, paste the snippet into a terminal, and run your agent; every request it makes is recorded and shows up below as it happens.</p>
          <CreateForm />
          {recent.length > 0 && (
            <section className="card" aria-label="Created in this window">
              <header className="card-head">
                <h2>Created in this window</h2>
              </header>
              <ul className="plain-list">
                {recent.map((s) => (
                  <li key={s.id}>
                    <a className="mono" href={routeHref({ view: 'manual', id: s.id })}>
                      {s.id}
                    </a>{' '}
                    <span className="muted">
                      {s.harness} · {s.engine ?? 'default engine'}
                    </span>
                  </li>
                ))}
              </ul>
            </section>
          )}
          {recent.length === 0 && <Empty title="No manual session yet">Sessions created by batches are on the dashboard; this page is for running an agent by hand.</Empty>}
        </>
      ) : (
        <>
          <Snippets id={id} />
          <Turns id={id} />
        </>
      )}
    </div>
  );
}
