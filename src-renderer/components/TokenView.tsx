// Token view of one completion: prompt ids (grey) then output ids coloured by logprob. Rows are laid
// out in JS (lib/tokenLayout) and windowed (VirtualRows), so only visible tokens are in the DOM.
import { useCallback, useMemo, useRef, useState, type MouseEvent } from 'react';
import { formatInt, formatLogprob } from '../lib/format.js';
import { logprobBucket, logprobStats } from '../lib/logprob.js';
import { createMeasure, fontOf, type Measure } from '../lib/measure.js';
import {
  displayPiece,
  layoutTokens,
  pieceEndsLine,
  rowEnd,
  rowOfToken,
  ROW_KIND_SEPARATOR,
} from '../lib/tokenLayout.js';
import { useUi } from '../store/ui.js';
import { LogprobLegend } from './LogprobLegend.js';
import { TokenTooltip, type TokenTooltipHandle } from './TokenTooltip.js';
import { VirtualRows, type VirtualRowsHandle } from './VirtualRows.js';

const ROW_H = 20;
const CHIP_PAD = 6; // horizontal padding inside a chip (CSS: padding 0 3px)
const CHIP_GAP = 2; // CSS: margin-right 2px
const MAX_HEIGHT = 440;
const SPECIAL = /^<\|[^|<>]*\|>$|^<\/?[a-z_]+>$/;

export interface TokenViewProps {
  promptIds: number[];
  outputIds: number[];
  outputLogprobs: number[];
  promptPieces?: string[];
  outputPieces?: string[];
}

interface Box { width: number; measure: Measure }

