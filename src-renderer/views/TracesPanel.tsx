// The session's training traces (GET /api/sessions/:id/traces): chains with their turns, trained
// tokens, reward, policy versions, proof, origin and break reasons; the selected trace's token view
// with the loss mask overlaid.
import { useMemo, useState } from 'react';
import type { BuilderName, Completion, Trace, TraceBreak, TracesResponse } from '../backend/types.js';
import { Empty, ErrorState, Loading } from '../components/States.js';
import { TokenView } from '../components/TokenView.js';
import { useListKeys } from '../components/Widgets.js';
import { formatInt, formatReward } from '../lib/format.js';
import { traceTokens } from '../lib/traceOverlay.js';
import type { AsyncState } from '../lib/useAsync.js';
import { BREAK_HELP } from './breaks.js';
import { DivergenceView } from './DivergenceView.js';


function trainedCount(t: Trace): number {
  let n = 0;
  for (const m of t.lossMask) if (m === 1) n++;
  return n;
}

function TraceTokens({ t, completions }: { t: Trace; completions: Map<string, Completion> }) {
  const { mask, markers, promptPieces, outputPieces } = useMemo(() => traceTokens(t, completions), [t, completions]);
  return (
    <TokenView
      promptIds={t.promptIds}
      outputIds={t.responseIds}
      outputLogprobs={t.responseLogprobs}
      promptPieces={promptPieces}
      outputPieces={outputPieces}
      mask={mask}
      markers={markers}
      outputLabel="response"
      testId="trace-tokens"
    />
  );
}

