// Topology: a graph of agents (harnesses in use) → gateway → engines → replicas with health, load,
// paused state, policy version and simulated/real; weight-sync controls (pause with a mode, resume,
// policy version); engine cards with replica figures and add / edit / remove forms (topology routes).
import { useEffect, useMemo, useState, type FormEvent, type KeyboardEvent } from 'react';
import { api, ApiError } from '../backend/client.js';
import type { Engine, EngineKinds, EngineSpec, PauseMode, Replica } from '../backend/types.js';
import { SimulatedBadge } from '../components/Badges.js';
import { Empty, ErrorState, Loading } from '../components/States.js';
import { formatInt, formatMs, formatTime } from '../lib/format.js';
import { isActive, useBatches } from '../store/batches.js';
import { useEngines } from '../store/engines.js';
import { errorText } from '../store/resource.js';
import { useSessions } from '../store/sessions.js';
import { NodesCard } from './NodesCard.js';

const POLL_MS = 2000;

// ---- graph layout ----

const NODE_W = 210;
const NODE_H = 66;
const REP_W = 230;
const REP_H = 50;
const GAP = 14;
const COLS = { agents: 10, gateway: 280, engines: 560, replicas: 850 };
const WIDTH = COLS.replicas + REP_W + 10;

interface Pos { x: number; y: number }

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

function useHarnessesInUse(): Array<{ name: string; active: boolean }> {
  const batches = useBatches((s) => s.data);
  const sessions = useSessions((s) => s.data);
  return useMemo(() => {
    const m = new Map<string, boolean>();
    for (const b of batches ?? []) if (b.spec.harness) m.set(b.spec.harness, (m.get(b.spec.harness) ?? false) || isActive(b.status));
    for (const s of sessions ?? []) if (s.harness) m.set(s.harness, (m.get(s.harness) ?? false) || s.status === 'active');
    return [...m.entries()].map(([name, active]) => ({ name, active })).sort((a, b) => Number(b.active) - Number(a.active) || a.name.localeCompare(b.name));
  }, [batches, sessions]);
}

function edgePath(a: Pos, b: Pos): string {
  const mx = (a.x + b.x) / 2;
  return `M${a.x},${a.y} C${mx},${a.y} ${mx},${b.y} ${b.x},${b.y}`;
}

function loadText(r: Replica): string {
  const parts = [`${formatInt(r.inFlight)} in flight`];
  if (typeof r.engineLoad === 'number') parts.push(`load ${formatInt(r.engineLoad)}`);
  if (r.tokensPerSec) parts.push(`${formatInt(r.tokensPerSec)} tok/s`);
  return parts.join(' · ');
}

