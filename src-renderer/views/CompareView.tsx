// Compare two batches (typically the same spec on vLLM and on SGLang): per-task reward scatter A vs
// B, per-turn text and token diffs side by side for a chosen task and sample, and cross-engine
// re-scoring (A's traces scored by B's engine: per-token Δlogprob histogram, mean |Δ|, KL estimates).
import { useEffect, useMemo, useRef, useState } from 'react';
import {
  Bar,
  BarChart,
  CartesianGrid,
  ReferenceLine,
  ResponsiveContainer,
  Scatter,
  ScatterChart,
  Tooltip,
  XAxis,
  YAxis,
  ZAxis,
} from 'recharts';
import { api } from '../backend/client.js';
import type { RescoreProgress } from '../backend/events.js';
import type { BatchDetail, BatchSummary, Completion, RescoreResponse } from '../backend/types.js';
import { DeltaTokens } from '../components/DeltaTokens.js';
import { SortTh, TableFilter, useTable } from '../components/TableControls.js';
import { StatusBadge } from '../components/Badges.js';
import { axisProps, ChartCard, tooltipProps, useChartColors } from '../components/charts.js';
import { EngineLabel } from '../components/EngineLabel.js';
import { Empty, ErrorState, Loading } from '../components/States.js';
import { StatTile, useListKeys } from '../components/Widgets.js';
import { batchLabel, batchName, defaultPair, formatPct, sameSpec } from '../lib/batch.js';
import { diffSequences, splitWords } from '../lib/diff.js';
import { formatInt, formatLogprob, formatMs, formatReward, formatTime, shortId } from '../lib/format.js';
import { navigate, routeHref } from '../lib/router.js';
import { bootstrapDiff, type DiffInterval } from '../lib/stats.js';
import { summarizeResponse } from '../lib/summary.js';
import type { Column } from '../lib/tableQuery.js';
import { displayPiece } from '../lib/tokenLayout.js';
import { useAsync } from '../lib/useAsync.js';
import { isActive, useBatches } from '../store/batches.js';
import { onServerEvent } from '../store/live.js';
import { errorText } from '../store/resource.js';

function BatchPicker({ label, value, list, onChange }: { label: string; value?: string; list: BatchSummary[]; onChange: (id: string) => void }) {
  return (
    <label className="field-inline">
      <span className={`ab-tag ab-${label.toLowerCase()}`}>{label}</span>
      <select className="input input-picker" aria-label={`Batch ${label}`} value={value ?? ''} onChange={(e) => onChange(e.target.value)}>
        <option value="" disabled>
          choose a batch…
        </option>
        {list.map((b) => (
          <option key={b.id} value={b.id}>
            {batchName(b)} · {batchLabel(b)} · {b.status} · {formatReward(b.meanReward)}
          </option>
        ))}
      </select>
    </label>
  );
}

// ---- scatter ----

interface TaskPair { taskId: string; a: number | null; b: number | null; delta: number | null; ci: DiffInterval | null; nA: number; nB: number }

const scored = (rs: Array<number | null> | undefined) => (rs ?? []).filter((r): r is number => typeof r === 'number');

function pairs(A: BatchDetail, B: BatchDetail): TaskPair[] {
  const bBy = new Map(B.tasks.map((t) => [t.taskId, t]));
  const ids = [...new Set([...A.tasks.map((t) => t.taskId), ...B.tasks.map((t) => t.taskId)])];
  const aBy = new Map(A.tasks.map((t) => [t.taskId, t]));
  return ids.map((taskId) => {
    const ra = scored(aBy.get(taskId)?.rewards);
    const rb = scored(bBy.get(taskId)?.rewards);
    const a = aBy.get(taskId)?.meanReward ?? null;
    const b = bBy.get(taskId)?.meanReward ?? null;
    return { taskId, a, b, delta: a !== null && b !== null ? b - a : null, ci: bootstrapDiff(ra, rb), nA: ra.length, nB: rb.length };
  });
}

