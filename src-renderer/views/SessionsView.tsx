// Sessions list: newest first, live-updated, sortable and filterable (`reward:0 status:failed`,
// `breaks:>0`, words), with chain breaks and masked traces per session (trace health from the server),
// keyboard navigable (↑/↓/Home/End/Enter).
import { useEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { api } from '../backend/client.js';
import type { SessionHealth, SessionSummary } from '../backend/types.js';
import { StatusBadge } from '../components/Badges.js';
import { EngineLabel } from '../components/EngineLabel.js';
import { Empty, ErrorState, Loading } from '../components/States.js';
import { VirtualRows, type VirtualRowsHandle } from '../components/VirtualRows.js';
import { formatInt, formatMs, formatReward, formatTime, shortId } from '../lib/format.js';
import { navigate } from '../lib/router.js';
import { filterRows, nextSort, sortRows, unknownFields, type Column, type Sort } from '../lib/tableQuery.js';
import { useSessions } from '../store/sessions.js';
import { SESSIONS_PAGE } from '../backend/client.js';

const ROW_H = 36;

type Row = SessionSummary & { health: SessionHealth | null };

const duration = (s: SessionSummary) => (s.finishedAt ? s.finishedAt - s.createdAt : null);

const COLUMNS: Column<Row>[] = [
  { key: 'session', label: 'Session', value: (s) => s.id },
  { key: 'status', label: 'Status', value: (s) => s.status },
  { key: 'engine', label: 'Engine', value: (s) => s.engineId },
  { key: 'harness', label: 'Harness', value: (s) => s.harness },
  { key: 'task', label: 'Task', value: (s) => s.taskId },
  { key: 'batch', label: 'Batch', value: (s) => s.batchId },
  { key: 'reward', label: 'Reward', num: true, value: (s) => s.reward },
  { key: 'turns', label: 'Turns', num: true, value: (s) => s.completionCount },
  { key: 'breaks', label: 'Breaks', num: true, value: (s) => s.health?.breaks ?? null },
  { key: 'masked', label: 'Masked', num: true, value: (s) => s.health?.masked ?? null },
  { key: 'tokens', label: 'Tokens', num: true, value: (s) => s.totalTokens ?? null },
  { key: 'created', label: 'Created', num: true, value: (s) => s.createdAt },
  { key: 'duration', label: 'Duration', num: true, value: duration },
];

/** Trace health of the loaded sessions, fetched in chunks and again when a session changes. */
function useSessionHealth(sessions: SessionSummary[] | null): Map<string, SessionHealth> {
  const [health, setHealth] = useState<Map<string, { key: string; h: SessionHealth }>>(new Map());
  const key = (s: SessionSummary) => `${s.completionCount}:${s.status}`;
  useEffect(() => {
    if (!sessions) return;
    const stale = sessions.filter((s) => health.get(s.id)?.key !== key(s));
    if (stale.length === 0) return;
    const ctrl = new AbortController();
    const t = setTimeout(async () => {
      const next = new Map(health);
      for (let i = 0; i < stale.length && !ctrl.signal.aborted; i += 200) {
        const chunk = stale.slice(i, i + 200);
        try {
          const { sessions: got } = await api.sessionHealth(chunk.map((s) => s.id), ctrl.signal);
          const by = new Map(chunk.map((s) => [s.id, s]));
          for (const h of got) next.set(h.sessionId, { key: key(by.get(h.sessionId)!), h });
        } catch {
          return; // older server or offline: the columns stay "…"
        }
      }
      if (!ctrl.signal.aborted) setHealth(next);
    }, 300);
    return () => {
      clearTimeout(t);
      ctrl.abort();
    };
  }, [sessions]);
  return useMemo(() => new Map([...health].map(([id, v]) => [id, v.h])), [health]);
}

function SessionRow({ s, active, onOpen }: { s: Row; active: boolean; onOpen: () => void }) {
  const d = duration(s);
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
      <span role="cell" className="num" data-cell="breaks" title={s.health ? Object.entries(s.health.breakReasons).map(([k, n]) => `${k} ×${n}`).join(', ') || 'no chain breaks' : undefined}>
        {s.health ? (s.health.breaks > 0 ? <span className="warn-text">{s.health.breaks}</span> : 0) : '…'}
      </span>
      <span role="cell" className="num" data-cell="masked" title={s.health ? Object.entries(s.health.maskedReasons).map(([k, n]) => `${k} ×${n}`).join(', ') || 'nothing masked' : undefined}>
        {s.health ? (s.health.masked > 0 ? <span className="warn-text">{s.health.masked}</span> : 0) : '…'}
      </span>
      <span role="cell" className="num">{formatInt(s.totalTokens)}</span>
      <span role="cell" className="nowrap">{formatTime(s.createdAt)}</span>
      <span role="cell" className="num">{d === null ? '—' : formatMs(d)}</span>
    </div>
  );
}

export function SessionsView() {
  const { data, total, loading, error, refreshing, fetch, loadMore, selectedId: activeId, select: setActiveId } = useSessions();
  const more = data && total !== null ? total - data.length : 0;
  const [query, setQuery] = useState('');
  const [sort, setSort] = useState<Sort | null>(null);
  const list = useRef<VirtualRowsHandle>(null);
  const health = useSessionHealth(data);

  useEffect(() => {
    void fetch({ quiet: data !== null });
    return useSessions.getState().watch();
  }, []);

  const all: Row[] = useMemo(() => (data ?? []).map((s) => ({ ...s, health: health.get(s.id) ?? null })), [data, health]);
  const rows = useMemo(() => sortRows(filterRows(all, COLUMNS, query), COLUMNS, sort), [all, query, sort]);
  const unknown = useMemo(() => unknownFields(COLUMNS, query), [query]);
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
          {COLUMNS.map((c) => {
            const on = sort?.key === c.key ? sort.dir : null;
            return (
              <span key={c.key} role="columnheader" className={c.num ? 'num' : ''} aria-sort={on === 'asc' ? 'ascending' : on === 'desc' ? 'descending' : 'none'} data-col={c.key}>
                <button type="button" className="th-sort" onClick={() => setSort(nextSort(sort, c.key, !!c.num))}>
                  {c.label}
                  <span className="th-arrow" aria-hidden="true">{on === 'asc' ? '▲' : on === 'desc' ? '▼' : '↕'}</span>
                </button>
              </span>
            );
          })}
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
          placeholder="Filter: reward:0 status:failed breaks:>0 or words"
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
        {['reward:0', 'status:failed', 'breaks:>0'].map((p) => (
          <button key={p} type="button" className={`btn btn-small ${query === p ? 'on' : ''}`} aria-pressed={query === p} onClick={() => { setQuery(query === p ? '' : p); setActiveId(null); }}>
            {p}
          </button>
        ))}
        {unknown.length > 0 && <span className="inline-error">unknown field {unknown.join(', ')}</span>}
        <button type="button" className="btn" onClick={() => void fetch({ quiet: true })} disabled={refreshing}>
          {refreshing ? 'Refreshing…' : 'Refresh'}
        </button>
      </div>
      {body}
    </div>
  );
}
