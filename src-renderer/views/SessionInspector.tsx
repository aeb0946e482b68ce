// Session inspector: session facts and every turn, refetched live on `completion` events.
import { useEffect, useMemo, useState } from 'react';
import { StatusBadge } from '../components/Badges.js';
import { EngineLabel } from '../components/EngineLabel.js';
import { Empty, ErrorState, Loading } from '../components/States.js';
import { formatInt, formatMs, formatReward, formatTime } from '../lib/format.js';
import { useSessionDetail } from '../store/sessionDetail.js';
import { TurnCard } from './TurnCard.js';

export function SessionInspector({ id }: { id: string }) {
  const { session, completions, loading, refreshing, error, open, refresh, close } = useSessionDetail();
  // Turns the user opened or closed; by default the newest turn is open.
  const [toggled, setToggled] = useState<Map<string, boolean>>(new Map());

  useEffect(() => {
    void open(id);
    setToggled(new Map());
  }, [id, open]);
  useEffect(() => () => close(), [close]);

  const seqById = useMemo(() => new Map((completions ?? []).map((c) => [c.id, c.seq])), [completions]);
  const lastId = completions?.length ? completions[completions.length - 1].id : null;
  const totalTokens = useMemo(
    () => (completions ?? []).reduce((n, c) => n + (c.promptIds?.length ?? 0) + (c.outputIds?.length ?? 0), 0),
    [completions],
  );

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
      <a className="back" href="#/sessions">← Sessions</a>
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
        <dd className="mono">{session.batchId ?? '—'}</dd>
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
      <h2 className="subhead">Turns</h2>
      {completions && completions.length === 0 && (
        <Empty title="No turns yet">
          Point an agent at this session&apos;s URLs; each completion appears here as it is recorded.
        </Empty>
      )}
      <div className="turns">
        {(completions ?? []).map((c) => (
          <TurnCard
            key={c.id}
            c={c}
            open={isOpen(c.id)}
            onToggle={() => toggle(c.id)}
            retryOfSeq={c.retryOf ? seqById.get(c.retryOf) : undefined}
          />
        ))}
      </div>
    </div>
  );
}