function RewardScatter({ rows, A, B, task, onTask }: { rows: TaskPair[]; A: BatchDetail; B: BatchDetail; task?: string; onTask: (t: string) => void }) {
  const c = useChartColors();
  // Identical points (e.g. many tasks at 1,1) merge into one bigger dot.
  const points = useMemo(() => {
    const m = new Map<string, { x: number; y: number; tasks: string[] }>();
    for (const r of rows) {
      if (r.a === null || r.b === null) continue;
      const k = `${r.a.toFixed(4)},${r.b.toFixed(4)}`;
      const p = m.get(k) ?? { x: r.a, y: r.b, tasks: [] };
      p.tasks.push(r.taskId);
      m.set(k, p);
    }
    return [...m.values()].map((p) => ({ ...p, n: p.tasks.length, selected: !!task && p.tasks.includes(task) }));
  }, [rows, task]);
  return (
    <ChartCard title="Per-task mean reward: A vs B" subtitle="above the diagonal: B better · dot size: number of tasks" testId="chart-scatter">
      {points.length === 0 ? (
        <Empty title="No task scored in both batches yet" />
      ) : (
        <ResponsiveContainer width="100%" height={300}>
          <ScatterChart margin={{ top: 10, right: 16, bottom: 18, left: -6 }}>
            <CartesianGrid stroke={c.grid} strokeDasharray="3 3" />
            <XAxis type="number" dataKey="x" name={`A (${A.spec.engine})`} domain={[0, 1]} {...axisProps(c)} label={{ value: `A · ${A.spec.engine}`, position: 'insideBottom', offset: -10, fill: c.muted, fontSize: 11 }} />
            <YAxis type="number" dataKey="y" name={`B (${B.spec.engine})`} domain={[0, 1]} {...axisProps(c)} label={{ value: `B · ${B.spec.engine}`, angle: -90, position: 'insideLeft', offset: 16, fill: c.muted, fontSize: 11 }} />
            <ZAxis type="number" dataKey="n" range={[50, 400]} />
            <ReferenceLine segment={[{ x: 0, y: 0 }, { x: 1, y: 1 }]} stroke={c.muted} strokeDasharray="4 4" ifOverflow="extendDomain" />
            <Tooltip
              {...tooltipProps(c)}
              cursor={{ strokeDasharray: '3 3' }}
              content={({ active, payload }) => {
                const p = active && payload?.[0]?.payload as { x: number; y: number; tasks: string[] } | undefined;
                if (!p) return null;
                return (
                  <div className="chart-tip">
                    <div>
                      A {formatReward(p.x)} · B {formatReward(p.y)}
                    </div>
                    <div className="muted">{p.tasks.slice(0, 8).join(', ')}{p.tasks.length > 8 ? ` +${p.tasks.length - 8}` : ''}</div>
                  </div>
                );
              }}
            />
            <Scatter
              data={points}
              fill={c.accent}
              fillOpacity={0.75}
              isAnimationActive={false}
              cursor="pointer"
              onClick={(d) => {
                const p = (d as unknown as { payload?: { tasks: string[] }; tasks?: string[] });
                const t = p.tasks ?? p.payload?.tasks;
                if (t?.[0]) onTask(t[0]);
              }}
              shape={(props: unknown) => {
                const { cx, cy, size, payload } = props as { cx: number; cy: number; size: number; payload: { selected: boolean } };
                const r = Math.sqrt(size / Math.PI);
                return <circle cx={cx} cy={cy} r={r} fill={payload.selected ? c.warn : c.accent} fillOpacity={0.8} stroke={payload.selected ? c.fg : 'none'} />;
              }}
            />
          </ScatterChart>
        </ResponsiveContainer>
      )}
    </ChartCard>
  );
}

const TASK_COLUMNS: Column<TaskPair>[] = [
  { key: 'task', label: 'Task', value: (r) => r.taskId },
  { key: 'a', label: 'A', num: true, value: (r) => r.a },
  { key: 'b', label: 'B', num: true, value: (r) => r.b },
  { key: 'delta', label: 'Δ (B−A)', num: true, value: (r) => r.delta },
  { key: 'absdelta', label: '|Δ|', num: true, value: (r) => (r.delta === null ? null : Math.abs(r.delta)) },
  { key: 'n', label: 'n A / B', num: true, value: (r) => Math.min(r.nA, r.nB) },
];

const signed = (x: number) => `${x > 0 ? '+' : ''}${x.toFixed(2)}`;

