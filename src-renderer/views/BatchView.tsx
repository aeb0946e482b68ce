// Batch / task detail: progress (live, from events: only the changed sessions are fetched), figures and
// trace health computed on the server, reward distribution per task, mean reward over time or policy
// version with error bars, pass@k, and the sessions (samples): sortable, filterable (`reward:0`,
// `status:failed`, `breaks:>0`), each with its evaluator's verdict and output inline. With a task
// selected (#/batches/<id>/tasks/<taskId>) the charts and the session list narrow to that task.
import { memo, useDeferredValue, useEffect, useMemo, useRef, useState } from 'react';
import {
  Bar,
  BarChart,
  CartesianGrid,
  Cell,
  Legend,
  Line,
  LineChart,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from 'recharts';
import { api } from '../backend/client.js';
import type { BatchDetail, SampleResult, Verdict } from '../backend/types.js';
import { StatusBadge } from '../components/Badges.js';
import { axisProps, ChartCard, tooltipProps, useChartColors } from '../components/charts.js';
import { EngineLabel } from '../components/EngineLabel.js';
import { Empty, ErrorState, Loading } from '../components/States.js';
import { SortTh, TableFilter, useTable } from '../components/TableControls.js';
import { ProgressBar, StatTile, useListKeys } from '../components/Widgets.js';
import { batchName, formatPct, taskStatus, topPassAtK } from '../lib/batch.js';
import { formatInt, formatMs, formatReward, formatTime } from '../lib/format.js';
import { navigate, routeHref } from '../lib/router.js';
import { bucketColor, rewardDistribution } from '../lib/rewards.js';
import type { Column } from '../lib/tableQuery.js';
import { isActive, useBatches } from '../store/batches.js';
import { useEngines } from '../store/engines.js';
import { errorText } from '../store/resource.js';
import { MeanRewardChart } from './MeanRewardChart.js';
import { CaptureHealthCard } from './CaptureHealthCard.js';
import { TraceHealthCard } from './TraceHealthCard.js';

// Charts redraw only when what they show changes (not on every progress event of a running batch).
const sameTasks = (p: { batch: BatchDetail; taskId?: string }, n: { batch: BatchDetail; taskId?: string }) =>
  p.batch.id === n.batch.id && p.batch.tasks === n.batch.tasks && p.batch.passAtK === n.batch.passAtK && p.taskId === n.taskId;

const DistributionChart = memo(function DistributionChart({ batch, taskId }: { batch: BatchDetail; taskId?: string }) {
  const c = useChartColors();
  const { buckets, rows } = useMemo(() => rewardDistribution(batch.tasks), [batch.tasks]);
  if (buckets.length === 0) {
    return (
      <ChartCard title="Reward distribution per task" testId="chart-distribution">
        <Empty title="No rewards yet">Rewards appear as samples finish.</Empty>
      </ChartCard>
    );
  }
  const many = rows.length > 12;
  return (
    <ChartCard title="Reward distribution per task" subtitle="samples per reward value, stacked" testId="chart-distribution">
      <ResponsiveContainer width="100%" height={many ? 280 : 240}>
        <BarChart data={rows} margin={{ top: 8, right: 8, bottom: many ? 40 : 4, left: -16 }}>
          <CartesianGrid stroke={c.grid} strokeDasharray="3 3" vertical={false} />
          <XAxis dataKey="taskId" {...axisProps(c)} interval={0} angle={many ? -35 : 0} textAnchor={many ? 'end' : 'middle'} height={many ? 60 : 24} fontSize={10} />
          <YAxis allowDecimals={false} {...axisProps(c)} />
          <Tooltip {...tooltipProps(c)} />
          <Legend wrapperStyle={{ fontSize: 11, color: c.muted }} />
          {buckets.map((b) => (
            <Bar
              key={b.key}
              dataKey={b.key}
              name={b.label}
              stackId="r"
              fill={bucketColor(b.pos, c)}
              isAnimationActive={false}
              cursor="pointer"
              onClick={(d) => navigate({ view: 'batch', id: batch.id, taskId: (d as unknown as { taskId: string }).taskId })}
            >
              {rows.map((r) => (
                <Cell key={r.taskId} fillOpacity={!taskId || r.taskId === taskId ? 0.9 : 0.25} />
              ))}
            </Bar>
          ))}
          {rows.some((r) => r.pending > 0) && <Bar dataKey="pending" name="pending / unscored" stackId="r" fill={c.muted} fillOpacity={0.3} isAnimationActive={false} />}
        </BarChart>
      </ResponsiveContainer>
    </ChartCard>
  );
}, sameTasks);

const PassAtKChart = memo(function PassAtKChart({ batch, taskId }: { batch: BatchDetail; taskId?: string }) {
  const c = useChartColors();
  const task = taskId ? batch.tasks.find((t) => t.taskId === taskId) : undefined;
  const ks = [...new Set([...Object.keys(batch.passAtK ?? {}), ...Object.keys(task?.passAtK ?? {})].map(Number))].sort((a, b) => a - b);
  const data = ks.map((k) => ({ k: `k=${k}`, batch: batch.passAtK?.[k] ?? null, task: task?.passAtK?.[k] ?? null }));
  return (
    <ChartCard title="pass@k" subtitle={`unbiased estimator, pass = reward ≥ 1${task ? `; task ${task.taskId} vs batch` : ''}`} testId="chart-passk">
      {data.length === 0 ? (
        <Empty title="No scored samples yet" />
      ) : (
        <ResponsiveContainer width="100%" height={240}>
          <LineChart data={data} margin={{ top: 8, right: 16, bottom: 4, left: -16 }}>
            <CartesianGrid stroke={c.grid} strokeDasharray="3 3" />
            <XAxis dataKey="k" {...axisProps(c)} />
            <YAxis domain={[0, 1]} {...axisProps(c)} tickFormatter={(v) => `${Math.round(Number(v) * 100)}%`} />
            <Tooltip {...tooltipProps(c)} formatter={(v, n) => [formatPct(Number(v)), String(n)]} />
            <Legend wrapperStyle={{ fontSize: 11, color: c.muted }} />
            <Line dataKey="batch" name="batch" stroke={c.accent} strokeWidth={2} dot={{ r: 3 }} isAnimationActive={false} connectNulls />
            {task && <Line dataKey="task" name={task.taskId} stroke={c.warn} strokeWidth={2} dot={{ r: 3 }} isAnimationActive={false} connectNulls />}
          </LineChart>
        </ResponsiveContainer>
      )}
    </ChartCard>
  );
}, sameTasks);

interface Row extends SampleResult {
  taskId: string;
  verdict: Verdict | null;
  breaks: number | null;
  masked: number | null;
}

const SESSION_COLUMNS: Column<Row>[] = [
  { key: 'session', label: 'Session', value: (r) => r.sessionId },
  { key: 'task', label: 'Task', value: (r) => r.taskId },
  { key: 'sample', label: 'Sample', num: true, value: (r) => r.sampleIndex + 1 },
  { key: 'status', label: 'Status', value: (r) => r.status },
  { key: 'reward', label: 'Reward', num: true, value: (r) => r.reward },
  { key: 'verdict', label: 'Evaluator verdict', value: (r) => verdictText(r) },
  { key: 'turns', label: 'Turns', num: true, value: (r) => r.completionCount },
  { key: 'breaks', label: 'Breaks', num: true, value: (r) => r.breaks },
  { key: 'masked', label: 'Masked', num: true, value: (r) => r.masked },
  { key: 'duration', label: 'Duration', num: true, value: (r) => r.durationMs },
];

/** One line saying what the evaluator decided and why; "ok" only ever describes the agent's exit. */
function verdictText(r: Row): string {
  const v = r.verdict;
  if (r.status === 'active') return 'running';
  const pass = r.reward === null ? 'unscored' : r.reward >= 1 ? 'pass' : r.reward <= 0 ? 'fail' : 'partial';
  const parts = [v?.evaluator ? `${v.evaluator}: ${pass}` : pass];
  if (v?.error ?? r.error) parts.push(String(v?.error ?? r.error));
  else if (v?.output) parts.push(v.output);
  if (r.outcome && r.outcome !== 'ok') parts.push(`agent ${r.outcome}`);
  return parts.join(' · ');
}

const SessionRow = memo(function SessionRow({ r, i, active, onSelect }: { r: Row; i: number; active: boolean; onSelect: (i: number) => void }) {
  const v = r.verdict;
  const fail = r.reward !== null && r.reward <= 0;
  return (
    <tr data-index={i} data-session-id={r.sessionId} className={active ? 'active' : ''} onClick={() => onSelect(i)} onDoubleClick={() => navigate({ view: 'session', id: r.sessionId })}>
      <td className="mono">
        <a href={routeHref({ view: 'session', id: r.sessionId })}>{r.sessionId}</a>
      </td>
      <td className="mono">{r.taskId}</td>
      <td className="num">{r.sampleIndex + 1}</td>
      <td>
        <StatusBadge status={r.status} />
      </td>
      <td className={`num ${fail ? 'neg' : ''}`}>{formatReward(r.reward)}</td>
      <td className={`verdict-cell ${fail || r.status === 'failed' ? 'verdict-fail' : ''}`} data-cell="verdict" title={[v?.output, v?.finalAnswer ? `final answer: ${v.finalAnswer}` : null].filter(Boolean).join('\n') || undefined}>
        {verdictText(r)}
      </td>
      <td className="num">{formatInt(r.completionCount)}</td>
      <td className="num">{r.breaks === null ? '…' : r.breaks > 0 ? <span className="warn-text">{r.breaks}</span> : 0}</td>
      <td className="num">{r.masked === null ? '…' : r.masked > 0 ? <span className="warn-text">{r.masked}</span> : 0}</td>
      <td className="num">{formatMs(r.durationMs)}</td>
    </tr>
  );
});

function SessionsTable({ rows, query, onQuery }: { rows: Row[]; query: string; onQuery: (q: string) => void }) {
  const table = useTable(rows, SESSION_COLUMNS, { query });
  // The filter is part of the URL (links such as "sessions with breaks" open it set).
  useEffect(() => {
    if (table.query !== query) table.setQuery(query);
  }, [query]);
  const setQuery = (q: string) => {
    table.setQuery(q);
    onQuery(q);
  };
  const open = (i: number) => table.rows[i] && navigate({ view: 'session', id: table.rows[i].sessionId });
  const keys = useListKeys(table.rows.length, open);
  if (rows.length === 0) return <Empty title="No sessions yet">Sessions appear as samples start.</Empty>;
  return (
    <>
      <TableFilter table={{ ...table, setQuery }} columns={SESSION_COLUMNS} presets={['reward:0', 'status:failed', 'breaks:>0']} label="Filter sessions" total={rows.length} />
      <div className="table-wrap table-scroll table-tall" ref={keys.ref} tabIndex={0} onKeyDown={keys.onKeyDown} aria-label="Sessions; arrow keys and Enter to open" data-testid="batch-sessions">
        <table className="table">
          <thead>
            <tr>
              {SESSION_COLUMNS.map((c) => <SortTh key={c.key} col={c} table={table} />)}
            </tr>
          </thead>
          <tbody>
            {table.rows.map((r, i) => (
              <SessionRow key={r.sessionId} r={r} i={i} active={i === keys.index} onSelect={keys.setIndex} />
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

/** The evaluator verdicts of a batch: fetched when it has ended, and every few seconds while it runs. */
function useVerdicts(id: string, status: string | undefined, done: number) {
  const [verdicts, setVerdicts] = useState<Record<string, Verdict>>({});
  const bucket = isActive(status) ? Math.floor(done / 16) : -1;
  useEffect(() => {
    const ctrl = new AbortController();
    const t = setTimeout(() => {
      api.verdicts(id, ctrl.signal).then(
        // Unchanged verdicts keep their objects: their rows are not drawn again.
        (r) => setVerdicts((old) => {
          const next: Record<string, Verdict> = {};
          for (const [k, v] of Object.entries(r.verdicts)) next[k] = old[k] && JSON.stringify(old[k]) === JSON.stringify(v) ? old[k] : v;
          return next;
        }),
        () => undefined,
      );
    }, isActive(status) ? 1500 : 0);
    return () => {
      clearTimeout(t);
      ctrl.abort();
    };
  }, [id, bucket, isActive(status)]);
  return verdicts;
}

/** A running batch whose engine calls are held by a pause says so instead of looking stuck. */
function PauseBanner({ engine }: { engine: string | undefined }) {
  const pause = useEngines((s) => s.pause);
  const engines = useEngines((s) => s.data);
  const e = engines?.find((x) => x.id === engine);
  if (!pause?.mode && !e?.paused) return null;
  return (
    <div className="banner banner-warn" role="status" data-testid="held-by-pause">
      Held by a pause{pause?.mode ? ` (${pause.mode})` : ''}{pause?.since ? ` since ${formatTime(pause.since)}` : ''}: {formatInt(e?.queued ?? pause?.queued ?? 0)} engine call(s) queued.
      Samples continue when the engines are resumed (<a href={routeHref({ view: 'topology' })}>Topology</a>).
    </div>
  );
}

export function BatchView({ id, taskId, q }: { id: string; taskId?: string; q?: string }) {
  const entry = useBatches((s) => s.details[id]);
  const health = useBatches((s) => s.health[id]);
  const phase = useBatches((s) => s.phases[id]);
  const { fetchDetail, loadHealth, fetch: fetchList, data: list } = useBatches();
  const [cancelError, setCancelError] = useState<string | null>(null);
  const [cancelling, setCancelling] = useState(false);

  useEffect(() => {
    void fetchDetail(id, { quiet: !!entry?.data });
    void loadHealth(id, { force: true });
    if (!list) void fetchList({ quiet: true });
  }, [id]);

  // Live patches are drawn as an interruptible (deferred) render: with 512 rows and three charts the
  // main thread keeps answering input between slices instead of blocking for one long task.
  const batch = useDeferredValue(entry?.data ?? null);
  const verdicts = useVerdicts(id, batch?.status, batch?.counts.done ?? 0);
  const bySession = useDeferredValue(health?.data?.bySession);
  // Row objects stay the same while their sample, verdict and figures do, so a live patch re-renders
  // only the rows of the sessions that changed (512-sample batches stay smooth).
  const cache = useRef(new Map<string, Row>());
  const rows: Row[] = useMemo(() => {
    if (!batch) return [];
    const out: Row[] = [];
    const next = new Map<string, Row>();
    for (const t of batch.tasks) {
      if (taskId && t.taskId !== taskId) continue;
      for (const s of t.samples) {
        const h = bySession?.[s.sessionId];
        const verdict = verdicts[s.sessionId] ?? null;
        const breaks = h?.breaks ?? null;
        const masked = h?.masked ?? null;
        const prev = cache.current.get(s.sessionId);
        const row = prev && prev.sampleIndex === s.sampleIndex && prev.status === s.status && prev.reward === s.reward && prev.completionCount === s.completionCount
          && prev.durationMs === s.durationMs && prev.error === s.error && prev.outcome === s.outcome && prev.verdict === verdict && prev.breaks === breaks && prev.masked === masked
          ? prev
          : { ...s, taskId: t.taskId, verdict, breaks, masked };
        next.set(s.sessionId, row);
        out.push(row);
      }
    }
    cache.current = next;
    return out;
  }, [batch?.tasks, taskId, verdicts, bySession]);

  if (entry?.loading && !batch) return <div className="view"><Loading label="Loading batch…" /></div>;
  if (!batch)
    return (
      <div className="view">
        <a className="back" href="#/">← Dashboard</a>
        {entry?.error ? <ErrorState message={entry.error} onRetry={() => void fetchDetail(id)} /> : <Loading label="Loading batch…" />}
      </div>
    );

  const task = taskId ? batch.tasks.find((t) => t.taskId === taskId) : undefined;
  const n = Number(batch.spec.n ?? 1);
  const pk1 = batch.passAtK?.['1'];
  const pkTop = topPassAtK(batch.passAtK);
  const duration = batch.startedAt ? (batch.finishedAt ?? Date.now()) - batch.startedAt : null;
  const cancel = async () => {
    setCancelling(true);
    setCancelError(null);
    try {
      await api.cancelBatch(batch.id);
      await fetchDetail(batch.id, { quiet: true });
    } catch (err) {
      setCancelError(errorText(err));
    } finally {
      setCancelling(false);
    }
  };
  const h = health?.data;
  // Summed over the tasks, which live patches keep current (the batch's own total comes with a full fetch).
  const usage = task ? task.usage : batch.tasks.reduce((u, t) => (t.usage ? { completions: u.completions + t.usage.completions, promptTokens: u.promptTokens + t.usage.promptTokens, outputTokens: u.outputTokens + t.usage.outputTokens } : u), { completions: 0, promptTokens: 0, outputTokens: 0 });
  const sessions = task ? task.samples.length : batch.tasks.reduce((k, t) => k + t.samples.length, 0);
  const th = task ? h?.byTask[task.taskId] : h;

  return (
    <div className="view" data-batch-id={batch.id}>
      <a className="back" href="#/">← Dashboard</a>
      <div className="view-head">
        <h1>
          Batch <span className="mono">{batchName(batch)}</span>
          {task && (
            <>
              {' '}
              / task <span className="mono">{task.taskId}</span>
            </>
          )}
        </h1>
        <StatusBadge status={batch.status} />
        {entry?.refreshing && <span className="muted">updating…</span>}
        <span className="spacer" />
        {isActive(batch.status) && (
          <button type="button" className="btn btn-danger" onClick={() => void cancel()} disabled={cancelling}>
            {cancelling ? 'Cancelling…' : 'Cancel batch'}
          </button>
        )}
        <a className="btn" href={routeHref({ view: 'compare', a: batch.id })}>
          Compare…
        </a>
        <a className="btn" href={routeHref({ view: 'export', batch: batch.id })}>
          Export…
        </a>
      </div>
      {isActive(batch.status) && <PauseBanner engine={batch.spec.engine} />}
      {cancelError && <div className="inline-error" role="alert">Cancel failed: {cancelError}</div>}
      {batch.error && <div className="turn-errbox" role="alert">{batch.error}</div>}
      <dl className="facts facts-cols facts-box">
        <dt>Dataset</dt>
        <dd>{batch.spec.dataset ?? '—'}</dd>
        <dt>Harness</dt>
        <dd>{batch.spec.harness ?? '—'}</dd>
        <dt>Engine</dt>
        <dd>
          <EngineLabel id={batch.spec.engine} />
        </dd>
        <dt>Model</dt>
        <dd className="mono">{batch.spec.model ?? '—'}</dd>
        <dt>Samples / task</dt>
        <dd>{n}</dd>
        <dt>Concurrency</dt>
        <dd>{batch.spec.concurrency ?? '—'}</dd>
        <dt>Runtime</dt>
        <dd data-testid="batch-runtime">
          {String(batch.spec.runtime ?? 'local')}
          {(batch.spec.runtime ?? 'local') === 'local' && (
            <>
              {' '}
              <span className="badge badge-warn" title="Agents ran as plain processes: they could reach the control API, other sessions and your files">unsandboxed</span>
            </>
          )}
        </dd>
        <dt>Created</dt>
        <dd>{formatTime(batch.createdAt)}</dd>
        <dt>{batch.finishedAt ? 'Duration' : 'Running for'}</dt>
        <dd>{formatMs(duration)}</dd>
      </dl>
      <div className="progress-row">
        <ProgressBar counts={batch.counts} />
        <span className="muted" data-testid="batch-counts">
          {formatInt(batch.counts.finished)} finished · {formatInt(batch.counts.failed)} failed · {formatInt(batch.counts.interrupted)} interrupted ·{' '}
          {formatInt(batch.counts.running)} running · {formatInt(batch.counts.queued)} queued
        </span>
        {phase && isActive(batch.status) && <span className="chip">{phase.message ?? phase.phase}</span>}
      </div>
      <div className="tiles">
        <StatTile label={task ? 'Task mean reward' : 'Mean reward'} value={formatReward(task ? task.meanReward : batch.meanReward)} hint={!task && h?.reward?.stderr != null ? `± ${(1.96 * h.reward.stderr).toFixed(3)} (95%) · n=${h.reward.scored}` : undefined} />
        <StatTile label="pass@1" value={formatPct(task ? task.passAtK?.['1'] : pk1)} hint={pkTop && pkTop.k > 1 ? `pass@${pkTop.k} ${formatPct(task ? task.passAtK?.[pkTop.k] : pkTop.v)}` : undefined} />
        <StatTile label="Sessions" value={formatInt(sessions)} />
        <StatTile label="Traces" value={th ? formatInt(th.traces) : '…'} hint="prefix-merge" />
        <StatTile label="Turns" value={formatInt(usage?.completions)} />
        <StatTile label="Tokens" value={formatInt(usage ? usage.promptTokens + usage.outputTokens : null)} />
      </div>
      <TraceHealthCard health={health} batchId={batch.id} taskId={taskId} />
      {!isActive(batch.status) && <CaptureHealthCard batch={batch.id} />}
      <div className="grid-3">
        <DistributionChart batch={batch} taskId={taskId} />
        <MeanRewardChart batch={batch} health={h ?? null} />
        <PassAtKChart batch={batch} taskId={taskId} />
      </div>
      <div className="view-head">
        <h2 className="subhead">{task ? `Sessions of task ${task.taskId}` : 'Sessions'}</h2>
        <span className="spacer" />
        <label className="field-inline">
          Task
          <select
            className="input input-narrow"
            value={taskId ?? ''}
            onChange={(e) => navigate({ view: 'batch', id: batch.id, taskId: e.target.value || undefined, q })}
            aria-label="Filter by task"
          >
            <option value="">all tasks ({batch.tasks.length})</option>
            {batch.tasks.map((t) => (
              <option key={t.taskId} value={t.taskId}>
                {t.taskId} · {taskStatus(t, n)} · {formatReward(t.meanReward)}
              </option>
            ))}
          </select>
        </label>
      </div>
      <SessionsTable rows={rows} query={q ?? ''} onQuery={(nq) => navigate({ view: 'batch', id: batch.id, taskId, q: nq || undefined }, { replace: true })} />
    </div>
  );
}