export function TracesPanel({ traces, builder, setBuilder, completions }: { traces: AsyncState<TracesResponse>; builder: BuilderName; setBuilder: (b: BuilderName) => void; completions: Completion[] }) {
  const list = traces.data?.traces ?? [];
  const [selectedId, setSelectedId] = useState<string | null>(null);
  const byId = useMemo(() => new Map(completions.map((c) => [c.id, c])), [completions]);
  const indexOfTrace = useMemo(() => new Map(list.map((t, i) => [t.id, i])), [list]);
  const found = selectedId ? list.findIndex((t) => t.id === selectedId) : -1;
  const keys = useListKeys(list.length, (i) => setSelectedId(list[i]?.id ?? null), Math.max(0, found));
  const selected = found >= 0 ? list[found] : null;
  // Which trace a chain went on in after a break: every split has a reason on both sides.
  const continues = useMemo(() => {
    const m = new Map<string, { from: number; brk: TraceBreak }>();
    list.forEach((t, i) => {
      for (const b of t.breaks ?? []) if (b.continuedIn && !m.has(b.continuedIn)) m.set(b.continuedIn, { from: i, brk: b });
    });
    return m;
  }, [list]);
  // The first break is shown open: what diverged is one look away.
  const firstBreak = useMemo(() => {
    for (let i = 0; i < list.length; i++) if (list[i].breaks?.length) return `${list[i].id}#0`;
    return null;
  }, [list]);
  const [openBreak, setOpenBreak] = useState<string | null | undefined>(undefined);
  const shownBreak = openBreak === undefined ? firstBreak : openBreak;
  const breakView = useMemo(() => {
    if (!shownBreak) return null;
    const [tid, k] = [shownBreak.slice(0, shownBreak.lastIndexOf('#')), Number(shownBreak.slice(shownBreak.lastIndexOf('#') + 1))];
    const i = list.findIndex((t) => t.id === tid);
    const brk = list[i]?.breaks?.[k];
    return brk ? { trace: list[i], i, brk } : null;
  }, [shownBreak, list]);

  let body;
  if (traces.loading && !traces.data) body = <Loading label="Building traces…" />;
  else if (traces.error && !traces.data)
    body =
      traces.status === 404 ? (
        <Empty title="Traces are not available">The server has no traces route ({traces.error}).</Empty>
      ) : (
        <ErrorState message={traces.error} onRetry={traces.reload} />
      );
  else if (list.length === 0) body = <Empty title="No traces yet">Traces are built from the session&apos;s ok completions.</Empty>;
  else
    body = (
      <>
        <div className="table-wrap" ref={keys.ref} tabIndex={0} onKeyDown={keys.onKeyDown} aria-label="Trace chains; arrow keys, Enter to show tokens" data-testid="traces-table">
          <table className="table">
            <thead>
              <tr>
                <th>#</th>
                <th>Turns</th>
                <th className="num">Tokens</th>
                <th className="num">Mask 1</th>
                <th className="num">Reward</th>
                <th>Policy</th>
                <th>Proof</th>
                <th>Training</th>
                <th>Origin</th>
                <th>Breaks</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {list.map((t, i) => {
                const seqs = t.completionIds.map((id) => byId.get(id)?.seq);
                return (
                  <tr key={t.id} data-index={i} data-trace-id={t.id} className={`${i === keys.index ? 'active' : ''} ${selected?.id === t.id ? 'open' : ''}`} onClick={() => keys.setIndex(i)} onDoubleClick={() => setSelectedId(t.id)}>
                    <td className="mono">{i + 1}</td>
                    <td className="mono" title="turns (1-based)">{seqs.map((s) => (s === undefined ? '?' : `${s + 1}`)).join(' → ')}</td>
                    <td className="num">{formatInt(t.promptIds.length + t.responseIds.length)}</td>
                    <td className="num">{formatInt(trainedCount(t))}</td>
                    <td className="num">{formatReward(t.reward)}</td>
                    <td className="mono">{[...new Set(t.policyVersions)].map((v) => `v${v}`).join(', ')}</td>
                    <td>{t.proof ? <span className={`badge ${t.proof.ok ? 'badge-good' : 'badge-bad'}`}>{t.proof.ok ? 'ok' : 'failed'}</span> : '—'}</td>
                    <td data-cell="masked">{t.masked ? <span className="badge badge-bad" title="left out of training exports">masked: {t.maskReason ?? 'custody'}</span> : <span className="badge badge-good">trained</span>}</td>
                    <td className="muted">
                      {continues.has(t.id) ? (
                        <span data-continues={continues.get(t.id)!.from + 1}>
                          continues #{continues.get(t.id)!.from + 1} after <span className="badge badge-warn">{continues.get(t.id)!.brk.reason}</span>
                        </span>
                      ) : t.origin?.kind === 'branch' && t.origin.fromTraceId
                        ? `branch of #${(indexOfTrace.get(t.origin.fromTraceId) ?? -1) + 1}`
                        : t.origin?.kind === 'split'
                          ? `split (${t.origin.reason})`
                          : (t.origin?.kind ?? '—')}
                      {t.origin?.samePromptAs ? ' · same prompt as a sibling' : ''}
                    </td>
                    <td>
                      {(t.breaks ?? []).length === 0 ? (
                        <span className="muted">—</span>
                      ) : (
                        t.breaks.map((b, k) => (
                          <button
                            key={k}
                            type="button"
                            className={`break-chip ${shownBreak === `${t.id}#${k}` ? 'on' : ''}`}
                            title={`${BREAK_HELP[b.reason] ?? b.reason} — show what diverged`}
                            data-break-reason={b.reason}
                            aria-pressed={shownBreak === `${t.id}#${k}`}
                            onClick={(e) => {
                              e.stopPropagation();
                              setOpenBreak(shownBreak === `${t.id}#${k}` ? null : `${t.id}#${k}`);
                            }}
                          >
                            <span className="badge badge-warn">{b.reason}</span>
                            {typeof b.tokenIndex === 'number' && <span className="muted"> @ token {formatInt(b.tokenIndex)}</span>}
                            {b.continuedIn && indexOfTrace.has(b.continuedIn) && <span className="muted"> → #{(indexOfTrace.get(b.continuedIn) ?? 0) + 1}</span>}
                          </button>
                        ))
                      )}
                    </td>
                    <td>
                      <button type="button" className="btn btn-small" onClick={() => setSelectedId(selected?.id === t.id ? null : t.id)} aria-pressed={selected?.id === t.id}>
                        {selected?.id === t.id ? 'Hide tokens' : 'Tokens'}
                      </button>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
        {breakView && (
          <DivergenceView
            key={shownBreak}
            trace={breakView.trace}
            brk={breakView.brk}
            completions={byId}
            traceNumber={breakView.i + 1}
            nextNumber={breakView.brk.continuedIn && indexOfTrace.has(breakView.brk.continuedIn) ? indexOfTrace.get(breakView.brk.continuedIn)! + 1 : undefined}
          />
        )}
        {(traces.data?.unplaced?.length ?? 0) > 0 && (
          <div className="muted">
            {traces.data!.unplaced!.length} completion(s) belong to no trace: {traces.data!.unplaced!.map((u) => `${byId.get(u.completionId)?.seq !== undefined ? `turn ${byId.get(u.completionId)!.seq + 1}` : u.completionId} (${u.reason})`).join(', ')}
          </div>
        )}
        {selected && (
          <div className="trace-detail">
            <h3 className="subhead">
              Trace #{found + 1} tokens <span className="mono muted">{selected.id}</span>
            </h3>
            <TraceTokens key={selected.id} t={selected} completions={byId} />
          </div>
        )}
      </>
    );

  return (
    <section className="card" aria-label="Traces" data-testid="traces-panel">
      <header className="card-head">
        <h2>Training traces</h2>
        <span className="muted">{traces.data ? `${list.length} trace${list.length === 1 ? '' : 's'}` : ''}</span>
        {traces.loading && traces.data && <span className="muted">updating…</span>}
        <span className="spacer" />
        <div className="seg" role="group" aria-label="Trace builder">
          {(['prefix-merge', 'per-request'] as BuilderName[]).map((b) => (
            <button key={b} type="button" className={builder === b ? 'on' : ''} aria-pressed={builder === b} onClick={() => setBuilder(b)}>
              {b}
            </button>
          ))}
        </div>
      </header>
      {body}
    </section>
  );
}
