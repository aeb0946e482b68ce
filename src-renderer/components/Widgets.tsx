// Small building blocks: batch progress bar, stat tiles, copyable code blocks, and a keyboard
// navigation hook for lists and tables (↑/↓/PageUp/PageDown/Home/End/Enter).
import { useCallback, useEffect, useRef, useState, type KeyboardEvent, type ReactNode } from 'react';
import type { BatchCounts } from '../backend/types.js';
import { formatInt } from '../lib/format.js';

export function ProgressBar({ counts, label }: { counts: BatchCounts; label?: string }) {
  const total = Math.max(1, counts.total);
  const pct = (n: number) => `${(100 * n) / total}%`;
  const done = counts.done;
  return (
    <div
      className="progress"
      role="progressbar"
      aria-label={label ?? 'Batch progress'}
      aria-valuemin={0}
      aria-valuemax={counts.total}
      aria-valuenow={done}
      title={`${formatInt(counts.finished)} finished · ${formatInt(counts.failed)} failed · ${formatInt(counts.interrupted)} interrupted · ${formatInt(counts.running)} running · ${formatInt(counts.queued)} queued`}
    >
      <div className="progress-track">
        <span className="progress-seg seg-finished" style={{ width: pct(counts.finished) }} />
        <span className="progress-seg seg-failed" style={{ width: pct(counts.failed + counts.interrupted) }} />
        <span className="progress-seg seg-running" style={{ width: pct(counts.running) }} />
      </div>
      <span className="progress-label mono">
        {formatInt(done)}/{formatInt(counts.total)}
      </span>
    </div>
  );
}

export function StatTile({ label, value, hint, tone }: { label: string; value: ReactNode; hint?: ReactNode; tone?: 'good' | 'bad' | 'warn' | 'info' }) {
  return (
    <div className={`tile ${tone ? `tile-${tone}` : ''}`}>
      <div className="tile-label">{label}</div>
      <div className="tile-value">{value}</div>
      {hint && <div className="tile-hint">{hint}</div>}
    </div>
  );
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      setState('failed');
    }
    setTimeout(() => setState('idle'), 1400);
  };
  return (
    <button type="button" className="btn btn-small" onClick={() => void copy()}>
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed: select the text' : label}
    </button>
  );
}

export function CodeBlock({ title, text, testId }: { title: ReactNode; text: string; testId?: string }) {
  return (
    <section className="codeblock" data-testid={testId}>
      <header className="codeblock-head">
        <span className="codeblock-title">{title}</span>
        <span className="spacer" />
        <CopyButton text={text} />
      </header>
      <pre className="codeblock-body" tabIndex={0}>
        {text}
      </pre>
    </section>
  );
}

/**
 * Keyboard navigation for a list of `count` items: returns the selected index (clamped), a setter and
 * an onKeyDown for the focusable container. `onOpen` runs on Enter. Selected rows should scroll into
 * view: rows carry `data-index`, and the hook scrolls the container to the selected one.
 */
export function useListKeys(count: number, onOpen?: (index: number) => void, initial = 0) {
  const [index, setIndex] = useState(initial);
  const ref = useRef<HTMLDivElement & HTMLTableSectionElement>(null);
  const clamped = count === 0 ? -1 : Math.max(0, Math.min(count - 1, index));
  const first = useRef(true);
  useEffect(() => {
    // Scroll the list itself, never the page around it, and not on first render: a view must open at
    // its top, not scrolled down to a table's first row.
    if (first.current) {
      first.current = false;
      return;
    }
    const box = ref.current;
    const el = box?.querySelector<HTMLElement>(`[data-index="${clamped}"]`);
    if (!box || !el) return;
    const head = box.querySelector('thead')?.getBoundingClientRect().height ?? 0;
    const b = box.getBoundingClientRect();
    const r = el.getBoundingClientRect();
    if (r.top < b.top + head) box.scrollTop -= b.top + head - r.top;
    else if (r.bottom > b.bottom) box.scrollTop += r.bottom - b.bottom;
  }, [clamped]);
  const onKeyDown = useCallback(
    (e: KeyboardEvent) => {
      if (count === 0) return;
      const page = 10;
      const moves: Record<string, () => number> = {
        ArrowDown: () => clamped + 1,
        ArrowUp: () => clamped - 1,
        PageDown: () => clamped + page,
        PageUp: () => clamped - page,
        Home: () => 0,
        End: () => count - 1,
      };
      if (moves[e.key]) {
        e.preventDefault();
        setIndex(Math.max(0, Math.min(count - 1, moves[e.key]())));
      } else if (e.key === 'Enter' && onOpen && clamped >= 0) {
        e.preventDefault();
        onOpen(clamped);
      }
    },
    [count, clamped, onOpen],
  );
  return { index: clamped, setIndex, onKeyDown, ref };
}