function TopologyGraph({ engines, selected, onSelect }: { engines: Engine[]; selected: string | null; onSelect: (id: string) => void }) {
  const policyVersion = useEngines((s) => s.policyVersion);
  const pause = useEngines((s) => s.pause);
  const harnesses = useHarnessesInUse();

  // Replicas stacked in the right column; each engine centred on its replicas.
  let y = 10;
  const engPos = new Map<string, Pos>();
  const repPos: Array<{ engine: Engine; r: Replica; p: Pos }> = [];
  for (const e of engines) {
    const n = Math.max(1, e.replicas.length);
    const block = n * REP_H + (n - 1) * GAP;
    const h = Math.max(block, NODE_H);
    const top = y + (h - block) / 2;
    e.replicas.forEach((r, i) => repPos.push({ engine: e, r, p: { x: COLS.replicas, y: top + i * (REP_H + GAP) } }));
    engPos.set(e.id, { x: COLS.engines, y: y + (h - NODE_H) / 2 });
    y += h + GAP * 2;
  }
  const agentsList = harnesses.length ? harnesses : [{ name: 'agents', active: false }];
  const agentsH = agentsList.length * (44 + GAP);
  const height = Math.max(y, agentsH + 20, NODE_H + 40);
  const gw: Pos = { x: COLS.gateway, y: height / 2 - NODE_H / 2 };
  const agentTop = height / 2 - agentsH / 2 + GAP / 2;
  const paused = !!pause?.mode;

  const key = (id: string) => (e: KeyboardEvent) => {
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      onSelect(id);
    }
  };

  return (
    <svg className="topo" viewBox={`0 0 ${WIDTH} ${height}`} role="img" aria-label="Topology: agents, gateway, engines and replicas" data-testid="topology-graph" preserveAspectRatio="xMinYMin meet">
      {/* edges */}
      {agentsList.map((h, i) => (
        <path key={`ea-${h.name}`} className={`edge ${h.active ? 'edge-live' : ''}`} d={edgePath({ x: COLS.agents + 170, y: agentTop + i * (44 + GAP) + 22 }, { x: gw.x, y: gw.y + NODE_H / 2 })} />
      ))}
      {engines.map((e) => {
        const p = engPos.get(e.id)!;
        const live = e.replicas.some((r) => r.inFlight > 0);
        return <path key={`eg-${e.id}`} className={`edge ${live ? 'edge-live' : ''} ${e.paused ? 'edge-paused' : ''}`} d={edgePath({ x: gw.x + NODE_W, y: gw.y + NODE_H / 2 }, { x: p.x, y: p.y + NODE_H / 2 })} />;
      })}
      {repPos.map(({ engine, r, p }) => {
        const ep = engPos.get(engine.id)!;
        return (
          <path
            key={`er-${engine.id}-${r.url}`}
            className={`edge ${r.inFlight > 0 ? 'edge-live' : ''} ${r.healthy ? '' : 'edge-down'}`}
            d={edgePath({ x: ep.x + NODE_W, y: ep.y + NODE_H / 2 }, { x: p.x, y: p.y + REP_H / 2 })}
          />
        );
      })}
      {/* agents */}
      {agentsList.map((h, i) => (
        <g key={`a-${h.name}`} className={`node node-agent ${h.active ? 'node-live' : ''}`} transform={`translate(${COLS.agents},${agentTop + i * (44 + GAP)})`} data-harness={h.name}>
          <rect width={170} height={44} rx={8} />
          <text x={12} y={19} className="n-title">
            {h.name}
          </text>
          <text x={12} y={35} className="n-sub">
            {harnesses.length ? (h.active ? 'harness · running' : 'harness · seen') : 'no harness used yet'}
          </text>
        </g>
      ))}
      {/* gateway */}
      <g className={`node node-gateway ${paused ? 'node-paused' : ''}`} transform={`translate(${gw.x},${gw.y})`} data-node="gateway">
        <rect width={NODE_W} height={NODE_H} rx={8} />
        <text x={12} y={24} className="n-title">
          Rollgate gateway
        </text>
        <text x={12} y={44} className="n-sub">
          policy v{policyVersion ?? '—'}
          {paused ? ` · PAUSED (${pause?.mode}${pause?.queued ? `, ${pause.queued} queued` : ''})` : ' · serving'}
        </text>
      </g>
      {/* engines */}
      {engines.map((e) => {
        const p = engPos.get(e.id)!;
        const healthy = e.replicas.filter((r) => r.healthy).length;
        return (
          <g
            key={`e-${e.id}`}
            className={`node node-engine ${e.paused ? 'node-paused' : ''} ${healthy === 0 ? 'node-down' : ''} ${selected === e.id ? 'node-selected' : ''}`}
            transform={`translate(${p.x},${p.y})`}
            data-engine-node={e.id}
            tabIndex={0}
            role="button"
            aria-label={`Engine ${e.id}`}
            onClick={() => onSelect(e.id)}
            onKeyDown={key(e.id)}
          >
            <rect width={NODE_W} height={NODE_H} rx={8} />
            <text x={12} y={20} className="n-title">
              {e.id}
            </text>
            {e.simulated ? (
              <text x={NODE_W - 10} y={20} className="n-tag n-sim" textAnchor="end">
                SIMULATED
              </text>
            ) : (
              <text x={NODE_W - 10} y={20} className="n-tag" textAnchor="end">
                REAL
              </text>
            )}
            <text x={12} y={40} className="n-sub">
              {e.kind} · {e.mode} mode · v{e.policyVersion ?? policyVersion ?? '—'}
            </text>
            <text x={12} y={56} className={`n-sub ${e.paused ? 'n-warn' : ''}`}>
              {e.paused ? 'paused' : `${healthy}/${e.replicas.length} healthy`}
              {e.failovers ? ` · ${e.failovers} failovers` : ''}
            </text>
          </g>
        );
      })}
      {/* replicas */}
      {repPos.map(({ engine, r, p }) => (
        <g key={`r-${engine.id}-${r.url}`} className={`node node-replica ${r.healthy ? 'node-up' : 'node-down'}`} transform={`translate(${p.x},${p.y})`} data-replica={r.url}>
          <rect width={REP_W} height={REP_H} rx={8} />
          <circle cx={14} cy={17} r={5} className={r.healthy ? 'dot-up' : 'dot-down'} />
          <text x={26} y={21} className="n-title n-mono">
            {hostOf(r.url)}
          </text>
          <text x={12} y={39} className="n-sub">
            {r.healthy ? loadText(r) : 'down'}
          </text>
        </g>
      ))}
    </svg>
  );
}

