// Dashboard: every batch with status, progress, mean reward, pass@k and its sessions / traces /
// completions / tokens; the selected batch's tasks below; mean reward per batch as a chart. Running
// batches update live (batch events patch the rows; figures refetch, debounced).
import { useEffect, useMemo, useState } from 'react';
import { Bar, BarChart, CartesianGrid, Cell, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { BatchSummary } from '../backend/types.js';
import { StatusBadge } from '../components/Badges.js';
import { axisProps, ChartCard, tooltipProps, useChartColors } from '../components/charts.js';
import { EngineLabel } from '../components/EngineLabel.js';
import { Empty, ErrorState, Loading } from '../components/States.js';
import { ProgressBar, StatTile, useListKeys } from '../components/Widgets.js';
import { batchName, formatPct, taskStatus, topPassAtK } from '../lib/batch.js';
import { formatInt, formatReward, formatTime, shortId } from '../lib/format.js';
import { navigate, routeHref } from '../lib/router.js';
import { isActive, useBatches, type Figures } from '../store/batches.js';

const AUTO_STATS = 12;

function FigureCells({ f, truncated, sessions = true }: { f: Figures | undefined; truncated?: boolean; sessions?: boolean }) {
  const pre = truncated ? '≥' : '';
  return (
    <>
      {sessions && <td className="num">{f ? pre + formatInt(f.sessions) : '…'}</td>}
      <td className="num" title={f && f.traces === null ? 'counted once the batch has ended (large batches: on the batch page)' : undefined}>
        {f?.traces === null || f?.traces === undefined ? '…' : pre + formatInt(f.traces)}
      </td>
      <td className="num">{f ? pre + formatInt(f.completions) : '…'}</td>
      <td className="num">{f ? pre + formatInt(f.tokens) : '…'}</td>
    </>
  );
}

function RewardChart({ batches }: { batches: BatchSummary[] }) {
  const c = useChartColors();
  const engines = [...new Set(batches.map((b) => b.spec.engine ?? '?'))];
  const data = [...batches]
    .slice(0, 24)
    .reverse()
    .map((b) => ({ name: shortId(b.id.replace(/^bat_/, ''), 6), id: b.id, engine: b.spec.engine ?? '?', reward: b.meanReward ?? 0, has: b.meanReward !== null }));
  return (
    <ChartCard
      title="Mean reward per batch"
      subtitle={
        <span className="legend-inline">
          {engines.map((e, i) => (
            <span key={e} className="legend-item">
              <span className="swatch" data-color={i % c.series.length} style={{ background: c.series[i % c.series.length] }} /> {e}
            </span>
          ))}
        </span>
      }
      testId="chart-batch-rewards"
    >
      <ResponsiveContainer width="100%" height={180}>
        <BarChart data={data} margin={{ top: 8, right: 8, bottom: 0, left: -16 }}>
          <CartesianGrid stroke={c.grid} strokeDasharray="3 3" vertical={false} />
          <XAxis dataKey="name" {...axisProps(c)} interval={0} fontSize={10} />
          <YAxis domain={[0, 1]} {...axisProps(c)} />
          <Tooltip {...tooltipProps(c)} formatter={(v) => [formatReward(Number(v)), 'mean reward']} labelFormatter={(_l, p) => (p?.[0]?.payload ? `${p[0].payload.id} · ${p[0].payload.engine}` : '')} />
          <Bar dataKey="reward" isAnimationActive={false} onClick={(d) => navigate({ view: 'batch', id: (d as unknown as { id: string }).id })} cursor="pointer">
            {data.map((d) => (
              <Cell key={d.id} fill={c.series[engines.indexOf(d.engine) % c.series.length]} fillOpacity={d.has ? 0.9 : 0.25} />
            ))}
          </Bar>
        </BarChart>
      </ResponsiveContainer>
    </ChartCard>
  );
}

function TasksPanel({ batch }: { batch: BatchSummary }) {
  const entry = useBatches((s) => s.details[batch.id]);
  const stats = useBatches((s) => s.stats[batch.id]);
  const fetchDetail = useBatches((s) => s.fetchDetail);
  useEffect(() => {
    void fetchDetail(batch.id, { quiet: !!entry?.data });
  }, [batch.id]);
  const tasks = entry?.data?.tasks ?? [];
  const n = Number(batch.spec.n ?? 1);
  const open = (i: number) => tasks[i] && navigate({ view: 'batch', id: batch.id, taskId: tasks[i].taskId });
  const keys = useListKeys(tasks.length, open);
  let body;
  if (entry?.loading && !entry.data) body = <Loading label="Loading tasks…" />;
  else if (entry?.error && !entry.data) body = <ErrorState message={entry.error} onRetry={() => void fetchDetail(batch.id)} />;
  else if (tasks.length === 0) body = <Empty title="No tasks in this batch" />;
  else
    body = (
      <div className="table-wrap table-scroll" ref={keys.ref} tabIndex={0} onKeyDown={keys.onKeyDown} aria-label="Tasks; arrow keys and Enter">
        <table className="table" data-testid="tasks-table">
          <thead>
            <tr>
              <th>Task</th>
              <th>Status</th>
              <th className="num">Samples</th>
              <th className="num">Reward</th>
              <th className="num">pass@k</th>
              <th className="num">Traces</th>
              <th className="num">Turns</th>
              <th className="num">Tokens</th>
            </tr>
          </thead>
          <tbody>
            {tasks.map((t, i) => {
              const pk = topPassAtK(t.passAtK);
              return (
                <tr key={t.taskId} data-index={i} data-task-id={t.taskId} className={i === keys.index ? 'active' : ''} onClick={() => keys.setIndex(i)} onDoubleClick={() => open(i)}>
                  <td className="mono">
                    <a href={routeHref({ view: 'batch', id: batch.id, taskId: t.taskId })}>{t.taskId}</a>
                  </td>
                  <td>
                    <StatusBadge status={taskStatus(t, n)} />
                  </td>
                  <td className="num">
                    {t.samples.filter((s) => s.status !== 'active').length}/{n}
                  </td>
                  <td className="num">{formatReward(t.meanReward)}</td>
                  <td className="num">{pk ? `${formatPct(pk.v)} @${pk.k}` : '—'}</td>
                  <FigureCells f={stats?.byTask[t.taskId]} sessions={false} />
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    );
  return (
    <section className="card" aria-label="Tasks of the selected batch">
      <header className="card-head">
        <h2>
          Tasks of <span className="mono">{batchName(batch)}</span>
        </h2>
        <span className="muted">{batch.spec.dataset}</span>
        <span className="spacer" />
        <a className="btn btn-small" href={routeHref({ view: 'batch', id: batch.id })}>
          Open batch →
        </a>
      </header>
      {body}
    </section>
  );
}

export function DashboardView() {
  const { data, loading, error, fetch, stats, loadStats } = useBatches();
  const [selectedId, setSelectedId] = useState<string | null>(null);
  useEffect(() => {
    void fetch({ quiet: data !== null });
  }, []);

  const batches = data ?? [];
  // Figures for the most recent batches (sessions list per batch; traces once ended).
  const recentKey = batches.slice(0, AUTO_STATS).map((b) => `${b.id}:${isActive(b.status) ? 'a' : 'e'}`).join(',');
  useEffect(() => {
    for (const b of batches.slice(0, AUTO_STATS)) {
      const s = stats[b.id];
      if (!s || (s.tracesState === 'idle' && !isActive(b.status))) void loadStats(b.id);
    }
  }, [recentKey]);

  const openBatch = (i: number) => batches[i] && navigate({ view: 'batch', id: batches[i].id });
  const initial = Math.max(0, batches.findIndex((b) => b.id === selectedId));
  const keys = useListKeys(batches.length, openBatch, initial);
  const selected = batches[keys.index] ?? null;
  useEffect(() => {
    if (selected && selected.id !== selectedId) {
      setSelectedId(selected.id);
      if (!stats[selected.id]) void loadStats(selected.id);
    }
  }, [selected?.id]);

  const totals = useMemo(() => {
    const running = batches.filter((b) => isActive(b.status)).length;
    const samples = batches.reduce((n, b) => n + (b.counts?.done ?? 0), 0);
    const ended = batches.filter((b) => !isActive(b.status) && b.meanReward !== null);
    const mean = ended.length ? ended.reduce((n, b) => n + (b.meanReward ?? 0), 0) / ended.length : null;
    return { running, samples, mean };
  }, [batches]);

  let body;
  if (loading && !data) body = <Loading label="Loading batches…" />;
  else if (error && !data) body = <ErrorState message={error} onRetry={() => void fetch()} />;
  else if (batches.length === 0)
    body = (
      <Empty title="No batches yet">
        <a href="#/launch">Launch a batch</a> (dataset × harness × engine × samples), or from a terminal run{' '}
        <code>rollgate eval --dataset demo:calculator --harness builtin</code>. Batches appear here live.
      </Empty>
    );
  else
    body = (
      <>
        <div className="tiles">
          <StatTile label="Batches" value={formatInt(batches.length)} hint={`${formatInt(totals.running)} running`} tone={totals.running ? 'info' : undefined} />
          <StatTile label="Samples done" value={formatInt(totals.samples)} />
          <StatTile label="Mean reward (ended batches)" value={formatReward(totals.mean)} />
          <StatTile label="Latest batch" value={<StatusBadge status={batches[0].status} />} hint={formatTime(batches[0].createdAt)} />
        </div>
        <section className="card" aria-label="Batches">
          <header className="card-head">
            <h2>Batches</h2>
            <span className="muted">↑/↓ to select, Enter to open</span>
          </header>
          <div className="table-wrap table-scroll" ref={keys.ref} tabIndex={0} onKeyDown={keys.onKeyDown} aria-label="Batches list; arrow keys and Enter" data-testid="batches-table">
            <table className="table table-compact">
              <thead>
                <tr>
                  <th>Batch</th>
                  <th>Status</th>
                  <th>Dataset · harness</th>
                  <th>Engine</th>
                  <th>Progress</th>
                  <th className="num">Reward</th>
                  <th className="num">pass@k</th>
                  <th className="num">Sessions</th>
                  <th className="num">Traces</th>
                  <th className="num">Turns</th>
                  <th className="num">Tokens</th>
                </tr>
              </thead>
              <tbody>
                {batches.map((b, i) => {
                  const pk = topPassAtK(b.passAtK);
                  const st = stats[b.id];
                  return (
                    <tr
                      key={b.id}
                      data-index={i}
                      data-batch-id={b.id}
                      className={i === keys.index ? 'active' : ''}
                      onClick={() => keys.setIndex(i)}
                      onDoubleClick={() => openBatch(i)}
                    >
                      <td className="mono ellipsis cell-batch" title={`${b.id} · created ${formatTime(b.createdAt)}`}>
                        <a href={routeHref({ view: 'batch', id: b.id })}>{batchName(b)}</a>
                      </td>
                      <td>
                        <StatusBadge status={b.status} />
                      </td>
                      <td className="ellipsis" title={`${b.spec.dataset ?? '?'} · ${b.spec.harness ?? '?'} · n=${b.spec.n ?? 1}`}>
                        {b.spec.dataset ?? '—'} <span className="muted">· {b.spec.harness ?? '—'} ×{b.spec.n ?? 1}</span>
                      </td>
                      <td>
                        <EngineLabel id={b.spec.engine} />
                      </td>
                      <td className="cell-progress">{b.counts && <ProgressBar counts={b.counts} />}</td>
                      <td className="num">{formatReward(b.meanReward)}</td>
                      <td className="num">{pk ? `${formatPct(pk.v)} @${pk.k}` : '—'}</td>
                      <FigureCells f={st && !st.error ? st : undefined} truncated={st?.truncated} />
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        </section>
        <div className="grid-2">
          {selected && <TasksPanel key={selected.id} batch={selected} />}
          <RewardChart batches={batches} />
        </div>
      </>
    );

  return (
    <div className="view">
      <div className="view-head">
        <h1>Dashboard</h1>
        {error && data && <span className="inline-error" title={error}>refresh failed</span>}
        <span className="spacer" />
        <a className="btn" href="#/launch">
          ▶ Launch a batch
        </a>
      </div>
      {body}
    </div>
  );
}
