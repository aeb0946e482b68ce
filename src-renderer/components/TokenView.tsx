// Token view of one completion or one training trace: prompt ids (grey) then output ids coloured by
// logprob. With a loss mask (traces API) the overlay marks every token as context (grey), mask 0
// (hatched: not trained, e.g. tool results) or mask 1 (coloured by logprob, underlined), and turn
// boundaries / chain breaks get markers. Rows are laid out in JS (lib/tokenLayout) and windowed
// (VirtualRows), so only visible tokens are in the DOM and a 200k-token trace scrolls smoothly.
import { useCallback, useLayoutEffect, useMemo, useRef, useState, type MouseEvent } from 'react';
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

export type TokenMarker = { kind: 'turn' | 'break'; label: string };

export interface TokenViewProps {
  promptIds: ArrayLike<number>;
  outputIds: ArrayLike<number>;
  outputLogprobs: ArrayLike<number>;
  promptPieces?: string[];
  outputPieces?: string[];
  /**
   * Loss mask over prompt + output (unified index): -1 context (no loss), 0 not trained, 1 trained.
   * When present the view offers a "Loss mask" overlay (on by default).
   */
  mask?: Int8Array;
  /** Logprob of token i (unified index) where the default (output logprobs) does not cover it. */
  logprobAt?: (i: number) => number | undefined;
  /** Markers at unified token indices (turn starts, chain breaks). */
  markers?: Map<number, TokenMarker>;
  /** Separator text between prompt and output ("output", "response"). */
  outputLabel?: string;
  testId?: string;
}

interface Box { width: number; measure: Measure }

