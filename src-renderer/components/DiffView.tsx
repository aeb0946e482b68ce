// Side-by-side line diff (lib/diff.ts): unchanged runs fold to a line, changed lines are paired,
// deletions on the left in red, insertions on the right in green, with word-level highlights inside
// paired lines.
import { useMemo, useState, type ReactNode } from 'react';
import { diffSequences, sideBySide, splitWords } from '../lib/diff.js';
import { formatInt } from '../lib/format.js';

const ROW_LIMIT = 1500;

function WordDiff({ a, b, side }: { a: string; b: string; side: 'left' | 'right' }): ReactNode {
  const parts = useMemo(() => {
    if (a.length + b.length > 4000) return null;
    return diffSequences(splitWords(a), splitWords(b), { maxD: 200 });
  }, [a, b]);
  if (!parts || parts.approximate) return side === 'left' ? a : b;
  return parts.hunks
    .filter((h) => h.op === 'equal' || (side === 'left' ? h.op === 'delete' : h.op === 'insert'))
    .map((h, i) => (h.op === 'equal' ? <span key={i}>{h.items.join('')}</span> : <mark key={i} className={side === 'left' ? 'w-del' : 'w-ins'}>{h.items.join('')}</mark>));
}

export function DiffView({ left, right, leftTitle, rightTitle, context = 3, testId }: { left: string[]; right: string[]; leftTitle: ReactNode; rightTitle: ReactNode; context?: number; testId?: string }) {
  const [limit, setLimit] = useState(ROW_LIMIT);
  const { rows, result } = useMemo(() => sideBySide(left, right, { context }), [left, right, context]);
  const shown = rows.slice(0, limit);
  return (
    <div className="diff" data-testid={testId}>
      <div className="diff-summary muted">
        <span className="diff-del-n">−{formatInt(result.deleted)}</span> <span className="diff-ins-n">+{formatInt(result.inserted)}</span> lines ·{' '}
        {formatInt(result.equal)} unchanged
        {result.approximate && ' · too different to align line by line: shown as one replacement'}
      </div>
      <div className="diff-grid" role="table" aria-label="Side-by-side diff">
        <div className="diff-head" role="row">
          <span role="columnheader">{leftTitle}</span>
          <span role="columnheader">{rightTitle}</span>
        </div>
        {shown.map((r, i) =>
          r.kind === 'fold' ? (
            <div key={i} className="diff-fold" role="row">
              ⋯ {formatInt(r.hidden ?? 0)} unchanged lines
            </div>
          ) : (
            <div key={i} className={`diff-row diff-${r.kind}`} role="row">
              <span className={`diff-cell ${r.kind === 'change' && r.left ? 'd-del' : ''} ${!r.left ? 'd-empty' : ''}`} role="cell">
                <span className="diff-n">{r.left?.n ?? ''}</span>
                <span className="diff-text">{r.left ? r.kind === 'change' && r.right ? <WordDiff a={r.left.text} b={r.right.text} side="left" /> : r.left.text : ''}</span>
              </span>
              <span className={`diff-cell ${r.kind === 'change' && r.right ? 'd-ins' : ''} ${!r.right ? 'd-empty' : ''}`} role="cell">
                <span className="diff-n">{r.right?.n ?? ''}</span>
                <span className="diff-text">{r.right ? r.kind === 'change' && r.left ? <WordDiff a={r.left.text} b={r.right.text} side="right" /> : r.right.text : ''}</span>
              </span>
            </div>
          ),
        )}
        {rows.length > limit && (
          <button type="button" className="link diff-more" onClick={() => setLimit(limit + ROW_LIMIT)}>
            show {formatInt(Math.min(ROW_LIMIT, rows.length - limit))} more rows of {formatInt(rows.length - limit)}
          </button>
        )}
      </div>
    </div>
  );
}