// ---- weight-sync controls ----

function SyncControls() {
  const pause = useEngines((s) => s.pause);
  const policyVersion = useEngines((s) => s.policyVersion);
  const refetch = useEngines((s) => s.fetch);
  const [mode, setMode] = useState<PauseMode>('queue');
  const [timeoutMs, setTimeoutMs] = useState(30000);
  const [forward, setForward] = useState(false);
  const [version, setVersion] = useState<string>('');
  const [busy, setBusy] = useState<string | null>(null);
  const [msg, setMsg] = useState<{ ok: boolean; text: string } | null>(null);
  const paused = !!pause?.mode;

  const run = async (label: string, fn: () => Promise<unknown>, ok: (r: unknown) => string) => {
    setBusy(label);
    setMsg(null);
    try {
      const r = await fn();
      setMsg({ ok: true, text: ok(r) });
    } catch (err) {
      setMsg({ ok: false, text: `${label} failed: ${errorText(err)}` });
    } finally {
      setBusy(null);
      void refetch();
    }
  };
  const setPv = (e: FormEvent) => {
    e.preventDefault();
    const v = Number(version);
    if (!Number.isInteger(v) || v < 0) return setMsg({ ok: false, text: 'The policy version is a whole number ≥ 0' });
    void run('Set policy version', () => api.setPolicyVersion(v), () => `Policy version set to ${v}: new completions are stamped v${v}`);
  };

  return (
    <section className="card" aria-label="Weight sync" data-testid="sync-controls">
      <header className="card-head">
        <h2>Weight sync</h2>
        {paused ? <span className="badge badge-warn">paused · {pause?.mode}</span> : <span className="badge badge-good">serving</span>}
        {paused && pause?.since && <span className="muted">since {formatTime(pause.since)}{pause.queued ? ` · ${pause.queued} queued` : ''}</span>}
      </header>
      <div className="control-row">
        <label className="field-inline">
          Mode
          <select className="input input-narrow" aria-label="Pause mode" value={mode} onChange={(e) => setMode(e.target.value as PauseMode)} disabled={paused}>
            <option value="queue">queue (hold new calls)</option>
            <option value="reject">reject (429 + Retry-After)</option>
            <option value="abort">abort in-flight</option>
          </select>
        </label>
        <label className="field-inline">
          Drain timeout
          <input className="input input-narrow" type="number" min={0} max={600000} step={1000} aria-label="Drain timeout (ms)" value={timeoutMs} onChange={(e) => setTimeoutMs(Number(e.target.value) || 0)} disabled={paused} />
          ms
        </label>
        <label className="check" title="After Rollgate's own calls have drained, also call each engine's pause route (and resume route on resume)">
          <input type="checkbox" checked={forward} onChange={(e) => setForward(e.target.checked)} /> also pause the engines
        </label>
        {paused ? (
          <button type="button" className="btn btn-primary" disabled={!!busy} onClick={() => void run('Resume', () => api.resume(forward), (r) => `Resumed${(r as { released?: number }).released ? `, ${(r as { released: number }).released} queued calls released` : ''}`)}>
            {busy === 'Resume' ? 'Resuming…' : 'Resume'}
          </button>
        ) : (
          <button type="button" className="btn btn-warn" disabled={!!busy} onClick={() => void run('Pause', () => api.pause(mode, timeoutMs, forward), () => `Paused (${mode})`)}>
            {busy === 'Pause' ? 'Pausing (draining)…' : 'Pause'}
          </button>
        )}
      </div>
      <form className="control-row" onSubmit={setPv}>
        <label className="field-inline">
          Policy version
          <input className="input input-narrow" type="number" min={0} aria-label="Policy version" placeholder={String(policyVersion ?? 0)} value={version} onChange={(e) => setVersion(e.target.value)} />
        </label>
        <button type="submit" className="btn" disabled={!!busy || version === ''}>
          Set
        </button>
        <span className="muted">current: v{policyVersion ?? '—'}</span>
      </form>
      {msg && (
        <div className={msg.ok ? 'ok-msg' : 'inline-error'} role={msg.ok ? 'status' : 'alert'}>
          {msg.text}
        </div>
      )}
    </section>
  );
}

