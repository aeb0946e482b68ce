// Mean reward as a line with 95% error bars (± 1.96 standard errors, computed on the server):
// over time for the batches with this batch's dataset and harness (one line per engine, never mixing
// datasets), or over policy version for this batch's sessions.
import { memo, useEffect, useMemo, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
import { CartesianGrid, ErrorBar, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { BatchDetail, BatchHealth } from '../backend/types.js';
import { axisProps, ChartCard, tooltipProps, useChartColors, useEngineColor } from '../components/charts.js';
import { Empty, Loading } from '../components/States.js';
import { batchName, sameSpec } from '../lib/batch.js';
import { formatReward, formatTime } from '../lib/format.js';
import { navigate } from '../lib/router.js';
import { isActive, useBatches } from '../store/batches.js';

const PEERS = 16;
const err95 = (stderr: number | null | undefined) => (stderr == null ? 0 : 1.96 * stderr);

/** Axis labels as precise as the span needs: seconds within an hour, minutes within a day, else dates. */
function timeTick(span: number): (v: number) => string {
  return (v) => {
    const s = formatTime(Number(v));
    return span < 3_600_000 ? s.slice(11) : span < 86_400_000 ? s.slice(11, 16) : s.slice(5, 10);
  };
}

interface Point { t: number; mean: number; err: number; id: string; name: string; n: number | null; current: boolean }

/** Redrawn when the batch's mean reward, status or health changes, not on every progress event. */
export const MeanRewardChart = memo(function MeanRewardChart({ batch, health }: { batch: BatchDetail; health: BatchHealth | null }) {
  const c = useChartColors();
  const color = useEngineColor();
  const [by, setBy] = useState<'time' | 'policy'>('time');
  // The same-spec batches, by identity of what the chart reads: list patches elsewhere do not redraw it.
  const key = useBatches((s) =>
    JSON.stringify((s.data ?? []).filter((b) => b.id === batch.id || sameSpec(b, batch)).slice(0, PEERS).map((b) => [b.id, b.createdAt, b.meanReward, b.spec.engine ?? '?', batchName(b)])),
  );
  const list = useMemo(() => (JSON.parse(key) as Array<[string, number, number | null, string, string]>).map(([id, createdAt, meanReward, engine, name]) => ({ id, createdAt, meanReward, engine, name })), [key]);
  const allHealth = useBatches(useShallow((s) => Object.fromEntries(list.map((b) => [b.id, s.health[b.id]]))));
  const loadHealth = useBatches((s) => s.loadHealth);
  const peers = list;
  useEffect(() => {
    for (const p of peers) if (p.id !== batch.id) void loadHealth(p.id);
  }, [peers.map((p) => p.id).join(',')]);

  const byEngine = useMemo(() => {
    const m = new Map<string, Point[]>();
    for (const b of [...peers].reverse()) {
      if (b.meanReward === null) continue;
      const h = b.id === batch.id ? health : allHealth[b.id]?.data;
      const e = b.engine;
      const list = m.get(e) ?? [];
      list.push({ t: b.createdAt, mean: b.meanReward, err: err95(h?.reward?.stderr), id: b.id, name: b.name, n: h?.reward?.scored ?? null, current: b.id === batch.id });
      m.set(e, list);
    }
    return m;
  }, [peers, allHealth, health, batch.id]);
  const times = [...byEngine.values()].flat().map((p) => p.t);
  const span = times.length ? Math.max(...times) - Math.min(...times) : 0;
  const policy = (health?.byPolicy ?? []).filter((p) => p.mean !== null).map((p) => ({ v: p.version, name: `v${p.version}`, mean: p.mean!, err: err95(p.stderr), n: p.scored }));

  const toggle = (
    <div className="seg" role="group" aria-label="Mean reward over">
      <button type="button" className={by === 'time' ? 'on' : ''} aria-pressed={by === 'time'} onClick={() => setBy('time')}>
        over time
      </button>
      <button type="button" className={by === 'policy' ? 'on' : ''} aria-pressed={by === 'policy'} onClick={() => setBy('policy')}>
        per policy version
      </button>
    </div>
  );
  const tip = (p: { name?: string; mean: number; err: number; n: number | null }) =>
    `${formatReward(p.mean)}${p.err ? ` ± ${p.err.toFixed(3)}` : ''}${p.n ? ` (${p.n} samples)` : ''}`;
  let chart;
  if (by === 'time') {
    chart = byEngine.size === 0 ? (
      <Empty title="No scored batch yet" />
    ) : (
      <ResponsiveContainer width="100%" height={240}>
        <LineChart margin={{ top: 8, right: 16, bottom: 4, left: -16 }}>
          <CartesianGrid stroke={c.grid} strokeDasharray="3 3" />
          <XAxis type="number" dataKey="t" domain={['dataMin', 'dataMax']} {...axisProps(c)} tickFormatter={timeTick(span)} tickCount={4} padding={{ left: 16, right: 16 }} />
          <YAxis domain={[0, 1]} allowDataOverflow ticks={[0, 0.25, 0.5, 0.75, 1]} {...axisProps(c)} />
          <Tooltip {...tooltipProps(c)} formatter={(_v, _n, p) => [tip(p.payload as Point), 'mean reward']} labelFormatter={(_l, p) => (p?.[0]?.payload ? `${(p[0].payload as Point).name} · ${formatTime((p[0].payload as Point).t)}` : '')} />
          <Legend wrapperStyle={{ fontSize: 11, color: c.muted }} />
          {[...byEngine.entries()].map(([engine, pts]) => (
            <Line
              key={engine}
              data={pts}
              dataKey="mean"
              name={engine}
              stroke={color(engine)}
              strokeWidth={2}
              isAnimationActive={false}
              dot={(props: { cx?: number; cy?: number; payload?: Point; index?: number }) => (
                <circle key={props.index} cx={props.cx} cy={props.cy} r={props.payload?.current ? 5 : 3} fill={color(engine)} stroke={props.payload?.current ? c.fg : 'none'} />
              )}
              activeDot={{ r: 6, cursor: 'pointer', onClick: (_e: unknown, d: unknown) => navigate({ view: 'batch', id: ((d as { payload: Point }).payload).id }) }}
            >
              <ErrorBar dataKey="err" width={5} stroke={color(engine)} strokeWidth={1.2} direction="y" />
            </Line>
          ))}
        </LineChart>
      </ResponsiveContainer>
    );
  } else if (!health) {
    chart = <Loading label="Reading policy versions…" />;
  } else if (policy.length === 0) {
    chart = <Empty title={isActive(batch.status) ? 'No scored session yet' : 'No policy versions recorded'} />;
  } else {
    chart = (
      <ResponsiveContainer width="100%" height={240}>
        <LineChart data={policy} margin={{ top: 8, right: 16, bottom: 4, left: -16 }}>
          <CartesianGrid stroke={c.grid} strokeDasharray="3 3" />
          <XAxis dataKey="name" {...axisProps(c)} padding={{ left: 20, right: 20 }} />
          <YAxis domain={[0, 1]} allowDataOverflow ticks={[0, 0.25, 0.5, 0.75, 1]} {...axisProps(c)} />
          <Tooltip {...tooltipProps(c)} formatter={(_v, _n, p) => [tip(p.payload as Point), 'mean reward']} />
          <Line dataKey="mean" name="mean reward" stroke={c.accent} strokeWidth={2} dot={{ r: 4 }} isAnimationActive={false}>
            <ErrorBar dataKey="err" width={6} stroke={c.accent} strokeWidth={1.2} direction="y" />
          </Line>
        </LineChart>
      </ResponsiveContainer>
    );
  }
  return (
    <ChartCard
      title="Mean reward"
      subtitle={by === 'time' ? `${batch.spec.dataset ?? '?'} · ${batch.spec.harness ?? '?'} batches, by engine · 95% error bars` : 'sessions by policy version · 95% error bars'}
      actions={toggle}
      testId="chart-mean-reward"
    >
      {chart}
    </ChartCard>
  );
}, (p, n) => p.health === n.health && p.batch.id === n.batch.id && p.batch.meanReward === n.batch.meanReward && p.batch.status === n.batch.status);
