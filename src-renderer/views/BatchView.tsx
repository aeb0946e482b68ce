// Batch / task detail: progress, figures, reward distribution per task, mean reward per batch (same
// dataset + harness) or per policy version, pass@k, and the sessions (samples). With a task selected
// (#/batches/<id>/tasks/<taskId>) the charts and the session list narrow to that task.
import { useEffect, useMemo, useState } from 'react';
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
import type { BatchDetail, SampleResult } from '../backend/types.js';
import { StatusBadge } from '../components/Badges.js';
import { axisProps, ChartCard, tooltipProps, useChartColors } from '../components/charts.js';
import { EngineLabel } from '../components/EngineLabel.js';
import { Empty, ErrorState, Loading } from '../components/States.js';
import { ProgressBar, StatTile, useListKeys } from '../components/Widgets.js';
import { batchName, formatPct, sameSpec, taskStatus, topPassAtK } from '../lib/batch.js';
import { formatInt, formatMs, formatReward, formatTime, shortId } from '../lib/format.js';
import { navigate, routeHref } from '../lib/router.js';
import { bucketColor, rewardDistribution } from '../lib/rewards.js';
import { isActive, useBatches } from '../store/batches.js';
import { errorText } from '../store/resource.js';

function DistributionChart({ batch, taskId }: { batch: BatchDetail; taskId?: string }) {
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
}

function MeanRewardChart({ batch }: { batch: BatchDetail }) {
  const c = useChartColors();
  const [by, setBy] = useState<'batch' | 'policy'>('batch');
  const list = useBatches((s) => s.data);
  const stats = useBatches((s) => s.stats[batch.id]);
  const peers = useMemo(
    () =>
      (list ?? [])
        .filter((b) => b.id === batch.id || sameSpec(b, batch))
        .slice(0, 16)
        .reverse()
        .map((b) => ({ id: b.id, name: shortId(b.id.replace(/^bat_/, ''), 6), engine: b.spec.engine ?? '?', reward: b.meanReward ?? 0, current: b.id === batch.id })),
    [list, batch],
  );
  const policy = (stats?.byPolicy ?? []).map((p) => ({ name: `v${p.version}`, reward: p.meanReward ?? 0, sessions: p.sessions }));
  const toggle = (
    <div className="seg" role="group" aria-label="Mean reward by">
      <button type="button" className={by === 'batch' ? 'on' : ''} aria-pressed={by === 'batch'} onClick={() => setBy('batch')}>
        per batch
      </button>
      <button type="button" className={by === 'policy' ? 'on' : ''} aria-pressed={by === 'policy'} onClick={() => setBy('policy')}>
        per policy version
      </button>
    </div>
  );
  let chart;
  if (by === 'batch') {
    chart = (
      <ResponsiveContainer width="100%" height={240}>
        <BarChart data={peers} margin={{ top: 8, right: 8, bottom: 4, left: -16 }}>
          <CartesianGrid stroke={c.grid} strokeDasharray="3 3" vertical={false} />
          <XAxis dataKey="name" {...axisProps(c)} interval={0} fontSize={10} />
          <YAxis domain={[0, 1]} {...axisProps(c)} />
          <Tooltip {...tooltipProps(c)} formatter={(v) => [formatReward(Number(v)), 'mean reward']} labelFormatter={(_l, p) => (p?.[0]?.payload ? `${p[0].payload.id} · ${p[0].payload.engine}` : '')} />
          <Bar dataKey="reward" isAnimationActive={false} cursor="pointer" onClick={(d) => navigate({ view: 'batch', id: (d as unknown as { id: string }).id })}>
            {peers.map((p) => (
              <Cell key={p.id} fill={p.current ? c.accent : c.muted} fillOpacity={p.current ? 0.95 : 0.55} />
            ))}
          </Bar>
        </BarChart>
      </ResponsiveContainer>
    );
  } else if (stats?.tracesState === 'loading' || (!stats && isActive(batch.status))) {
    chart = <Loading label="Reading policy versions from the traces…" />;
  } else if (isActive(batch.status)) {
    chart = <Empty title="Available when the batch has ended">Policy versions are read from the finished traces.</Empty>;
  } else if (stats?.tracesState === 'error') {
    chart = <ErrorState message={stats.tracesError ?? 'failed'} />;
  } else if (policy.length === 0) {
    chart = <Empty title="No policy versions recorded" />;
  } else {
    chart = (
      <ResponsiveContainer width="100%" height={240}>
        <BarChart data={policy} margin={{ top: 8, right: 8, bottom: 4, left: -16 }}>
          <CartesianGrid stroke={c.grid} strokeDasharray="3 3" vertical={false} />
          <XAxis dataKey="name" {...axisProps(c)} />
          <YAxis domain={[0, 1]} {...axisProps(c)} />
          <Tooltip {...tooltipProps(c)} formatter={(v, _n, p) => [`${formatReward(Number(v))} (${(p.payload as { sessions: number }).sessions} sessions)`, 'mean reward']} />
          <Bar dataKey="reward" fill={c.accent} isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    );
  }
  return (
    <ChartCard title="Mean reward" subtitle={by === 'batch' ? 'batches with the same dataset and harness' : 'sessions grouped by policy version'} actions={toggle} testId="chart-mean-reward">
      {chart}
    </ChartCard>
  );
}