export function TokenView({ promptIds, outputIds, outputLogprobs, promptPieces, outputPieces, mask, logprobAt, markers, outputLabel = 'output', testId }: TokenViewProps) {
  const requested = useUi((s) => s.tokenMode);
  const setMode = useUi((s) => s.setTokenMode);
  const [overlay, setOverlay] = useState(true);
  const hasPieces = !!promptPieces && !!outputPieces;
  const mode = hasPieces ? requested : 'ids';
  const P = promptIds.length;
  const O = outputIds.length;
  const masked = !!mask && overlay;

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
  const lpOf = useCallback(
    (i: number): number | undefined => (i >= P ? outputLogprobs[i - P] : logprobAt?.(i)),
    [P, outputLogprobs, logprobAt],
  );
  const rawLabel = useCallback(
    (i: number) => {
      if (mode === 'ids') return String(idOf(i));
      const p = pieceOf(i);
      return p === undefined ? String(idOf(i)) : displayPiece(p);
    },
    [mode, idOf, pieceOf],
  );
  /** The chip text; a piece wider than the row is cut to fit, with an ellipsis. */
  const labelOf = useCallback(
    (i: number) => {
      const text = rawLabel(i);
      if (!box || mode === 'ids') return text;
      const max = box.width - CHIP_GAP - CHIP_PAD;
      if (text.length < 8 || box.measure(text) <= max) return text;
      let n = Math.floor((text.length * max) / box.measure(text));
      while (n > 1 && box.measure(`${text.slice(0, n)}…`) > max) n--;
      return `${text.slice(0, n)}…`;
    },
    [rawLabel, box, mode],
  );

  const idCellText = useMemo(() => {
    let max = 0;
    for (let i = 0; i < P; i++) if (promptIds[i] > max) max = promptIds[i];
    for (let i = 0; i < O; i++) if (outputIds[i] > max) max = outputIds[i];
    return '0'.repeat(Math.max(1, String(max).length));
  }, [P, O, promptIds, outputIds]);

  const chipWidth = useCallback(
    (i: number) => {
      if (!box) return 0;
      const text = mode === 'ids' ? idCellText : rawLabel(i);
      return Math.min(Math.ceil(box.measure(text)) + CHIP_PAD, box.width - CHIP_GAP);
    },
    [box, mode, idCellText, rawLabel],
  );

  // Per-token chip widths (filled while laying out), labels and special-token flags (filled lazily as
  // rows render), so a scroll frame does no measuring or regex work for tokens it has seen before.
  const layout = useMemo(() => {
    if (!box) return null;
    const n = P + O;
    const widths = new Float32Array(n);
    const labels: Array<string | undefined> = new Array(n);
    const special = new Int8Array(n); // 0 unknown, 1 special, 2 plain
    const fixed = mode === 'ids' ? chipWidth(0) : 0;
    if (mode === 'ids') widths.fill(fixed);
    const rows = layoutTokens({
      promptCount: P,
      outputCount: O,
      width: box.width,
      cellWidth:
        mode === 'ids'
          ? () => fixed + CHIP_GAP
          : (i) => {
              const w = chipWidth(i);
              widths[i] = w;
              return w + CHIP_GAP;
            },
      breakAfter: mode === 'pieces' ? (i) => pieceEndsLine(pieceOf(i)) : undefined,
    });
    return { ...rows, widths, labels, special };
  }, [box, mode, P, O, chipWidth, pieceOf]);

  const stats = useMemo(() => logprobStats(outputLogprobs), [outputLogprobs]);
  const maskCounts = useMemo(() => {
    if (!mask) return null;
    let m1 = 0;
    let m0 = 0;
    let m1Out = 0;
    for (let i = 0; i < mask.length; i++) {
      if (mask[i] === 1) {
        m1++;
        if (i >= P) m1Out++;
      } else if (mask[i] === 0) m0++;
    }
    return { m1, m0, m1Out };
  }, [mask, P]);
  const breakAt = useMemo(() => {
    if (!markers) return -1;
    for (const [i, m] of markers) if (m.kind === 'break') return i;
    return -1;
  }, [markers]);

  /** Class, width and text of chip i (cached per token where it costs anything). */
  const chip = useCallback(
    (i: number): Chip => {
      const { widths, labels, special } = layout!;
      let cls: string;
      if (masked) {
        const m = mask![i];
        cls = m === 1 ? `tok lp${logprobBucket(lpOf(i))} tok-m1` : m === 0 ? 'tok tok-m0' : 'tok tok-prompt';
      } else cls = i < P ? 'tok tok-prompt' : `tok lp${logprobBucket(outputLogprobs[i - P])}`;
      if (mode === 'pieces') {
        if (special[i] === 0) {
          const piece = pieceOf(i);
          special[i] = piece !== undefined && SPECIAL.test(piece) ? 1 : 2;
        }
        if (special[i] === 1) cls += ' tok-special';
      }
      const mk = markers?.get(i);
      if (mk) cls += mk.kind === 'break' ? ' tok-break' : ' tok-turn';
      return { cls, width: widths[i], text: labels[i] ?? (labels[i] = labelOf(i)) };
    },
    [layout, masked, mask, lpOf, P, outputLogprobs, mode, pieceOf, markers, labelOf],
  );

  const renderRow = useCallback(
    (r: number) => {
      if (!layout) return null;
      if (layout.rowKind[r] === ROW_KIND_SEPARATOR) {
        return (
          <div className="tok-sep">
            <span>
              ▼ {outputLabel} · {formatInt(O)} tokens
              {maskCounts ? ` · ${formatInt(maskCounts.m1Out)} trained` : ''} · mean logprob {formatLogprob(stats.mean)}
            </span>
          </div>
        );
      }
      return <ChipRow r={r} chip={chip} start={layout.rowStart[r]} end={rowEnd(layout, r)} />;
    },
    [layout, O, stats.mean, chip, maskCounts, outputLabel],
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
      logprob: lpOf(i),
      mask: mask ? mask[i] : undefined,
      marker: markers?.get(i)?.label,
      outputLabel,
      rect: { left: rect.left, top: rect.top, bottom: rect.bottom },
    });
  };

  const hideTip = useCallback(() => {
    if (tip.current?.current()) tip.current.show(null);
  }, []);

  const rowCount = layout?.rowCount ?? 0;
  const height = Math.min(MAX_HEIGHT, Math.max(3, rowCount) * ROW_H + 2 + 8);

  return (
    <div className="tokview" data-testid={testId}>
      <div className="tokview-bar">
        <span className="tokview-counts">
          <strong>{formatInt(P)}</strong> prompt · <strong>{formatInt(O)}</strong> {outputLabel} tokens
          {maskCounts && (
            <>
              {' '}
              · <strong>{formatInt(maskCounts.m1)}</strong> mask 1 · {formatInt(maskCounts.m0)} mask 0
            </>
          )}
          {stats.count > 0 && (
            <>
              {' '}
              · min logprob <span className="mono">{formatLogprob(stats.min)}</span>
            </>
          )}
        </span>
        <span className="spacer" />
        {mask && (
          <label className="check">
            <input type="checkbox" checked={overlay} onChange={(e) => setOverlay(e.target.checked)} /> Loss mask
          </label>
        )}
        <div className="seg" role="group" aria-label="Token display">
          <button
            type="button"
            className={mode === 'pieces' ? 'on' : ''}
            aria-pressed={mode === 'pieces'}
            disabled={!hasPieces}
            title={hasPieces ? 'Show decoded piece text' : 'The API returned no piece text for these tokens'}
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
          Jump to {outputLabel}
        </button>
        {breakAt >= 0 && (
          <button type="button" className="btn btn-small" onClick={() => layout && list.current?.scrollToRow(rowOfToken(layout, breakAt), 'center')}>
            Jump to break
          </button>
        )}
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
        aria-label={`Token view: ${P} prompt and ${O} ${outputLabel} tokens`}
        onMouseOver={onOver}
        onMouseLeave={hideTip}
        onScroll={hideTip}
      />
      <LogprobLegend mask={!!mask && overlay} />
      <TokenTooltip ref={tip} />
    </div>
  );
}

interface Chip { cls: string; width: number; text: string }

/**
 * One row of chips, written to the DOM directly: a scroll frame changes which rows are shown, and
 * updating a recycled row's spans in place (text, class, width) costs far less than having React
 * create and diff hundreds of elements per frame.
 */
function ChipRow({ r, start, end, chip }: { r: number; start: number; end: number; chip: (i: number) => Chip }) {
  const ref = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    const row = ref.current;
    if (!row) return;
    const n = end - start;
    while (row.childElementCount > n) row.lastElementChild!.remove();
    while (row.childElementCount < n) row.appendChild(document.createElement('span'));
    let el = row.firstElementChild as HTMLElement | null;
    for (let i = start; i < end && el; i++, el = el.nextElementSibling as HTMLElement | null) {
      const c = chip(i);
      if (el.className !== c.cls) el.className = c.cls;
      el.dataset.i = String(i);
      el.style.width = `${c.width}px`;
      if (el.textContent !== c.text) el.textContent = c.text;
    }
  }, [r, start, end, chip]);
  return <div className="tok-row" ref={ref} />;
}
