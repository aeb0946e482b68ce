// Dashboard: every batch with status, progress, mean reward, pass@k, trace health (break rate, masked
// traces, with reasons) and its traces / turns / tokens, all computed on the server; the selected batch's
// tasks below (worst first: one click to a failing task's sessions and evaluator output); mean reward per
// batch, coloured by engine. Running batches update live from events.
import { useEffect, useMemo, useState } from 'react';
import { Bar, BarChart, CartesianGrid, Cell, ErrorBar, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { BatchHealth, BatchSummary, TaskResult } from '../backend/types.js';
import { StatusBadge } from '../components/Badges.js';
import { axisProps, ChartCard, EngineLegend, tooltipProps, useChartColors, useEngineColor } from '../components/charts.js';
import { EngineLabel } from '../components/EngineLabel.js';
import { Empty, ErrorState, Loading } from '../components/States.js';
import { SortTh, TableFilter, useTable } from '../components/TableControls.js';
import { ProgressBar, StatTile, useListKeys } from '../components/Widgets.js';
import { batchName, formatPct, taskStatus, topPassAtK } from '../lib/batch.js';
import { formatInt, formatReward, formatTime } from '../lib/format.js';
import { navigate, routeHref } from '../lib/router.js';
import type { Column } from '../lib/tableQuery.js';
import { isActive, useBatches, type HealthEntry } from '../store/batches.js';
import { CaptureHealthCard } from './CaptureHealthCard.js';

/** Trace health is fetched for this many of the newest batches (the rest on their own page). */
const AUTO_HEALTH = 24;

const tokensOf = (b: { usage?: { promptTokens: number; outputTokens: number } }) => (b.usage ? b.usage.promptTokens + b.usage.outputTokens : null);

function reasonsText(r: Record<string, number> | undefined): string {
  const e = Object.entries(r ?? {}).sort((a, b) => b[1] - a[1]);
  return e.length ? e.map(([k, n]) => `${k} ×${n}`).join(', ') : 'none';
}

/** Break rate (sessions with a chain break) and masked fraction of one batch, with their reasons. */
export function HealthCells({ h, batchId, taskId }: { h: HealthEntry | undefined; batchId: string; taskId?: string }) {
  const d = h?.data;
  if (!d) {
    const t = h?.missing ? 'this server has no trace-health route' : h?.error ?? 'counting…';
    return (
      <>
        <td className="num muted" title={t}>{h?.error ? '?' : '…'}</td>
        <td className="num muted" title={t}>{h?.error ? '?' : '…'}</td>
      </>
    );
  }
  const masked = d.maskedFraction;
  return (
    <>
      <td className="num" data-cell="breaks" title={`${d.sessionsWithBreaks} of ${d.sessions} sessions have a chain break (${d.breaks} breaks: ${reasonsText(d.breakReasons)})`}>
        {d.breaks > 0 ? (
          <a href={routeHref({ view: 'batch', id: batchId, taskId, q: 'breaks:>0' })} className={d.breakRate && d.breakRate > 0.2 ? 'warn-text' : ''}>
            {formatPct(d.breakRate)}
          </a>
        ) : (
          formatPct(d.breakRate)
        )}
      </td>
      <td className="num" data-cell="masked" title={`${d.masked} of ${d.traces} traces masked out of training: ${reasonsText(d.maskedReasons)}`}>
        <span className={d.masked > 0 ? 'warn-text' : ''}>{formatPct(masked)}</span>
      </td>
    </>
  );
}

function RewardChart({ batches, health }: { batches: BatchSummary[]; health: Record<string, HealthEntry> }) {
  const c = useChartColors();
  const color = useEngineColor();
  const data = [...batches]
    .slice(0, 16)
    .reverse()
    .map((b) => {
      const r = health[b.id]?.data?.reward;
      const err = r?.stderr != null ? 1.96 * r.stderr : 0;
      return { name: batchName(b), id: b.id, engine: b.spec.engine ?? '?', dataset: b.spec.dataset ?? '?', reward: b.meanReward ?? 0, has: b.meanReward !== null, err, n: r?.scored };
    });
  const datasets = new Set(data.map((d) => d.dataset));
  return (
    <ChartCard title="Mean reward per batch" subtitle={<EngineLegend engines={data.map((d) => d.engine)} />} testId="chart-batch-rewards">
      <div className="muted chart-note">95% error bars{datasets.size > 1 ? ` · ${datasets.size} datasets, each bar its own batch: never averaged together` : ''}</div>
      <ResponsiveContainer width="100%" height={230}>
        <BarChart data={data} margin={{ top: 8, right: 8, bottom: 0, left: -8 }}>
          <CartesianGrid stroke={c.grid} strokeDasharray="3 3" vertical={false} />
          <XAxis dataKey="name" {...axisProps(c)} interval={0} fontSize={10} angle={-25} textAnchor="end" height={64} tickFormatter={(v: string) => (v.length > 18 ? `${v.slice(0, 17)}…` : v)} />
          <YAxis domain={[0, 1]} allowDataOverflow ticks={[0, 0.25, 0.5, 0.75, 1]} {...axisProps(c)} />
          <Tooltip
            {...tooltipProps(c)}
            allowEscapeViewBox={{ x: false, y: false }}
            formatter={(v, _n, p) => {
              const d = p.payload as { err: number; n?: number };
              return [`${formatReward(Number(v))}${d.err ? ` ± ${d.err.toFixed(3)} (95%)` : ''}${d.n ? ` · ${d.n} samples` : ''}`, 'mean reward'];
            }}
            labelFormatter={(_l, p) => (p?.[0]?.payload ? `${p[0].payload.name} · ${p[0].payload.dataset} · ${p[0].payload.engine}` : '')}
          />
          <Bar dataKey="reward" isAnimationActive={false} onClick={(d) => navigate({ view: 'batch', id: (d as unknown as { id: string }).id })} cursor="pointer">
            {data.map((d) => (
              <Cell key={d.id} fill={color(d.engine)} fillOpacity={d.has ? 0.9 : 0.25} />
            ))}
            <ErrorBar dataKey="err" width={4} stroke={c.fg} strokeWidth={1} />
          </Bar>
        </BarChart>
      </ResponsiveContainer>
    </ChartCard>
  );
}

type TaskRow = TaskResult & { status: string; done: number; traces: number | null; breaks: number | null; turns: number | null; tokens: number | null; pass: number | null };

const TASK_COLUMNS: Column<TaskRow>[] = [
  { key: 'task', label: 'Task', value: (t) => t.taskId },
  { key: 'status', label: 'Status', value: (t) => t.status },
  { key: 'samples', label: 'Samples', num: true, value: (t) => t.done },
  { key: 'reward', label: 'Reward', num: true, value: (t) => t.meanReward },
  { key: 'pass', label: 'pass@k', num: true, value: (t) => t.pass },
  { key: 'breaks', label: 'Breaks', num: true, value: (t) => t.breaks },
  { key: 'tokens', label: 'Tokens', num: true, value: (t) => t.tokens },
];

function TasksPanel({ batch }: { batch: BatchSummary }) {
  const entry = useBatches((s) => s.details[batch.id]);
  const health = useBatches((s) => s.health[batch.id]);
  const fetchDetail = useBatches((s) => s.fetchDetail);
  useEffect(() => {
    void fetchDetail(batch.id, { quiet: !!entry?.data });
  }, [batch.id]);
  const n = Number(batch.spec.n ?? 1);
  const rows: TaskRow[] = useMemo(
    () =>
      (entry?.data?.tasks ?? []).map((t) => {
        const h = health?.data?.byTask[t.taskId];
        const pk = topPassAtK(t.passAtK);
        return {
          ...t, status: taskStatus(t, n), done: t.samples.filter((s) => s.status !== 'active').length, traces: h?.traces ?? null, breaks: h?.breaks ?? null,
          turns: t.usage?.completions ?? null, tokens: t.usage ? t.usage.promptTokens + t.usage.outputTokens : null, pass: pk?.v ?? null,
        };
      }),
    [entry?.data?.tasks, health?.data, n],
  );
  // Worst first: the task to look at is on top.
  const table = useTable(rows, TASK_COLUMNS, { sort: { key: 'reward', dir: 'asc' } });
  const open = (i: number) => table.rows[i] && navigate({ view: 'batch', id: batch.id, taskId: table.rows[i].taskId });
  const keys = useListKeys(table.rows.length, open);
  let body;
  if (entry?.loading && !entry.data) body = <Loading label="Loading tasks…" />;
  else if (entry?.error && !entry.data) body = <ErrorState message={entry.error} onRetry={() => void fetchDetail(batch.id)} />;
  else if (rows.length === 0) body = <Empty title="No tasks in this batch" />;
  else
    body = (
      <>
        <TableFilter table={table} columns={TASK_COLUMNS} presets={['reward:0', 'status:failed']} label="Filter tasks" total={rows.length} />
        <div className="table-wrap table-scroll" ref={keys.ref} tabIndex={0} onKeyDown={keys.onKeyDown} aria-label="Tasks; arrow keys and Enter">
          <table className="table" data-testid="tasks-table">
            <thead>
              <tr>
                {TASK_COLUMNS.map((c) => <SortTh key={c.key} col={c} table={table} />)}
              </tr>
            </thead>
            <tbody>
              {table.rows.map((t, i) => (
                <tr key={t.taskId} data-index={i} data-task-id={t.taskId} className={i === keys.index ? 'active' : ''} onClick={() => keys.setIndex(i)} onDoubleClick={() => open(i)}>
                  <td className="mono">
                    <a href={routeHref({ view: 'batch', id: batch.id, taskId: t.taskId })}>{t.taskId}</a>
                  </td>
                  <td>
                    <StatusBadge status={t.status} />
                  </td>
                  <td className="num">{t.done}/{n}</td>
                  <td className="num">{formatReward(t.meanReward)}</td>
                  <td className="num">{t.pass === null ? '—' : `${formatPct(t.pass)} @${topPassAtK(t.passAtK)?.k}`}</td>
                  <td className="num" title={`${formatInt(t.breaks)} chain breaks in ${formatInt(t.traces)} traces`}>{formatInt(t.breaks)}</td>
                  <td className="num" title={`${formatInt(t.turns)} turns`}>{formatInt(t.tokens)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </>
    );
  return (
    <section className="card" aria-label="Tasks of the selected batch">
      <header className="card-head">
        <h2>
          Tasks of <span className="mono">{batchName(batch)}</span>
        </h2>
        <span className="muted">{batch.spec.dataset} · worst first</span>
        <span className="spacer" />
        <a className="btn btn-small" href={routeHref({ view: 'batch', id: batch.id })}>
          Open batch →
        </a>
      </header>
      {body}
    </section>
  );
}

type BatchRow = BatchSummary & { name: string; health: BatchHealth | null };

const BATCH_COLUMNS: Column<BatchRow>[] = [
  { key: 'batch', label: 'Batch', value: (b) => b.name },
  { key: 'status', label: 'Status', value: (b) => b.status },
  { key: 'dataset', label: 'Dataset · harness', value: (b) => `${b.spec.dataset ?? ''} ${b.spec.harness ?? ''}` },
  { key: 'engine', label: 'Engine', value: (b) => b.spec.engine ?? null },
  { key: 'done', label: 'Progress', num: true, value: (b) => b.counts?.done ?? null },
  { key: 'reward', label: 'Reward', num: true, value: (b) => b.meanReward },
  { key: 'pass', label: 'pass@k', num: true, value: (b) => topPassAtK(b.passAtK)?.v ?? null },
  { key: 'breaks', label: 'Breaks', num: true, value: (b) => b.health?.breakRate ?? null },
  { key: 'masked', label: 'Masked', num: true, value: (b) => b.health?.maskedFraction ?? null },
  { key: 'traces', label: 'Traces', num: true, value: (b) => b.health?.traces ?? null },
  { key: 'tokens', label: 'Tokens', num: true, value: (b) => tokensOf(b) },
];

export function DashboardView() {
  const { data, loading, error, fetch, health, loadHealth } = useBatches();
  const [selectedId, setSelectedId] = useState<string | null>(null);
  useEffect(() => {
    void fetch({ quiet: data !== null });
  }, []);

  const batches = data ?? [];
  // Trace health of the newest batches, computed on the server (ended batches once; running ones as they go).
  const recentKey = batches.slice(0, AUTO_HEALTH).map((b) => `${b.id}:${isActive(b.status) ? 'a' : 'e'}`).join(',');
  useEffect(() => {
    for (const b of batches.slice(0, AUTO_HEALTH)) void loadHealth(b.id);
  }, [recentKey]);

  const rows: BatchRow[] = useMemo(() => batches.map((b) => ({ ...b, name: batchName(b), health: health[b.id]?.data ?? null })), [batches, health]);
  const table = useTable(rows, BATCH_COLUMNS);
  const shown = table.rows;
  const openBatch = (i: number) => shown[i] && navigate({ view: 'batch', id: shown[i].id });
  const initial = Math.max(0, shown.findIndex((b) => b.id === selectedId));
  const keys = useListKeys(shown.length, openBatch, initial);
  const selected = shown[keys.index] ?? null;
  useEffect(() => {
    if (selected && selected.id !== selectedId) setSelectedId(selected.id);
  }, [selected?.id]);

  const totals = useMemo(() => {
    const running = batches.filter((b) => isActive(b.status)).length;
    const samples = batches.reduce((n, b) => n + (b.counts?.done ?? 0), 0);
    const tokens = batches.reduce((n, b) => n + (tokensOf(b) ?? 0), 0);
    const datasets = new Set(batches.map((b) => b.spec.dataset ?? '?')).size;
    return { running, samples, tokens, datasets };
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
          <StatTile label="Batches" value={formatInt(batches.length)} hint={`${formatInt(totals.running)} running · ${totals.datasets} dataset${totals.datasets === 1 ? '' : 's'}`} tone={totals.running ? 'info' : undefined} />
          <StatTile label="Samples done" value={formatInt(totals.samples)} />
          <StatTile label="Tokens recorded" value={formatInt(totals.tokens)} />
          <StatTile label="Latest batch" value={<StatusBadge status={batches[0].status} />} hint={`${batchName(batches[0])} · ${formatTime(batches[0].createdAt)}`} />
        </div>
        <section className="card" aria-label="Batches">
          <header className="card-head">
            <h2>Batches</h2>
            <span className="muted">↑/↓ to select, Enter to open · click a header to sort</span>
            <span className="spacer" />
            <TableFilter table={table} columns={BATCH_COLUMNS} presets={['status:running', 'breaks:>0']} label="Filter batches" total={rows.length} />
          </header>
          <div className="table-wrap table-scroll" ref={keys.ref} tabIndex={0} onKeyDown={keys.onKeyDown} aria-label="Batches list; arrow keys and Enter" data-testid="batches-table">
            <table className="table table-compact">
              <thead>
                <tr>
                  {BATCH_COLUMNS.map((c) => <SortTh key={c.key} col={c} table={table} />)}
                </tr>
              </thead>
              <tbody>
                {shown.map((b, i) => {
                  const pk = topPassAtK(b.passAtK);
                  return (
                    <tr key={b.id} data-index={i} data-batch-id={b.id} className={i === keys.index ? 'active' : ''} onClick={() => keys.setIndex(i)} onDoubleClick={() => openBatch(i)}>
                      <td className="ellipsis cell-batch" title={`${b.id} · created ${formatTime(b.createdAt)}`}>
                        <a href={routeHref({ view: 'batch', id: b.id })}>{b.name}</a>
                        <div className="muted cell-sub">{formatTime(b.createdAt)}</div>
                      </td>
                      <td>
                        <StatusBadge status={b.status} />
                      </td>
                      <td className="ellipsis cell-dataset" title={`${b.spec.dataset ?? '?'} · ${b.spec.harness ?? '?'} · n=${b.spec.n ?? 1}`}>
                        {b.spec.dataset ?? '—'} <span className="muted">· {b.spec.harness ?? '—'} ×{b.spec.n ?? 1}</span>
                      </td>
                      <td>
                        <EngineLabel id={b.spec.engine} />
                      </td>
                      <td className="cell-progress">{b.counts && <ProgressBar counts={b.counts} />}</td>
                      <td className="num">{formatReward(b.meanReward)}</td>
                      <td className="num">{pk ? `${formatPct(pk.v)} @${pk.k}` : '—'}</td>
                      <HealthCells h={health[b.id]} batchId={b.id} />
                      <td className="num" title={`${formatInt(b.usage?.completions)} turns`}>{formatInt(b.health?.traces)}</td>
                      <td className="num">{formatInt(tokensOf(b))}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        </section>
        <div className="grid-dash">
          {selected && <TasksPanel key={selected.id} batch={selected} />}
          <RewardChart batches={batches} health={health} />
        </div>
        <CaptureHealthCard version={`${batches.length}:${totals.running}:${batches.filter((b) => !isActive(b.status)).length}`} />
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
