// Session inspector: session facts, the evaluator's verdict and output (batch sessions), the training
// traces with their break reasons (what diverged, side by side) and loss masks, then the turns, the
// transcript (messages as the agent saw them) or the per-token engine differences; refetched live on
// `completion` events.
import { useEffect, useMemo, useState } from 'react';
import { api } from '../backend/client.js';
import type { BuilderName, SessionRun, Trace } from '../backend/types.js';
import { StatusBadge } from '../components/Badges.js';
import { EngineLabel } from '../components/EngineLabel.js';
import { Empty, ErrorState, Loading } from '../components/States.js';
import { formatInt, formatMs, formatReward, formatTime } from '../lib/format.js';
import { routeHref } from '../lib/router.js';
import { completionOverlay } from '../lib/traceOverlay.js';
import { useAsync } from '../lib/useAsync.js';
import { useSessionDetail } from '../store/sessionDetail.js';
import { EngineDeltaPanel } from './EngineDeltaPanel.js';
import { TracesPanel } from './TracesPanel.js';
import { TranscriptView } from './TranscriptView.js';
import { TurnCard } from './TurnCard.js';

const NO_TRACES: Trace[] = [];

/** What the evaluator decided, in words: a reward-0 session never reads "ok". */
function verdictWords(r: SessionRun, reward: number | null): { tone: 'good' | 'bad' | 'warn'; text: string } {
  const ev = r.evaluator;
  const rw = ev?.reward ?? reward;
  const agent = r.outcome === 'ok' ? 'agent finished' : r.outcome ? `agent ${r.outcome.replace('_', ' ')}` : `run ${r.status}`;
  if (ev?.error) return { tone: 'bad', text: `${agent} · ${ev.type} evaluator failed: ${ev.error}` };
  if (rw === null || rw === undefined) return { tone: 'warn', text: `${agent} · not scored${ev ? ` (${ev.type})` : ''}` };
  const verdict = rw >= 1 ? 'PASS' : rw <= 0 ? 'FAIL' : 'PARTIAL';
  return { tone: rw >= 1 ? 'good' : rw <= 0 ? 'bad' : 'warn', text: `${verdict} · reward ${formatReward(rw)}${ev ? ` by the ${ev.type} evaluator` : ''} · ${agent}` };
}

/** The agent's changes (a unified diff), added and removed lines coloured. */
function PatchView({ diff }: { diff: string }) {
  const lines = diff.replace(/\n$/, '').split('\n');
  const cls = (l: string) => (l.startsWith('+++') || l.startsWith('---') || l.startsWith('diff ') ? 'patch-file' : l.startsWith('+') ? 'patch-add' : l.startsWith('-') ? 'patch-del' : l.startsWith('@@') ? 'patch-hunk' : undefined);
  return (
    <pre className="json-raw run-out run-patch" data-testid="agent-diff">
      {lines.map((l, i) => <span key={i} className={cls(l)}>{l}{'\n'}</span>)}
    </pre>
  );
}

function RunPanel({ id, finishedKey, reward }: { id: string; finishedKey: string; reward: number | null }) {
  const run = useAsync((signal) => api.run(id, signal), [id, finishedKey]);
  const [toggled, setToggled] = useState<boolean | null>(null);
  if (run.status === 404 || (!run.data && !run.error)) return null;
  if (run.error && !run.data) return <div className="inline-error">Agent run unavailable: {run.error}</div>;
  const r = run.data!;
  const v = verdictWords(r, reward);
  // A failed sample opens with its evidence shown.
  const open = toggled ?? v.tone !== 'good';
  return (
    <section className={`jsection verdict verdict-${v.tone} ${open ? 'open' : ''}`} aria-label="Evaluator verdict" data-testid="verdict">
      <header className="jsection-head">
        <button type="button" className="jsection-toggle" aria-expanded={open} onClick={() => setToggled(!open)}>
          <span className="j-caret">{open ? '▾' : '▸'}</span> <strong data-testid="verdict-text">{v.text}</strong>
          {r.exitCode !== null && <span className="muted"> · exit {r.exitCode}</span>}
          {r.durationMs !== null && <span className="muted"> · {formatMs(r.durationMs)}</span>}
        </button>
      </header>
      {r.evaluator?.output && (
        <div className="verdict-output">
          <div className="tile-label">Evaluator output</div>
          <pre className="json-raw run-out" data-testid="evaluator-output">{r.evaluator.output}</pre>
        </div>
      )}
      {open && (
        <div className="jsection-body run-body">
          {r.error && <div className="turn-errbox">{r.error}</div>}
          {r.evaluator?.rewards && Object.keys(r.evaluator.rewards).length > 1 && (
            <p>
              <strong>Scores:</strong> <span className="mono">{Object.entries(r.evaluator.rewards).map(([k, v]) => `${k} ${formatReward(v)}`).join(' · ')}</span>
            </p>
          )}
          {r.evaluator?.diff !== undefined && (
            <>
              <h3 className="subhead">Agent's changes</h3>
              {r.evaluator.diff ? <PatchView diff={r.evaluator.diff} /> : <p className="muted">No changes.</p>}
            </>
          )}
          {r.finalAnswer && (
            <p>
              <strong>Final answer:</strong> <span className="mono">{r.finalAnswer}</span>
            </p>
          )}
          <h3 className="subhead">stdout</h3>
          <pre className="json-raw run-out">{r.stdout || '(empty)'}</pre>
          <h3 className="subhead">stderr</h3>
          <pre className="json-raw run-out">{r.stderr || '(empty)'}</pre>
        </div>
      )}
    </section>
  );
}

type Tab = 'turns' | 'transcript' | 'delta';

