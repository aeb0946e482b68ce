// Row layout for the token view. Tokens are laid out left to right in rows of a fixed pixel width;
// prompt and output never share a row (a separator row sits between them). Pure and O(n), so a
// 200k-token prompt lays out in a few milliseconds and only visible rows need to be rendered.

export const ROW_KIND_PROMPT = 0;
export const ROW_KIND_SEPARATOR = 1;
export const ROW_KIND_OUTPUT = 2;

export interface TokenLayoutInput {
  promptCount: number;
  outputCount: number;
  /** Usable row width in px. */
  width: number;
  /** Width in px of token i (unified index: prompt tokens first, then output tokens). */
  cellWidth: (i: number) => number;
  /** Start a new row after token i (e.g. its piece ends with a newline). */
  breakAfter?: (i: number) => boolean;
}

export interface TokenLayout {
  /** Row r covers tokens [rowStart[r], rowStart[r + 1]). Length rowCount + 1. */
  rowStart: Int32Array;
  rowKind: Uint8Array;
  rowCount: number;
  /** Index of the separator row, -1 when there is no output. */
  separatorRow: number;
}

export function layoutTokens(input: TokenLayoutInput): TokenLayout {
  const { promptCount, outputCount, cellWidth, breakAfter } = input;
  const width = Math.max(1, input.width);
  const starts: number[] = [];
  const kinds: number[] = [];

  const flow = (from: number, to: number, kind: number) => {
    let x = 0;
    let rowOpen = false;
    for (let i = from; i < to; i++) {
      const w = cellWidth(i);
      if (!rowOpen || (x > 0 && x + w > width)) {
        starts.push(i);
        kinds.push(kind);
        rowOpen = true;
        x = 0;
      }
      x += w;
      if (breakAfter?.(i) && i + 1 < to) rowOpen = false;
    }
  };

  flow(0, promptCount, ROW_KIND_PROMPT);
  let separatorRow = -1;
  if (outputCount > 0 || promptCount > 0) {
    separatorRow = starts.length;
    starts.push(promptCount);
    kinds.push(ROW_KIND_SEPARATOR);
  }
  flow(promptCount, promptCount + outputCount, ROW_KIND_OUTPUT);

  const rowCount = starts.length;
  const rowStart = new Int32Array(rowCount + 1);
  for (let r = 0; r < rowCount; r++) rowStart[r] = starts[r];
  rowStart[rowCount] = promptCount + outputCount;
  // The separator row is empty: it ends where it starts.
  return { rowStart, rowKind: Uint8Array.from(kinds), rowCount, separatorRow };
}

/** End (exclusive) of row r; the separator row is empty. */
export function rowEnd(layout: TokenLayout, r: number): number {
  if (layout.rowKind[r] === ROW_KIND_SEPARATOR) return layout.rowStart[r];
  return layout.rowStart[r + 1];
}

/** Row holding token i: the last row starting at or before i (binary search). */
export function rowOfToken(layout: TokenLayout, i: number): number {
  let lo = 0;
  let hi = layout.rowCount - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (layout.rowStart[mid] <= i) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

const shown = new Map<string, string>();

/** Visible text of a piece: control characters made visible, never empty. Cached: pieces repeat. */
export function displayPiece(piece: string): string {
  let d = shown.get(piece);
  if (d === undefined) {
    d = piece === '' ? '∅' : piece.replace(/\r\n|[\n\r\t]/g, (c) => (c === '\t' ? '⇥' : c === '\r' ? '␍' : '↵'));
    if (shown.size > 200_000) shown.clear();
    shown.set(piece, d);
  }
  return d;
}

export function pieceEndsLine(piece: string | undefined): boolean {
  return !!piece && (piece.endsWith('\n') || piece.endsWith('\r'));
}