// ---- engine cards and forms ----

function topologyError(err: unknown, method: string, path: string): string {
  if (err instanceof ApiError && (err.status === 404 || err.status === 405)) {
    return `This server has no topology-editing route yet (${method} ${path} → ${err.status}). Edit the topology file (--topology) and restart Rollgate instead.`;
  }
  return errorText(err);
}

function EngineForm({ initial, onDone, onCancel }: { initial?: Engine; onDone: () => void; onCancel: () => void }) {
  const [spec, setSpec] = useState<EngineSpec>(() => ({
    id: initial?.id ?? '',
    kind: initial?.kind ?? 'vllm',
    mode: (initial?.mode as EngineSpec['mode']) ?? 'chat',
    model: initial?.model ?? 'Qwen/Qwen3-8B',
    tokenizer: initial?.tokenizer ?? 'builtin:qwen3',
    replicas: initial?.replicas.map((r) => r.url) ?? [],
    // Settings the form does not show are sent back as they were (PUT replaces the whole config).
    ...(initial?.family ? { family: initial.family } : {}),
    ...(initial?.developerRole ? { developerRole: initial.developerRole } : {}),
    ...(initial?.dataParallelSize ? { dataParallelSize: initial.dataParallelSize } : {}),
    ...(initial?.router ? { router: initial.router } : {}),
  }));
  const [replicas, setReplicas] = useState((initial?.replicas.map((r) => r.url) ?? []).join('\n'));
  // Kinds, their modes and the model families come from the server's registries.
  const [registry, setRegistry] = useState<EngineKinds | null>(null);
  useEffect(() => {
    const ac = new AbortController();
    api.engineKinds(ac.signal).then(setRegistry, () => undefined);
    return () => ac.abort();
  }, []);
  const kinds = registry?.kinds ?? [{ kind: spec.kind, label: spec.kind, modes: [spec.mode], defaultMode: spec.mode }];
  const modes = kinds.find((k) => k.kind === spec.kind)?.modes ?? [spec.mode];
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const urls = replicas.split(/\s+/).map((s) => s.trim()).filter(Boolean);
  const badUrl = urls.find((u) => !/^https?:\/\/[^\s/]+/.test(u));
  const valid = /^[A-Za-z0-9._-]+$/.test(spec.id) && spec.model.trim() && urls.length > 0 && !badUrl;
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!valid) return;
    setBusy(true);
    setError(null);
    const body: EngineSpec = { ...spec, replicas: urls, tokenizer: spec.tokenizer?.trim() || undefined };
    const path = initial ? `/api/engines/${initial.id}` : '/api/engines';
    try {
      if (initial) await api.updateEngine(initial.id, body);
      else await api.addEngine(body);
      onDone();
    } catch (err) {
      setError(topologyError(err, initial ? 'PUT' : 'POST', path));
    } finally {
      setBusy(false);
    }
  };
  const set = <K extends keyof EngineSpec>(k: K, v: EngineSpec[K]) => setSpec({ ...spec, [k]: v });
  return (
    <form className="card form engine-form" onSubmit={(e) => void submit(e)} aria-label={initial ? `Edit engine ${initial.id}` : 'Add engine'}>
      <header className="card-head">
        <h2>{initial ? `Edit ${initial.id}` : 'Add an engine'}</h2>
      </header>
      <div className="field-row">
        <label className="field">
          <span className="field-label">Id</span>
          <input className="input input-narrow mono" aria-label="Engine id" value={spec.id} onChange={(e) => set('id', e.target.value)} disabled={!!initial} placeholder="vllm-main" />
        </label>
        <label className="field">
          <span className="field-label">Kind</span>
          <select className="input input-narrow" aria-label="Engine kind" value={spec.kind} onChange={(e) => {
            const k = kinds.find((x) => x.kind === e.target.value);
            setSpec({ ...spec, kind: e.target.value, mode: k && !k.modes.includes(spec.mode) ? k.defaultMode : spec.mode });
          }}>
            {kinds.map((k) => <option key={k.kind} value={k.kind}>{k.kind}</option>)}
          </select>
        </label>
        <label className="field">
          <span className="field-label">Mode</span>
          <select className="input input-narrow" aria-label="Engine mode" value={spec.mode} onChange={(e) => set('mode', e.target.value as EngineSpec['mode'])}>
            {modes.map((m) => <option key={m} value={m}>{m}</option>)}
          </select>
        </label>
      </div>
      <div className="field-row">
        <label className="field">
          <span className="field-label">Model (served name)</span>
          <input className="input mono" aria-label="Model" value={spec.model} onChange={(e) => set('model', e.target.value)} />
        </label>
        <label className="field">
          <span className="field-label">Tokenizer</span>
          <input className="input mono" aria-label="Tokenizer" value={spec.tokenizer ?? ''} onChange={(e) => set('tokenizer', e.target.value)} placeholder="builtin:qwen3 or a local folder" />
        </label>
        <label className="field">
          <span className="field-label">Family (token mode)</span>
          <select className="input input-narrow" aria-label="Model family" value={spec.family ?? ''} onChange={(e) => setSpec({ ...spec, family: e.target.value || undefined })}>
            <option value="">from the tokenizer</option>
            {(registry?.families ?? []).map((f) => <option key={f.name} value={f.name} title={f.description}>{f.name}</option>)}
          </select>
        </label>
      </div>
      <label className="field">
        <span className="field-label">Replicas (one URL per line)</span>
        <textarea className="input input-wide mono" rows={3} aria-label="Replica URLs" value={replicas} onChange={(e) => setReplicas(e.target.value)} placeholder={'http://10.0.0.5:8000\nhttp://10.0.0.6:8000'} />
        {badUrl && <span className="inline-error">Not an http(s) URL: {badUrl}</span>}
      </label>
      <div className="form-actions">
        <button type="submit" className="btn btn-primary" disabled={!valid || busy}>
          {busy ? 'Saving…' : initial ? 'Save' : 'Add engine'}
        </button>
        <button type="button" className="btn" onClick={onCancel}>
          Cancel
        </button>
        {error && (
          <div className="inline-error form-error" role="alert" data-testid="engine-form-error">
            {error}
          </div>
        )}
      </div>
    </form>
  );
}