export function SessionInspector({ id }: { id: string }) {
  const { session, completions, loading, refreshing, error, open, refresh, close } = useSessionDetail();
  // Turns the user opened or closed; by default the newest turn is open.
  const [toggled, setToggled] = useState<Map<string, boolean>>(new Map());
  const [builder, setBuilder] = useState<BuilderName>('prefix-merge');
  const [tab, setTab] = useState<Tab>('turns');

  useEffect(() => {
    void open(id);
    setToggled(new Map());
  }, [id, open]);
  useEffect(() => () => close(), [close]);

  // Traces follow the completions: refetched when a turn arrives.
  const version = `${completions?.length ?? -1}:${session?.status ?? ''}`;
  const traces = useAsync(completions ? (signal) => api.traces(id, builder, signal) : null, [id, builder, version]);

  const seqById = useMemo(() => new Map((completions ?? []).map((c) => [c.id, c.seq])), [completions]);
  const lastId = completions?.length ? completions[completions.length - 1].id : null;
  const totalTokens = useMemo(
    () => (completions ?? []).reduce((n, c) => n + (c.promptIds?.length ?? 0) + (c.outputIds?.length ?? 0), 0),
    [completions],
  );
  const traceList = builder === 'prefix-merge' ? (traces.data?.traces ?? NO_TRACES) : NO_TRACES;
  const traceIndex = useMemo(() => new Map(traceList.map((t, i) => [t.id, i])), [traceList]);
  const overlays = useMemo(() => new Map((completions ?? []).map((c) => [c.id, completionOverlay(traceList, c)])), [completions, traceList]);

  if (loading && !session) return <div className="view"><Loading label="Loading session…" /></div>;
  if (error && !session)
    return (
      <div className="view">
        <a className="back" href="#/sessions">← Sessions</a>
        <ErrorState message={error} onRetry={() => void refresh()} />
      </div>
    );
  if (!session) return null;

  const duration = session.finishedAt ? session.finishedAt - session.createdAt : Date.now() - session.createdAt;
  const isOpen = (cid: string) => toggled.get(cid) ?? cid === lastId;
  const toggle = (cid: string) => setToggled(new Map(toggled).set(cid, !isOpen(cid)));

  return (
    <div className="view">
      <span className="back-links">
        <a className="back" href="#/sessions">← Sessions</a>
        {session.batchId && (
          <a className="back" href={routeHref({ view: 'batch', id: session.batchId, taskId: session.taskId ?? undefined })}>
            ← Batch {session.taskId ? `/ ${session.taskId}` : ''}
          </a>
        )}
      </span>
      <div className="view-head">
        <h1>
          Session <span className="mono">{session.id}</span>
        </h1>
        <StatusBadge status={session.status} />
        {refreshing && <span className="muted">updating…</span>}
        {error && <span className="inline-error" title={error}>refresh failed</span>}
      </div>
      <dl className="facts facts-cols facts-box">
        <dt>Engine</dt>
        <dd>
          <EngineLabel id={session.engineId} />
        </dd>
        <dt>Harness</dt>
        <dd>{session.harness ?? '—'}</dd>
        <dt>Task</dt>
        <dd>{session.taskId ?? '—'}</dd>
        <dt>Batch</dt>
        <dd className="mono">{session.batchId ? <a href={routeHref({ view: 'batch', id: session.batchId })}>{session.batchId}</a> : '—'}</dd>
        <dt>Reward</dt>
        <dd className="mono">{formatReward(session.reward)}</dd>
        <dt>Turns</dt>
        <dd>{formatInt(completions?.length ?? session.completionCount)}</dd>
        <dt>Tokens</dt>
        <dd>{formatInt(session.totalTokens ?? totalTokens)}</dd>
        <dt>Created</dt>
        <dd>{formatTime(session.createdAt)}</dd>
        <dt>{session.finishedAt ? 'Duration' : 'Running for'}</dt>
        <dd>{formatMs(duration)}</dd>
      </dl>
      {session.batchId && <RunPanel id={session.id} finishedKey={session.status} reward={session.reward} />}
      {completions && completions.length > 0 && <TracesPanel traces={traces} builder={builder} setBuilder={setBuilder} completions={completions} />}
      <div className="seg seg-tabs" role="tablist" aria-label="Session view">
        {([['turns', `Turns (${completions?.length ?? 0})`], ['transcript', 'Transcript'], ['delta', 'Engine Δ per token']] as Array<[Tab, string]>).map(([k, label]) => (
          <button key={k} type="button" role="tab" className={tab === k ? 'on' : ''} aria-selected={tab === k} onClick={() => setTab(k)}>
            {label}
          </button>
        ))}
      </div>
      {tab === 'transcript' && <TranscriptView sessionId={session.id} version={version} />}
      {tab === 'delta' && <EngineDeltaPanel sessionId={session.id} engineId={session.engineId} />}
      {tab === 'turns' && completions && completions.length === 0 && (
        <Empty title="No turns yet">
          Point an agent at this session&apos;s URLs; each completion appears here as it is recorded.
        </Empty>
      )}
      <div className="turns">
        {(tab === 'turns' ? (completions ?? []) : []).map((c) => {
          const overlay = overlays.get(c.id) ?? null;
          return (
            <TurnCard
              key={c.id}
              c={c}
              open={isOpen(c.id)}
              onToggle={() => toggle(c.id)}
              retryOfSeq={c.retryOf ? seqById.get(c.retryOf) : undefined}
              overlay={overlay}
              traceLabel={overlay ? `trace #${(traceIndex.get(overlay.traceId) ?? 0) + 1} · turn ${overlay.turn + 1}` : undefined}
            />
          );
        })}
      </div>
    </div>
  );
}
