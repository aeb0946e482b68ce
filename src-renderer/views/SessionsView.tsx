// Sessions list: newest first, live-updated, filterable, keyboard navigable (↑/↓/Home/End/Enter).
import { useEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import type { SessionSummary } from '../backend/types.js';
import { StatusBadge } from '../components/Badges.js';
import { EngineLabel } from '../components/EngineLabel.js';
import { Empty, ErrorState, Loading } from '../components/States.js';
import { VirtualRows, type VirtualRowsHandle } from '../components/VirtualRows.js';
import { formatInt, formatMs, formatReward, formatTime, shortId } from '../lib/format.js';
import { navigate } from '../lib/router.js';
import { useSessions } from '../store/sessions.js';
import { SESSIONS_PAGE } from '../backend/client.js';

const ROW_H = 36;

function matches(s: SessionSummary, q: string): boolean {
  if (!q) return true;
  const hay = [s.id, s.status, s.engineId, s.harness, s.taskId, s.batchId].filter(Boolean).join(' ').toLowerCase();
  return q
    .toLowerCase()
    .split(/\s+/)
    .every((w) => hay.includes(w));
}

function SessionRow({ s, active, onOpen }: { s: SessionSummary; active: boolean; onOpen: () => void }) {
  const duration = s.finishedAt ? s.finishedAt - s.createdAt : null;
  return (
    <div
      className={`srow ${active ? 'active' : ''}`}
      role="row"
      aria-selected={active}
      data-session-id={s.id}
      onClick={onOpen}
    >
      <span className="mono ellipsis" role="cell" title={s.id}>
        {s.id}
      </span>
      <span role="cell">
        <StatusBadge status={s.status} />
      </span>
      <span role="cell">
        <EngineLabel id={s.engineId} />
      </span>
      <span role="cell" className="ellipsis">{s.harness ?? '—'}</span>
      <span role="cell" className="ellipsis" title={s.taskId ?? ''}>
        {s.taskId ?? '—'}
      </span>
      <span role="cell" className="mono ellipsis" title={s.batchId ?? ''}>
        {shortId(s.batchId)}
      </span>
      <span role="cell" className="num">{formatReward(s.reward)}</span>
      <span role="cell" className="num">{formatInt(s.completionCount)}</span>
      <span role="cell" className="num">{formatInt(s.totalTokens)}</span>
      <span role="cell">{formatTime(s.createdAt)}</span>
      <span role="cell" className="num">{duration === null ? '—' : formatMs(duration)}</span>
    </div>
  );
}

export function SessionsView() {
  const { data, total, loading, error, refreshing, fetch, loadMore, selectedId: activeId, select: setActiveId } = useSessions();
  const more = data && total !== null ? total - data.length : 0;
  const [query, setQuery] = useState('');
  const list = useRef<VirtualRowsHandle>(null);

  useEffect(() => {
    void fetch({ quiet: data !== null });
  }, []);

  const rows = useMemo(() => (data ?? []).filter((s) => matches(s, query.trim())), [data, query]);
  const found = activeId ? rows.findIndex((r) => r.id === activeId) : -1;
  const clamped = found >= 0 ? found : 0; // selection is tracked by id: live inserts do not move it

  // Coming back from a session: bring its row into view.
  useEffect(() => {
    if (found > 0) list.current?.scrollToRow(found, 'center');
    // only on mount
  }, []);

  // Focus the list once data is there, so ↑/↓/Enter work straight away.
  const hasRows = rows.length > 0;
  useEffect(() => {
    if (hasRows && document.activeElement === document.body) list.current?.element()?.focus();
  }, [hasRows]);

  const move = (to: number) => {
    const next = Math.max(0, Math.min(rows.length - 1, to));
    if (rows[next]) setActiveId(rows[next].id);
    list.current?.scrollToRow(next);
  };
  const onKey = (e: KeyboardEvent<HTMLDivElement>) => {
    const page = Math.max(1, Math.floor((list.current?.element()?.clientHeight ?? 360) / ROW_H) - 1);
    const keys: Record<string, () => void> = {
      ArrowDown: () => move(clamped + 1),
      ArrowUp: () => move(clamped - 1),
      PageDown: () => move(clamped + page),
      PageUp: () => move(clamped - page),
      Home: () => move(0),
      End: () => move(rows.length - 1),
      Enter: () => rows[clamped] && navigate({ view: 'session', id: rows[clamped].id }),
    };
    const action = keys[e.key];
    if (action) {
      e.preventDefault();
      action();
    }
  };

  let body;
  if (loading && !data) body = <Loading label="Loading sessions…" />;
  else if (error && !data) body = <ErrorState message={error} onRetry={() => void fetch()} />;
  else if (data && data.length === 0)
    body = (
      <Empty title="No sessions yet">
        Create one with <code>POST /api/sessions</code> or run <code>rollgate eval --dataset demo:… --harness builtin</code>,
        then point an agent at the session&apos;s URLs. New sessions show up here live.
      </Empty>
    );
  else if (rows.length === 0) body = <Empty title="No session matches the filter" />;
  else
    body = (
      <div className="stable" role="table" aria-label="Sessions" aria-rowcount={rows.length}>
        <div className="srow shead" role="row">
          {['Session', 'Status', 'Engine', 'Harness', 'Task', 'Batch', 'Reward', 'Turns', 'Tokens', 'Created', 'Duration'].map((h) => (
            <span key={h} role="columnheader" className={['Reward', 'Turns', 'Tokens', 'Duration'].includes(h) ? 'num' : ''}>
              {h}
            </span>
          ))}
        </div>
        <VirtualRows
          ref={list}
          className="slist"
          rowCount={rows.length}
          rowHeight={ROW_H}
          tabIndex={0}
          aria-label="Sessions list; use arrow keys and Enter"
          onKeyDown={onKey}
          renderRow={(i) => (
            <SessionRow
              s={rows[i]}
              active={i === clamped}
              onOpen={() => {
                setActiveId(rows[i].id);
                navigate({ view: 'session', id: rows[i].id });
              }}
            />
          )}
        />
      </div>
    );

  return (
    <div className="view view-fill">
      <div className="view-head">
        <h1>Sessions</h1>
        {data && (
          <span className="muted" data-testid="sessions-count">
            {rows.length !== data.length
              ? `${formatInt(rows.length)} of ${formatInt(data.length)} loaded${more > 0 ? ` (${formatInt(total ?? 0)} in all)` : ''}`
              : more > 0
                ? `newest ${formatInt(data.length)} of ${formatInt(total ?? 0)}`
                : formatInt(data.length)}
          </span>
        )}
        {more > 0 && (
          <button type="button" className="btn" onClick={() => void loadMore()} disabled={refreshing} title="The filter searches the loaded sessions">
            Load {formatInt(Math.min(more, SESSIONS_PAGE))} older
          </button>
        )}
        {error && data && <span className="inline-error" title={error}>refresh failed</span>}
        <span className="spacer" />
        <input
          type="search"
          className="input"
          placeholder="Filter: id, status, engine, harness, task…"
          aria-label="Filter sessions"
          value={query}
          onChange={(e) => {
            setQuery(e.target.value);
            setActiveId(null);
          }}
          onKeyDown={(e) => {
            if (e.key === 'ArrowDown' || e.key === 'Enter') {
              e.preventDefault();
              list.current?.element()?.focus();
            }
          }}
        />
        <button type="button" className="btn" onClick={() => void fetch({ quiet: true })} disabled={refreshing}>
          {refreshing ? 'Refreshing…' : 'Refresh'}
        </button>
      </div>
      {body}
    </div>
  );
}
