// Per-token engine differences of one trace: each compared (mask-1) token coloured by Δlogprob between
// the sampling engine (A) and the re-scoring engine (B), with its piece, and a table of the tokens
// sortable by |Δ| (largest first).
import { useMemo } from 'react';
import type { RescoreTokens } from '../backend/types.js';
import { DELTA_EDGES, deltaClass } from '../lib/delta.js';
import { formatInt, formatLogprob } from '../lib/format.js';
import type { Column } from '../lib/tableQuery.js';
import { displayPiece } from '../lib/tokenLayout.js';
import { SortTh, TableFilter, useTable } from './TableControls.js';

/** At most this many chips and table rows are drawn (the table sorts all of them first). */
const MAX_CHIPS = 4000;
const MAX_ROWS = 300;

interface Tok { k: number; pos: number; id: number; piece: string; a: number; b: number; d: number; abs: number }

const COLUMNS: Column<Tok>[] = [
  { key: 'pos', label: 'Position', num: true, value: (t) => t.pos },
  { key: 'piece', label: 'Token', value: (t) => t.piece },
  { key: 'a', label: 'logprob A', num: true, value: (t) => t.a },
  { key: 'b', label: 'logprob B', num: true, value: (t) => t.b },
  { key: 'delta', label: 'Δ (A−B)', num: true, value: (t) => t.d },
  { key: 'abs', label: '|Δ|', num: true, value: (t) => t.abs },
];

export function DeltaLegend() {
  return (
    <span className="dlt-legend" aria-label="Δ colour scale">
      <span className="dlt dlt-0">|Δ| &lt; {DELTA_EDGES[0]}</span>
      {DELTA_EDGES.map((e, i) => (
        <span key={e} className={`dlt dlt-${i + 1} dlt-pos`}>≥ {e}</span>
      ))}
      <span className="muted">blue: A more confident · orange: B more confident</span>
    </span>
  );
}

export function DeltaTokens({ t, engineA, engineB }: { t: RescoreTokens; engineA: string; engineB: string }) {
  const toks: Tok[] = useMemo(
    () => t.positions.map((pos, k) => ({ k, pos, id: t.tokenIds[k], piece: t.pieces[k] ?? String(t.tokenIds[k]), a: t.sampled[k], b: t.rescored[k], d: t.deltas[k], abs: Math.abs(t.deltas[k]) })),
    [t],
  );
  const table = useTable(toks, COLUMNS, { sort: { key: 'abs', dir: 'desc' } });
  const s = t.summary;
  return (
    <div className="delta-tokens" data-testid="delta-tokens" data-trace-id={t.traceId}>
      <div className="muted">
        {formatInt(toks.length)} trained tokens compared · A = {engineA} (sampled) · B = {engineB} (re-scored)
        {s && ` · mean |Δ| ${formatLogprob(s.meanAbsDelta)} · max |Δ| ${formatLogprob(s.maxAbsDelta)}`}
        {t.dropped > 0 && ` · ${t.dropped} dropped (no logprob on one side)`}
      </div>
      <DeltaLegend />
      <div className="tokdiff-side dlt-chips" aria-label="Trained tokens coloured by Δlogprob">
        {toks.slice(0, MAX_CHIPS).map((x) => (
          <span key={x.k} className={deltaClass(x.d)} data-pos={x.pos} title={`position ${x.pos} · ${JSON.stringify(x.piece)} · A ${formatLogprob(x.a)} · B ${formatLogprob(x.b)} · Δ ${formatLogprob(x.d)}`}>
            {displayPiece(x.piece)}
          </span>
        ))}
        {toks.length > MAX_CHIPS && <span className="muted"> … {formatInt(toks.length - MAX_CHIPS)} more in the table</span>}
      </div>
      <TableFilter table={table} columns={COLUMNS} presets={['abs:>0.1']} label="Filter tokens" total={toks.length} placeholder="Filter: abs:>0.1 piece:answer or words" />
      <div className="table-wrap table-scroll">
        <table className="table table-compact" data-testid="delta-table">
          <thead>
            <tr>
              {COLUMNS.map((c) => <SortTh key={c.key} col={c} table={table} />)}
            </tr>
          </thead>
          <tbody>
            {table.rows.slice(0, MAX_ROWS).map((x) => (
              <tr key={x.k}>
                <td className="num">{x.pos}</td>
                <td className="mono">
                  <span className={deltaClass(x.d)}>{displayPiece(x.piece)}</span>
                </td>
                <td className="num mono">{formatLogprob(x.a)}</td>
                <td className="num mono">{formatLogprob(x.b)}</td>
                <td className={`num mono ${x.d > 0 ? 'pos' : x.d < 0 ? 'neg' : ''}`}>{formatLogprob(x.d)}</td>
                <td className="num mono">{formatLogprob(x.abs)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