function TaskTable({ rows, task, onTask }: { rows: TaskPair[]; task?: string; onTask: (t: string) => void }) {
  const table = useTable(rows, TASK_COLUMNS, { sort: { key: 'absdelta', dir: 'desc' } });
  const sorted = table.rows;
  const keys = useListKeys(sorted.length, (i) => sorted[i] && onTask(sorted[i].taskId), Math.max(0, sorted.findIndex((r) => r.taskId === task)));
  return (
    <section className="card" aria-label="Tasks A vs B">
      <header className="card-head">
        <h2>Tasks</h2>
        <span className="muted">Δ with its 95% bootstrap interval · interval excludes 0 → marked · Enter to diff</span>
      </header>
      <TableFilter table={table} columns={TASK_COLUMNS} presets={['a:0', 'b:0']} label="Filter tasks A vs B" total={rows.length} />
      <div className="table-wrap table-scroll table-short" ref={keys.ref} tabIndex={0} onKeyDown={keys.onKeyDown} aria-label="Tasks; arrow keys and Enter" data-testid="compare-tasks">
        <table className="table">
          <thead>
            <tr>
              {TASK_COLUMNS.filter((c) => c.key !== 'absdelta').map((c) => <SortTh key={c.key} col={c} table={table} />)}
              <th className="num">95% CI of Δ</th>
            </tr>
          </thead>
          <tbody>
            {sorted.map((r, i) => {
              const sig = r.ci && (r.ci.lo > 0 || r.ci.hi < 0);
              return (
                <tr key={r.taskId} data-index={i} data-task-id={r.taskId} className={`${i === keys.index ? 'active' : ''} ${r.taskId === task ? 'open' : ''}`} onClick={() => onTask(r.taskId)}>
                  <td className="mono">{r.taskId}</td>
                  <td className="num">{formatReward(r.a)}</td>
                  <td className="num">{formatReward(r.b)}</td>
                  <td className={`num ${r.delta && r.delta > 0 ? 'pos' : r.delta && r.delta < 0 ? 'neg' : ''}`}>{r.delta === null ? '—' : signed(r.delta)}</td>
                  <td className="num">{r.nA} / {r.nB}</td>
                  <td className={`num mono ${sig ? 'strong' : 'muted'}`} data-cell="ci" title={r.ci ? `percentile bootstrap, 2000 resamples, ${r.nA} vs ${r.nB} samples` : 'needs scored samples on both sides'}>
                    {r.ci ? `[${signed(r.ci.lo)}, ${signed(r.ci.hi)}]${sig ? ' *' : ''}` : '—'}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </section>
  );
}

// ---- per-turn diffs ----

function WordDiffText({ a, b, side }: { a: string; b: string; side: 'a' | 'b' }) {
  const d = useMemo(() => diffSequences(splitWords(a), splitWords(b), { maxD: 400 }), [a, b]);
  return (
    <div className="turn-text">
      {d.hunks
        .filter((h) => h.op === 'equal' || h.op === (side === 'a' ? 'delete' : 'insert'))
        .map((h, i) => (h.op === 'equal' ? <span key={i}>{h.items.join('')}</span> : <mark key={i} className={side === 'a' ? 'w-del' : 'w-ins'}>{h.items.join('')}</mark>))}
    </div>
  );
}

function turnText(c: Completion | undefined): string {
  if (!c) return '';
  const r = c.response as { message?: { content?: unknown; reasoning?: unknown; tool_calls?: Array<{ function?: { name?: string; arguments?: string } }> } } | null;
  const m = r?.message;
  if (!m) return summarizeResponse(c.response, 2000);
  const parts: string[] = [];
  if (typeof m.reasoning === 'string' && m.reasoning.trim()) parts.push(`<think>${m.reasoning}</think>`);
  if (typeof m.content === 'string' && m.content.trim()) parts.push(m.content.trim());
  for (const t of m.tool_calls ?? []) parts.push(`→ ${t.function?.name ?? 'tool'}(${t.function?.arguments ?? ''})`);
  return parts.join('\n');
}

function TokenDiff({ a, b }: { a: Completion | undefined; b: Completion | undefined }) {
  const d = useMemo(() => diffSequences(a?.outputIds ?? [], b?.outputIds ?? [], { maxD: 800 }), [a, b]);
  const firstDiff = d.hunks.find((h) => h.op !== 'equal');
  const piece = (c: Completion | undefined, i: number) => {
    const p = c?.outputPieces?.[i];
    return p === undefined ? String(c?.outputIds[i]) : displayPiece(p);
  };
  const side = (which: 'a' | 'b') => {
    const c = which === 'a' ? a : b;
    const chips = [];
    for (const [k, h] of d.hunks.entries()) {
      if (h.op === 'equal') {
        const start = which === 'a' ? h.a : h.b;
        for (let i = 0; i < h.items.length; i++) chips.push(<span key={`${k}:${i}`} className="tok tok-eq" title={`id ${h.items[i]}`}>{piece(c, start + i)}</span>);
      } else if ((h.op === 'delete' && which === 'a') || (h.op === 'insert' && which === 'b')) {
        const start = which === 'a' ? h.a : h.b;
        for (let i = 0; i < h.items.length; i++) chips.push(<span key={`${k}:${i}`} className={`tok ${which === 'a' ? 'tok-del' : 'tok-ins'}`} title={`id ${h.items[i]}`}>{piece(c, start + i)}</span>);
      }
    }
    return chips;
  };
  return (
    <div className="tokdiff">
      <div className="muted tokdiff-sum">
        output tokens: A {formatInt(a?.outputIds.length ?? 0)} · B {formatInt(b?.outputIds.length ?? 0)} · {formatInt(d.equal)} shared · −{formatInt(d.deleted)} +{formatInt(d.inserted)}
        {firstDiff ? ` · first difference at output token ${formatInt(firstDiff.a)}` : ' · identical'}
        {d.approximate && ' · too different to align'}
      </div>
      <div className="side-by-side">
        <div className="tokdiff-side" aria-label="A output tokens">{side('a')}</div>
        <div className="tokdiff-side" aria-label="B output tokens">{side('b')}</div>
      </div>
    </div>
  );
}

function TurnDiffs({ A, B, task }: { A: BatchDetail; B: BatchDetail; task: string }) {
  const tA = A.tasks.find((t) => t.taskId === task);
  const tB = B.tasks.find((t) => t.taskId === task);
  const [sa, setSa] = useState(0);
  const [sb, setSb] = useState(0);
  useEffect(() => {
    setSa(0);
    setSb(0);
  }, [task]);
  const sesA = tA?.samples.find((s) => s.sampleIndex === sa) ?? tA?.samples[0];
  const sesB = tB?.samples.find((s) => s.sampleIndex === sb) ?? tB?.samples[0];
  const ca = useAsync(sesA ? (sig) => api.completions(sesA.sessionId, sig) : null, [sesA?.sessionId]);
  const cb = useAsync(sesB ? (sig) => api.completions(sesB.sessionId, sig) : null, [sesB?.sessionId]);
  const turnsA = (ca.data?.completions ?? []).slice().sort((x, y) => x.seq - y.seq);
  const turnsB = (cb.data?.completions ?? []).slice().sort((x, y) => x.seq - y.seq);
  const n = Math.max(turnsA.length, turnsB.length);

  const samplePicker = (label: 'A' | 'B', t: typeof tA, value: number, set: (v: number) => void) => (
    <label className="field-inline">
      <span className={`ab-tag ab-${label.toLowerCase()}`}>{label}</span> sample
      <select className="input input-narrow" aria-label={`Sample ${label}`} value={value} onChange={(e) => set(Number(e.target.value))}>
        {(t?.samples ?? []).map((s) => (
          <option key={s.sessionId} value={s.sampleIndex}>
            #{s.sampleIndex + 1} · reward {formatReward(s.reward)} · {s.completionCount} turns
          </option>
        ))}
      </select>
    </label>
  );

  let body;
  if (!tA || !tB) body = <Empty title={`Task ${task} is not in both batches`} />;
  else if ((ca.loading && !ca.data) || (cb.loading && !cb.data)) body = <Loading label="Loading both sessions' turns…" />;
  else if (ca.error || cb.error) body = <ErrorState message={(ca.error ?? cb.error)!} onRetry={() => { ca.reload(); cb.reload(); }} />;
  else if (n === 0) body = <Empty title="Neither sample has turns" />;
  else
    body = (
      <div className="turn-diffs">
        {Array.from({ length: n }, (_, k) => {
          const a = turnsA[k];
          const b = turnsB[k];
          const ta = turnText(a);
          const tb = turnText(b);
          return (
            <article key={k} className="card turn-diff" data-turn={k + 1} aria-label={`Turn ${k + 1} A vs B`}>
              <header className="card-head">
                <h3>Turn {k + 1}</h3>
                {a ? <span className="chip">A: {formatInt(a.promptIds.length)} → {formatInt(a.outputIds.length)} tok · {formatMs(a.timings?.totalMs)}</span> : <span className="chip chip-warn">A: no turn</span>}
                {b ? <span className="chip">B: {formatInt(b.promptIds.length)} → {formatInt(b.outputIds.length)} tok · {formatMs(b.timings?.totalMs)}</span> : <span className="chip chip-warn">B: no turn</span>}
                {a && b && ta === tb && <span className="badge badge-good">same text</span>}
              </header>
              <div className="side-by-side">
                <div className="side">{a ? <WordDiffText a={ta} b={tb} side="a" /> : <span className="muted">—</span>}</div>
                <div className="side">{b ? <WordDiffText a={ta} b={tb} side="b" /> : <span className="muted">—</span>}</div>
              </div>
              <TokenDiff a={a} b={b} />
            </article>
          );
        })}
      </div>
    );

  return (
    <section className="card" aria-label="Per-turn diffs" data-testid="turn-diffs">
      <header className="card-head">
        <h2>
          Task <span className="mono">{task}</span>: turns side by side
        </h2>
        <span className="spacer" />
        {samplePicker('A', tA, sa, setSa)}
        {samplePicker('B', tB, sb, setSb)}
      </header>
      <div className="side-by-side side-heads">
        <div>
          {sesA ? <a className="mono" href={routeHref({ view: 'session', id: sesA.sessionId })}>A · {sesA.sessionId}</a> : '—'} <EngineLabel id={A.spec.engine} />
        </div>
        <div>
          {sesB ? <a className="mono" href={routeHref({ view: 'session', id: sesB.sessionId })}>B · {sesB.sessionId}</a> : '—'} <EngineLabel id={B.spec.engine} />
        </div>
      </div>
      {body}
    </section>
  );
}

// ---- re-scoring ----

/** Live re-scoring progress: sessions read and built into traces, traces scored, tokens compared. */
function RescoreProgressView({ p, target }: { p: RescoreProgress; target: string }) {
  const pct = p.sessions ? (100 * p.sessionsRead) / p.sessions : 0;
  return (
    <div data-testid="rescore-progress">
      <div className="progress" role="progressbar" aria-label="Re-scoring progress" aria-valuemin={0} aria-valuemax={p.sessions} aria-valuenow={p.sessionsRead}>
        <div className="progress-track">
          <span className="progress-seg seg-running" style={{ width: `${pct}%` }} />
        </div>
        <span className="progress-label mono">
          {formatInt(p.sessionsRead)}/{formatInt(p.sessions)} sessions
        </span>
      </div>
      <div className="muted">
        {formatInt(p.tracesDone)} traces scored on {target} · {formatInt(p.tokens)} tokens compared
      </div>
    </div>
  );
}

/** The kept re-scorings of `src` on `engine`, newest first; `tick` refetches. */
function useKeptRescores(srcId: string, engine: string, tick: number) {
  const list = useAsync((signal) => api.rescores({ batch: srcId }, signal), [srcId, tick]);
  return { ...list, runs: (list.data?.rescores ?? []).filter((r) => r.engine === engine) };
}

function Rescore({ A, B }: { A: BatchDetail; B: BatchDetail }) {
  const c = useChartColors();
  const [dir, setDir] = useState<'AonB' | 'BonA'>('AonB');
  const [state, setState] = useState<{ busy: boolean; error: string | null; ms: number | null }>({ busy: false, error: null, ms: null });
  const ctrl = useRef<AbortController | null>(null);
  const [progress, setProgress] = useState<RescoreProgress | null>(null);
  const src = dir === 'AonB' ? A : B;
  const target = dir === 'AonB' ? B : A;
  const targetEngine = String(target.spec.engine);
  const [tick, setTick] = useState(0);
  const kept = useKeptRescores(src.id, targetEngine, tick);
  const [chosen, setChosen] = useState<string | null>(null);
  const current = (chosen && kept.runs.some((r) => r.id === chosen) ? chosen : kept.runs[0]?.id) ?? null;
  const stored = useAsync(current ? (signal) => api.storedRescore(current, signal) : null, [current]);
  const [traceId, setTraceId] = useState<string | null>(null);
  const tokens = useAsync(current && traceId ? (signal) => api.rescoreTokens(current, { trace: traceId }, signal) : null, [current, traceId]);
  useEffect(() => () => ctrl.current?.abort(), []);
  useEffect(() => setTraceId(null), [current]);

  const run = async () => {
    ctrl.current?.abort();
    const ac = new AbortController();
    ctrl.current = ac;
    const t0 = performance.now();
    setState({ busy: true, error: null, ms: null });
    // Not a secret, only this window's name for its progress events (randomUUID needs a secure context).
    const progressId = `rescore-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
    setProgress(null);
    const unsubscribe = onServerEvent((e) => {
      if (e.type === 'rescore' && e.id === progressId) setProgress(e);
    });
    try {
      const result: RescoreResponse = await api.rescore({ batchId: src.id, engine: targetEngine, builder: 'prefix-merge', bins: 24, progressId }, ac.signal);
      setState({ busy: false, error: null, ms: performance.now() - t0 });
      if (result.id) setChosen(result.id);
      setTick((t) => t + 1);
    } catch (err) {
      if ((err as Error).name === 'AbortError') return setState((s) => ({ ...s, busy: false }));
      setState({ busy: false, error: errorText(err), ms: null });
    } finally {
      unsubscribe();
      setProgress(null);
    }
  };
  const result = stored.data;
  const o = result?.rescore.overall;
  const hist = (o?.histogram ?? []).map((h) => ({ mid: (h.lo + h.hi) / 2, label: ((h.lo + h.hi) / 2).toFixed(3), count: h.count, lo: h.lo, hi: h.hi }));
  const worst = useMemo(
    () => (result?.traces ?? []).filter((t) => t.summary && t.summary.n > 0).sort((x, y) => (y.summary!.meanAbsDelta ?? 0) - (x.summary!.meanAbsDelta ?? 0)).slice(0, 10),
    [result],
  );
  const shownTokens = tokens.data?.traces[0];
  return (
    <section className="card" aria-label="Cross-engine re-scoring" data-testid="rescore">
      <header className="card-head">
        <h2>Cross-engine re-scoring</h2>
        <span className="muted">Δ = logprob as sampled − logprob re-scored, on mask-1 tokens</span>
        <span className="spacer" />
        <div className="seg" role="group" aria-label="Direction">
          <button type="button" className={dir === 'AonB' ? 'on' : ''} aria-pressed={dir === 'AonB'} onClick={() => setDir('AonB')}>
            A on {String(B.spec.engine)}
          </button>
          <button type="button" className={dir === 'BonA' ? 'on' : ''} aria-pressed={dir === 'BonA'} onClick={() => setDir('BonA')}>
            B on {String(A.spec.engine)}
          </button>
        </div>
        <button type="button" className="btn btn-primary" onClick={() => void run()} disabled={state.busy}>
          {state.busy ? 'Re-scoring…' : `Re-score ${dir === 'AonB' ? 'A' : 'B'}'s traces`}
        </button>
        {state.busy && (
          <button type="button" className="btn" onClick={() => ctrl.current?.abort()}>
            Stop
          </button>
        )}
      </header>
      {kept.runs.length > 0 && (
        <div className="rescore-runs" role="group" aria-label="Kept re-scorings" data-testid="kept-rescores">
          <span className="muted">kept:</span>
          {kept.runs.map((r) => (
            <button key={r.id} type="button" className={`btn btn-small ${r.id === current ? 'on' : ''}`} aria-pressed={r.id === current} onClick={() => setChosen(r.id)} data-rescore-id={r.id}>
              {formatTime(r.createdAt)} · {formatInt(r.overall.n)} tokens · mean |Δ| {formatLogprob(r.overall.meanAbsDelta)}
            </button>
          ))}
          {current && (
            <a className="btn btn-small" href={api.rescoreExportUrl(current)} download data-testid="rescore-export">
              ⬇ Export JSONL
            </a>
          )}
        </div>
      )}
      {state.busy && !progress && <Loading label={`Sending ${batchName(src)}'s traces to ${targetEngine} for prompt logprobs…`} />}
      {state.busy && progress && <RescoreProgressView p={progress} target={targetEngine} />}
      {state.error && <ErrorState message={state.error} onRetry={() => void run()} />}
      {!state.busy && !current && !state.error && !kept.loading && (
        <Empty title="Not re-scored yet">
          Sends every trace of {dir === 'AonB' ? 'A' : 'B'} ({batchName(src)}, sampled on {String(src.spec.engine)}) to {targetEngine} for prompt logprobs and compares them token by token. The result is kept.
        </Empty>
      )}
      {current && !result && stored.loading && <Loading label="Opening the kept re-scoring…" />}
      {result && o && (
        <>
          <div className="tiles" data-testid="rescore-summary">
            <StatTile label="Tokens compared" value={formatInt(o.n)} hint={`${formatInt(result.traces.length)} traces${state.ms ? ` · ${formatMs(state.ms)}` : ''}`} />
            <StatTile label="mean Δ" value={<span className="mono">{formatLogprob(o.meanDelta)}</span>} />
            <StatTile label="mean |Δ|" value={<span className="mono">{formatLogprob(o.meanAbsDelta)}</span>} />
            <StatTile label="max |Δ|" value={<span className="mono">{formatLogprob(o.maxAbsDelta)}</span>} />
            <StatTile label="KL estimate (k1)" value={<span className="mono">{o.klEstimate.toExponential(2)}</span>} hint={o.klK3 !== undefined ? `k3 ${o.klK3.toExponential(2)}` : undefined} />
            <StatTile label="share |Δ| > 0.5" value={formatPct(o.shareAbove0_5)} tone={o.shareAbove0_5 > 0.01 ? 'warn' : undefined} />
            {result.rescore.errors.length > 0 && <StatTile label="Errors" value={formatInt(result.rescore.errors.length)} tone="bad" hint={result.rescore.errors[0]?.message} />}
          </div>
          <div className="grid-2">
            <ChartCard title="Δlogprob histogram" subtitle={`${formatInt(o.n)} mask-1 tokens · ${String(src.spec.engine)} → ${targetEngine}`} testId="chart-rescore-hist">
              <ResponsiveContainer width="100%" height={260}>
                <BarChart data={hist} margin={{ top: 8, right: 8, bottom: 20, left: 0 }} barCategoryGap={1}>
                  <CartesianGrid stroke={c.grid} strokeDasharray="3 3" vertical={false} />
                  <XAxis dataKey="label" {...axisProps(c)} interval={Math.max(0, Math.floor(hist.length / 8) - 1)} label={{ value: 'Δ logprob (nats)', position: 'insideBottom', offset: -12, fill: c.muted, fontSize: 11 }} />
                  <YAxis {...axisProps(c)} scale="sqrt" allowDecimals={false} />
                  <Tooltip {...tooltipProps(c)} formatter={(v) => [formatInt(Number(v)), 'tokens']} labelFormatter={(_l, p) => (p?.[0]?.payload ? `[${p[0].payload.lo.toFixed(4)}, ${p[0].payload.hi.toFixed(4)})` : '')} />
                  <ReferenceLine x={hist.reduce((best, h) => (Math.abs(h.mid) < Math.abs(best.mid) ? h : best), hist[0] ?? { mid: 0, label: '0' }).label} stroke={c.muted} strokeDasharray="3 3" />
                  <Bar dataKey="count" fill={c.sim} isAnimationActive={false} />
                </BarChart>
              </ResponsiveContainer>
            </ChartCard>
            <section className="card" aria-label="Traces with the largest mean |Δ|">
              <header className="card-head">
                <h2>Largest mean |Δ|</h2>
                <span className="muted">click a trace for its tokens</span>
              </header>
              {worst.length === 0 ? (
                <Empty title="No scored traces" />
              ) : (
                <div className="table-wrap">
                  <table className="table" data-testid="rescore-worst">
                    <thead>
                      <tr>
                        <th>Session · trace</th>
                        <th className="num">Tokens</th>
                        <th className="num">mean |Δ|</th>
                        <th className="num">max |Δ|</th>
                      </tr>
                    </thead>
                    <tbody>
                      {worst.map((t) => (
                        <tr key={t.traceId} data-trace-id={t.traceId} className={t.traceId === traceId ? 'active' : ''} onClick={() => setTraceId(t.traceId)}>
                          <td className="mono">
                            <button type="button" className="linklike" onClick={() => setTraceId(t.traceId)} title={t.traceId}>
                              {shortId(t.sessionId, 14)} · {shortId(t.traceId.split('/').pop(), 8)}
                            </button>
                          </td>
                          <td className="num">{formatInt(t.summary!.n)}</td>
                          <td className="num mono">{formatLogprob(t.summary!.meanAbsDelta)}</td>
                          <td className="num mono">{formatLogprob(t.summary!.maxAbsDelta)}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              )}
            </section>
          </div>
          {traceId && (
            <section className="card" aria-label="Per-token Δlogprob" data-testid="rescore-tokens">
              <header className="card-head">
                <h2>Per-token Δlogprob</h2>
                <span className="mono muted">{traceId}</span>
                <span className="spacer" />
                {shownTokens && <a className="btn btn-small" href={routeHref({ view: 'session', id: shownTokens.sessionId })}>Open session →</a>}
              </header>
              {tokens.loading && !tokens.data ? (
                <Loading label="Loading per-token logprobs…" />
              ) : tokens.error ? (
                <ErrorState message={tokens.error} onRetry={tokens.reload} />
              ) : shownTokens ? (
                <DeltaTokens t={shownTokens} engineA={shownTokens.sourceEngine ?? String(src.spec.engine)} engineB={targetEngine} />
              ) : null}
            </section>
          )}
        </>
      )}
    </section>
  );
}

export function CompareView({ a, b, task }: { a?: string; b?: string; task?: string }) {
  const { data: list, loading, error, fetch, details, fetchDetail } = useBatches();
  useEffect(() => {
    void fetch({ quiet: list !== null });
  }, []);
  // Fill in a default pair once the list is there.
  useEffect(() => {
    if (!list || (a && b)) return;
    const [da, db] = defaultPair(list, a);
    if (da && db) navigate({ view: 'compare', a: da, b: db, task }, { replace: true });
  }, [list, a, b]);
  useEffect(() => {
    if (a) void fetchDetail(a, { quiet: !!details[a]?.data });
  }, [a]);
  useEffect(() => {
    if (b) void fetchDetail(b, { quiet: !!details[b]?.data });
  }, [b]);

  const A = a ? details[a]?.data ?? null : null;
  const B = b ? details[b]?.data ?? null : null;
  const rows = useMemo(() => (A && B ? pairs(A, B) : []), [A, B]);
  const setTask = (t: string) => navigate({ view: 'compare', a, b, task: t });

  let body;
  if (loading && !list) body = <Loading label="Loading batches…" />;
  else if (error && !list) body = <ErrorState message={error} onRetry={() => void fetch()} />;
  else if ((list ?? []).length < 2)
    body = (
      <Empty title="Two batches are needed">
        Run the same spec on two engines (e.g. <code>demo:calculator</code> on sim-vllm and on sim-sglang) from <a href="#/launch">Launch</a>, then compare them here.
      </Empty>
    );
  else if (!a || !b) body = <Empty title="Choose batch A and batch B" />;
  else if (!A || !B) {
    const err = (a && details[a]?.error) || (b && details[b]?.error);
    body = err ? <ErrorState message={err} onRetry={() => { void fetchDetail(a); void fetchDetail(b); }} /> : <Loading label="Loading both batches…" />;
  } else
    body = (
      <>
        {A.spec.dataset !== B.spec.dataset ? (
          <div className="banner banner-bad" role="alert" data-testid="pair-refused">
            A ran <strong>{A.spec.dataset ?? '?'}</strong> and B ran <strong>{B.spec.dataset ?? '?'}</strong>: rewards of different datasets are not comparable, so
            no per-task comparison is shown. Pick batches of the same dataset (re-scoring below still compares the engines token by token).
          </div>
        ) : !sameSpec(A, B) ? (
          <div className="banner banner-warn" role="status">The batches ran different harnesses: differences mix the harness and the engine.</div>
        ) : A.spec.engine === B.spec.engine ? (
          <div className="banner banner-warn" role="status">Both batches ran on {A.spec.engine}: this compares two runs of one engine.</div>
        ) : null}
        {A.spec.dataset === B.spec.dataset && (
          <>
            <div className="tiles">
              <StatTile label={`A mean reward · ${A.spec.engine}`} value={formatReward(A.meanReward)} hint={<StatusBadge status={A.status} />} />
              <StatTile label={`B mean reward · ${B.spec.engine}`} value={formatReward(B.meanReward)} hint={<StatusBadge status={B.status} />} />
              <StatTile label="Δ mean reward (B−A)" value={A.meanReward !== null && B.meanReward !== null ? `${B.meanReward - A.meanReward >= 0 ? '+' : ''}${(B.meanReward - A.meanReward).toFixed(3)}` : '—'} />
              <StatTile label="pass@1 A / B" value={`${formatPct(A.passAtK?.['1'])} / ${formatPct(B.passAtK?.['1'])}`} />
              <StatTile label="Tasks better on B / A" value={`${rows.filter((r) => (r.delta ?? 0) > 0).length} / ${rows.filter((r) => (r.delta ?? 0) < 0).length}`} />
            </div>
            <div className="grid-2">
              <RewardScatter rows={rows} A={A} B={B} task={task} onTask={setTask} />
              <TaskTable rows={rows} task={task} onTask={setTask} />
            </div>
            {task ? <TurnDiffs A={A} B={B} task={task} /> : <Empty title="Pick a task">Click a dot or a task row to see both batches&apos; turns side by side, text and tokens.</Empty>}
          </>
        )}
        <Rescore A={A} B={B} />
      </>
    );

  return (
    <div className="view">
      <div className="view-head">
        <h1>Compare</h1>
        <span className="spacer" />
        <BatchPicker label="A" value={a} list={list ?? []} onChange={(id) => navigate({ view: 'compare', a: id, b, task })} />
        <button type="button" className="btn btn-small" title="Swap A and B" onClick={() => navigate({ view: 'compare', a: b, b: a, task })} disabled={!a || !b}>
          ⇄
        </button>
        <BatchPicker label="B" value={b} list={list ?? []} onChange={(id) => navigate({ view: 'compare', a, b: id, task })} />
      </div>
      {body}
    </div>
  );
}