function EngineCard({ e, selected, onEdit, onRemoved }: { e: Engine; selected: boolean; onEdit: () => void; onRemoved: () => void }) {
  const healthy = e.replicas.filter((r) => r.healthy).length;
  const poolVersion = useEngines((st) => st.policyVersion);
  const [confirm, setConfirm] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const remove = async () => {
    setError(null);
    try {
      await api.removeEngine(e.id);
      onRemoved();
    } catch (err) {
      setError(topologyError(err, 'DELETE', `/api/engines/${e.id}`));
    } finally {
      setConfirm(false);
    }
  };
  return (
    <article className={`card engine ${selected ? 'card-selected' : ''}`} data-engine-id={e.id}>
      <header className="card-head">
        <h2 className="mono">{e.id}</h2>
        <span className="chip">{e.kind}</span>
        {e.simulated ? <SimulatedBadge /> : <span className="chip">real</span>}
        {e.paused && <span className="badge badge-warn">paused</span>}
        <span className="spacer" />
        {e.simulated ? (
          <span className="muted small" title="Simulated engines are wired by the app (use --no-sim to drop them)">
            built in
          </span>
        ) : (
          <button type="button" className="btn btn-small" onClick={onEdit}>
            Edit
          </button>
        )}
        {e.simulated ? null : confirm ? (
          <>
            <button type="button" className="btn btn-small btn-danger" onClick={() => void remove()}>
              Remove {e.id}
            </button>
            <button type="button" className="btn btn-small" onClick={() => setConfirm(false)}>
              Keep
            </button>
          </>
        ) : (
          <button type="button" className="btn btn-small" onClick={() => setConfirm(true)}>
            Remove
          </button>
        )}
      </header>
      {error && <div className="inline-error" role="alert">{error}</div>}
      <dl className="facts">
        <dt>Model</dt>
        <dd className="mono">{e.model}</dd>
        <dt>Mode</dt>
        <dd>{e.mode === 'token' ? 'token (Rollgate renders the template)' : e.mode}</dd>
        <dt>Tokenizer</dt>
        <dd className="mono">{e.tokenizer ?? '—'}</dd>
        {e.mode === 'token' && (
          <>
            <dt>Family</dt>
            <dd className="mono">{e.family ?? 'from the tokenizer'}</dd>
          </>
        )}
        {e.router && (
          <>
            <dt>Router</dt>
            <dd><span className="mono">{e.router.kind}</span> · session id in <span className="mono">{e.router.header}</span></dd>
          </>
        )}
        <dt>Replicas</dt>
        <dd>
          {healthy}/{e.replicas.length} healthy{e.failovers ? ` · ${e.failovers} failovers` : ''}{e.queued ? ` · ${e.queued} queued by the pause` : ''}
        </dd>
        <dt>Policy</dt>
        <dd className="mono">v{e.policyVersion ?? poolVersion ?? '—'}</dd>
      </dl>
      <table className="replicas replicas-wide">
        <thead>
          <tr>
            <th>Replica</th>
            <th>Health</th>
            <th className="num">In flight</th>
            <th className="num">tok/s</th>
            <th className="num">p50 / p99</th>
            <th className="num">TTFT p50 / p99</th>
            <th className="num">Done / err</th>
          </tr>
        </thead>
        <tbody>
          {e.replicas.map((r) => (
            <tr key={r.url}>
              <td className="mono ellipsis" title={r.url}>
                {hostOf(r.url)}
              </td>
              <td>
                <span className={`health ${r.healthy ? 'up' : 'down'}`}>
                  <span className="dot" aria-hidden="true" /> {r.healthy ? 'healthy' : 'down'}
                </span>
              </td>
              <td className="num">{r.inFlight}</td>
              <td className="num">{r.tokensPerSec === undefined ? '—' : formatInt(r.tokensPerSec)}</td>
              <td className="num">
                {formatMs(r.p50LatencyMs ?? null)} / {formatMs(r.p99LatencyMs ?? null)}
              </td>
              <td className="num">
                {formatMs(r.p50TtftMs ?? null)} / {formatMs(r.p99TtftMs ?? null)}
              </td>
              <td className="num">
                {formatInt(r.completed ?? null)} / {formatInt(r.errors ?? null)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </article>
  );
}

export function TopologyView() {
  const { data, loading, error, fetch } = useEngines();
  const batches = useBatches();
  const [selected, setSelected] = useState<string | null>(null);
  const [form, setForm] = useState<{ mode: 'add' } | { mode: 'edit'; id: string } | null>(null);
  useEffect(() => {
    void fetch();
    if (!batches.data) void batches.fetch({ quiet: true });
    const t = setInterval(() => void fetch(), POLL_MS);
    return () => clearInterval(t);
  }, [fetch]);

  const select = (id: string) => {
    setSelected(id);
    document.querySelector(`[data-engine-id="${CSS.escape(id)}"]`)?.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
  };
  const editing = form?.mode === 'edit' ? data?.find((e) => e.id === form.id) : undefined;

  let body;
  if (loading && !data) body = <Loading label="Loading engines…" />;
  else if (error && !data) body = <ErrorState message={error} onRetry={() => void fetch()} />;
  else
    body = (
      <>
        <section className="card topo-card">
          {data && data.length > 0 ? (
            <TopologyGraph engines={data} selected={selected} onSelect={select} />
          ) : (
            <Empty title="No engines configured">
              Start with the embedded simulated engines (the default), pass <code>--topology FILE</code>, or add one below.
            </Empty>
          )}
          <div className="legend topo-legend">
            <span className="legend-item"><span className="tok-swatch sw-live" /> requests in flight</span>
            <span className="legend-item"><span className="tok-swatch sw-paused" /> paused</span>
            <span className="legend-item"><span className="tok-swatch sw-down" /> unhealthy</span>
            <span className="legend-item">Click an engine for its figures.</span>
          </div>
        </section>
        <NodesCard />
        <SyncControls />
        <div className="view-head">
          <h2 className="subhead">Engines</h2>
          <span className="spacer" />
          <button type="button" className="btn" onClick={() => setForm({ mode: 'add' })} disabled={form?.mode === 'add'}>
            + Add engine
          </button>
        </div>
        {form && (
          <EngineForm
            key={form.mode === 'edit' ? form.id : 'add'}
            initial={editing}
            onDone={() => {
              setForm(null);
              void fetch();
            }}
            onCancel={() => setForm(null)}
          />
        )}
        <div className="cards cards-wide">
          {(data ?? []).map((e) => (
            <EngineCard key={e.id} e={e} selected={selected === e.id} onEdit={() => setForm({ mode: 'edit', id: e.id })} onRemoved={() => void fetch()} />
          ))}
        </div>
      </>
    );

  return (
    <div className="view">
      <div className="view-head">
        <h1>Topology</h1>
        {error && data && <span className="inline-error" title={error}>refresh failed</span>}
      </div>
      {body}
    </div>
  );
}
