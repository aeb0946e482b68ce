// Session inspector: session facts, the agent run (batch sessions), the training traces with their
// break reasons and loss masks, and every turn, refetched live on `completion` events.
import { useEffect, useMemo, useState } from 'react';
import { api } from '../backend/client.js';
import type { BuilderName, Trace } from '../backend/types.js';
import { StatusBadge } from '../components/Badges.js';
import { EngineLabel } from '../components/EngineLabel.js';
import { Empty, ErrorState, Loading } from '../components/States.js';
import { formatInt, formatMs, formatReward, formatTime } from '../lib/format.js';
import { routeHref } from '../lib/router.js';
import { completionOverlay } from '../lib/traceOverlay.js';
import { useAsync } from '../lib/useAsync.js';
import { useSessionDetail } from '../store/sessionDetail.js';
import { TracesPanel } from './TracesPanel.js';
import { TurnCard } from './TurnCard.js';

const NO_TRACES: Trace[] = [];

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

function RunPanel({ id, finishedKey }: { id: string; finishedKey: string }) {
  const run = useAsync((signal) => api.run(id, signal), [id, finishedKey]);
  const [open, setOpen] = useState(false);
  if (run.status === 404 || (!run.data && !run.error)) return null;
  if (run.error && !run.data) return <div className="inline-error">Agent run unavailable: {run.error}</div>;
  const r = run.data!;
  return (
    <section className={`jsection ${open ? 'open' : ''}`} aria-label="Agent run">
      <header className="jsection-head">
        <button type="button" className="jsection-toggle" aria-expanded={open} onClick={() => setOpen(!open)}>
          <span className="j-caret">{open ? '▾' : '▸'}</span> Agent run · {r.outcome ?? r.status}
          {r.exitCode !== null && <span className="muted"> · exit {r.exitCode}</span>}
          {r.evaluator && <span className="muted"> · {r.evaluator.type} evaluator → {formatReward(r.evaluator.reward)}</span>}
        </button>
      </header>
      {open && (
        <div className="jsection-body run-body">
          {r.error && <div className="turn-errbox">{r.error}</div>}
          {r.evaluator?.output && (
            <p>
              <strong>Evaluator:</strong> <span className="mono">{r.evaluator.output}</span>
            </p>
          )}
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

export function SessionInspector({ id }: { id: string }) {
  const { session, completions, loading, refreshing, error, open, refresh, close } = useSessionDetail();
  // Turns the user opened or closed; by default the newest turn is open.
  const [toggled, setToggled] = useState<Map<string, boolean>>(new Map());
  const [builder, setBuilder] = useState<BuilderName>('prefix-merge');

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
      {session.batchId && <RunPanel id={session.id} finishedKey={session.status} />}
      {completions && completions.length > 0 && <TracesPanel traces={traces} builder={builder} setBuilder={setBuilder} completions={completions} />}
      <h2 className="subhead">Turns</h2>
      {completions && completions.length === 0 && (
        <Empty title="No turns yet">
          Point an agent at this session&apos;s URLs; each completion appears here as it is recorded.
        </Empty>
      )}
      <div className="turns">
        {(completions ?? []).map((c) => {
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