export function TokenView({ promptIds, outputIds, outputLogprobs, promptPieces, outputPieces }: TokenViewProps) {
  const requested = useUi((s) => s.tokenMode);
  const setMode = useUi((s) => s.setTokenMode);
  const hasPieces = !!promptPieces && !!outputPieces;
  const mode = hasPieces ? requested : 'ids';
  const P = promptIds.length;
  const O = outputIds.length;

  const list = useRef<VirtualRowsHandle>(null);
  const [box, setBox] = useState<Box | null>(null);
  const tip = useRef<TokenTooltipHandle>(null);

  const onWidth = useCallback((w: number) => {
    const el = list.current?.element();
    if (!el) return;
    const cs = getComputedStyle(el);
    const inner = w - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    setBox((prev) => (prev && Math.abs(prev.width - inner) < 1 ? prev : { width: inner, measure: prev?.measure ?? createMeasure(fontOf(el)) }));
  }, []);

  const idOf = useCallback((i: number) => (i < P ? promptIds[i] : outputIds[i - P]), [P, promptIds, outputIds]);
  const pieceOf = useCallback(
    (i: number): string | undefined => (i < P ? promptPieces?.[i] : outputPieces?.[i - P]),
    [P, promptPieces, outputPieces],
  );
  const labelOf = useCallback(
    (i: number) => {
      if (mode === 'ids') return String(idOf(i));
      const p = pieceOf(i);
      return p === undefined ? String(idOf(i)) : displayPiece(p);
    },
    [mode, idOf, pieceOf],
  );

  const idCellText = useMemo(() => {
    let max = 0;
    for (const v of promptIds) if (v > max) max = v;
    for (const v of outputIds) if (v > max) max = v;
    return '0'.repeat(Math.max(1, String(max).length));
  }, [promptIds, outputIds]);

  const chipWidth = useCallback(
    (i: number) => {
      if (!box) return 0;
      const text = mode === 'ids' ? idCellText : labelOf(i);
      return Math.min(Math.ceil(box.measure(text)) + CHIP_PAD, box.width - CHIP_GAP);
    },
    [box, mode, idCellText, labelOf],
  );

  const layout = useMemo(() => {
    if (!box) return null;
    const fixed = mode === 'ids' ? chipWidth(0) + CHIP_GAP : 0;
    return layoutTokens({
      promptCount: P,
      outputCount: O,
      width: box.width,
      cellWidth: mode === 'ids' ? () => fixed : (i) => chipWidth(i) + CHIP_GAP,
      breakAfter: mode === 'pieces' ? (i) => pieceEndsLine(pieceOf(i)) : undefined,
    });
  }, [box, mode, P, O, chipWidth, pieceOf]);

  const stats = useMemo(() => logprobStats(outputLogprobs), [outputLogprobs]);

  const renderRow = useCallback(
    (r: number) => {
      if (!layout) return null;
      if (layout.rowKind[r] === ROW_KIND_SEPARATOR) {
        return (
          <div className="tok-sep">
            <span>
              ▼ output · {formatInt(O)} tokens · mean logprob {formatLogprob(stats.mean)}
            </span>
          </div>
        );
      }
      const cells = [];
      for (let i = layout.rowStart[r], end = rowEnd(layout, r); i < end; i++) {
        const isPrompt = i < P;
        const piece = mode === 'pieces' ? pieceOf(i) : undefined;
        let cls = isPrompt ? 'tok tok-prompt' : `tok lp${logprobBucket(outputLogprobs[i - P])}`;
        if (piece !== undefined && SPECIAL.test(piece)) cls += ' tok-special';
        cells.push(
          <span key={i} className={cls} data-i={i} style={{ width: chipWidth(i) }}>
            {labelOf(i)}
          </span>,
        );
      }
      return <div className="tok-row">{cells}</div>;
    },
    [layout, O, P, stats.mean, mode, pieceOf, outputLogprobs, chipWidth, labelOf],
  );

  const onOver = (e: MouseEvent<HTMLDivElement>) => {
    const t = (e.target as HTMLElement).closest<HTMLElement>('[data-i]');
    if (!t) return tip.current?.show(null);
    const i = Number(t.dataset.i);
    if (tip.current?.current()?.index === i) return;
    const rect = t.getBoundingClientRect();
    tip.current?.show({
      index: i,
      promptCount: P,
      id: idOf(i),
      piece: pieceOf(i),
      logprob: i >= P ? outputLogprobs[i - P] : undefined,
      rect: { left: rect.left, top: rect.top, bottom: rect.bottom },
    });
  };

  const hideTip = useCallback(() => {
    if (tip.current?.current()) tip.current.show(null);
  }, []);

  const rowCount = layout?.rowCount ?? 0;
  const height = Math.min(MAX_HEIGHT, Math.max(3, rowCount) * ROW_H + 2 + 8);

  return (
    <div className="tokview">
      <div className="tokview-bar">
        <span className="tokview-counts">
          <strong>{formatInt(P)}</strong> prompt · <strong>{formatInt(O)}</strong> output tokens
          {stats.count > 0 && (
            <>
              {' '}
              · min logprob <span className="mono">{formatLogprob(stats.min)}</span>
            </>
          )}
        </span>
        <span className="spacer" />
        <div className="seg" role="group" aria-label="Token display">
          <button
            type="button"
            className={mode === 'pieces' ? 'on' : ''}
            aria-pressed={mode === 'pieces'}
            disabled={!hasPieces}
            title={hasPieces ? 'Show decoded piece text' : 'The API returned no piece text for this completion'}
            onClick={() => setMode('pieces')}
          >
            Pieces
          </button>
          <button type="button" className={mode === 'ids' ? 'on' : ''} aria-pressed={mode === 'ids'} onClick={() => setMode('ids')}>
            Ids
          </button>
        </div>
        <button
          type="button"
          className="btn btn-small"
          disabled={!layout || layout.separatorRow < 0}
          onClick={() => layout && list.current?.scrollToRow(layout.separatorRow, 'start')}
        >
          Jump to output
        </button>
        <button
          type="button"
          className="btn btn-small"
          disabled={!layout || stats.minIndex < 0}
          title="Scroll to the least likely output token"
          onClick={() => layout && list.current?.scrollToRow(rowOfToken(layout, P + stats.minIndex), 'center')}
        >
          Least likely
        </button>
      </div>
      <VirtualRows
        ref={list}
        className="tok-list"
        rowCount={rowCount}
        rowHeight={ROW_H}
        renderRow={renderRow}
        onWidth={onWidth}
        style={{ height }}
        tabIndex={0}
        aria-label={`Token view: ${P} prompt and ${O} output tokens`}
        onMouseOver={onOver}
        onMouseLeave={hideTip}
        onScroll={hideTip}
      />
      <LogprobLegend />
      <TokenTooltip ref={tip} />
    </div>
  );
}