function PassAtKChart({ batch, taskId }: { batch: BatchDetail; taskId?: string }) {
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
}

interface Row extends SampleResult { taskId: string }

function SessionsTable({ rows }: { rows: Row[] }) {
  const open = (i: number) => rows[i] && navigate({ view: 'session', id: rows[i].sessionId });
  const keys = useListKeys(rows.length, open);
  if (rows.length === 0) return <Empty title="No sessions yet">Sessions appear as samples start.</Empty>;
  return (
    <div className="table-wrap table-scroll" ref={keys.ref} tabIndex={0} onKeyDown={keys.onKeyDown} aria-label="Sessions; arrow keys and Enter to open" data-testid="batch-sessions">
      <table className="table">
        <thead>
          <tr>
            <th>Session</th>
            <th>Task</th>
            <th className="num">Sample</th>
            <th>Status</th>
            <th className="num">Reward</th>
            <th>Outcome</th>
            <th className="num">Turns</th>
            <th className="num">Duration</th>
            <th>Error</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r, i) => (
            <tr key={r.sessionId} data-index={i} data-session-id={r.sessionId} className={i === keys.index ? 'active' : ''} onClick={() => keys.setIndex(i)} onDoubleClick={() => open(i)}>
              <td className="mono">
                <a href={routeHref({ view: 'session', id: r.sessionId })}>{r.sessionId}</a>
              </td>
              <td className="mono">{r.taskId}</td>
              <td className="num">{r.sampleIndex}</td>
              <td>
                <StatusBadge status={r.status} />
              </td>
              <td className="num">{formatReward(r.reward)}</td>
              <td>{r.outcome ?? '—'}</td>
              <td className="num">{formatInt(r.completionCount)}</td>
              <td className="num">{formatMs(r.durationMs)}</td>
              <td className="ellipsis err-cell" title={r.error ?? ''}>
                {r.error ?? ''}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function BatchView({ id, taskId }: { id: string; taskId?: string }) {
  const entry = useBatches((s) => s.details[id]);
  const stats = useBatches((s) => s.stats[id]);
  const phase = useBatches((s) => s.phases[id]);
  const { fetchDetail, loadStats, fetch: fetchList, data: list } = useBatches();
  const [cancelError, setCancelError] = useState<string | null>(null);
  const [cancelling, setCancelling] = useState(false);

  useEffect(() => {
    void fetchDetail(id, { quiet: !!entry?.data });
    void loadStats(id, { traceLimit: 5000 });
    if (!list) void fetchList({ quiet: true });
  }, [id]);
  const status = entry?.data?.status;
  useEffect(() => {
    // When the batch ends, count its traces (the stats were loaded while it ran).
    if (status && !isActive(status)) void loadStats(id, { traceLimit: 5000 });
  }, [status]);

  const batch = entry?.data ?? null;
  const rows: Row[] = useMemo(() => {
    if (!batch) return [];
    const out: Row[] = [];
    for (const t of batch.tasks) if (!taskId || t.taskId === taskId) for (const s of t.samples) out.push({ ...s, taskId: t.taskId });
    return out;
  }, [batch, taskId]);

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
  const pre = stats?.truncated ? '≥' : '';
  const fig = (v: number | null | undefined) => (v === null || v === undefined ? '…' : pre + formatInt(v));
  const taskFig = task ? stats?.byTask[task.taskId] : undefined;

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
        <span className="muted">
          {formatInt(batch.counts.finished)} finished · {formatInt(batch.counts.failed)} failed · {formatInt(batch.counts.interrupted)} interrupted ·{' '}
          {formatInt(batch.counts.running)} running · {formatInt(batch.counts.queued)} queued
        </span>
        {phase && isActive(batch.status) && <span className="chip">{phase.message ?? phase.phase}</span>}
      </div>
      <div className="tiles">
        <StatTile label={task ? 'Task mean reward' : 'Mean reward'} value={formatReward(task ? task.meanReward : batch.meanReward)} />
        <StatTile label="pass@1" value={formatPct(task ? task.passAtK?.['1'] : pk1)} hint={pkTop && pkTop.k > 1 ? `pass@${pkTop.k} ${formatPct(task ? task.passAtK?.[pkTop.k] : pkTop.v)}` : undefined} />
        <StatTile label="Sessions" value={fig(task ? taskFig?.sessions : stats?.sessions)} />
        <StatTile label="Traces" value={fig(task ? taskFig?.traces : stats?.traces)} hint={stats?.tracesState === 'loading' ? 'counting…' : stats?.tracesState === 'skipped' ? 'too many sessions to count' : isActive(batch.status) ? 'counted when the batch ends' : 'prefix-merge'} />
        <StatTile label="Completions" value={fig(task ? taskFig?.completions : stats?.completions)} />
        <StatTile label="Tokens" value={fig(task ? taskFig?.tokens : stats?.tokens)} />
      </div>
      {stats?.error && <div className="inline-error">Figures unavailable: {stats.error}</div>}
      <div className="grid-3">
        <DistributionChart batch={batch} taskId={taskId} />
        <MeanRewardChart batch={batch} />
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
            onChange={(e) => navigate({ view: 'batch', id: batch.id, taskId: e.target.value || undefined })}
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
      <SessionsTable rows={rows} />
    </div>
  );
}
