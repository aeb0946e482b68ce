// Windowed list of fixed-height rows: only the rows in view (plus a little overscan) are in the DOM,
// so a list of a million rows scrolls like a list of twenty. Rows are keyed by slot (row % slots), so
// scrolling updates the existing row elements in place instead of unmounting and creating new ones,
// and while the list scrolls its rows ignore the pointer (no hover hit-testing on every frame).
import {
  forwardRef,
  memo,
  useCallback,
  useEffect,
  useImperativeHandle,
  useLayoutEffect,
  useRef,
  useState,
  type HTMLAttributes,
  type ReactNode,
  type UIEvent,
} from 'react';

export interface VirtualRowsHandle {
  scrollToRow(row: number, align?: 'start' | 'center' | 'nearest'): void;
  element(): HTMLDivElement | null;
}

interface Props extends Omit<HTMLAttributes<HTMLDivElement>, 'children'> {
  rowCount: number;
  rowHeight: number;
  renderRow: (row: number) => ReactNode;
  overscan?: number;
  /** Called with the container's inner width whenever it changes. */
  onWidth?: (width: number) => void;
}

/** A row re-renders only when its index or the render function changes, not on every scroll. */
const Row = memo(function Row({ r, rowHeight, renderRow }: { r: number; rowHeight: number; renderRow: (row: number) => ReactNode }) {
  return (
    <div className="vrow" data-row={r} style={{ transform: `translateY(${r * rowHeight}px)`, height: rowHeight }}>
      {renderRow(r)}
    </div>
  );
});

export const VirtualRows = forwardRef<VirtualRowsHandle, Props>(function VirtualRows(
  { rowCount, rowHeight, renderRow, overscan = 6, onWidth, onScroll: onScrollProp, className, ...rest },
  ref,
) {
  const outer = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [viewport, setViewport] = useState(600);
  const frame = useRef(0);
  const scrollEnd = useRef<ReturnType<typeof setTimeout> | null>(null);

  useLayoutEffect(() => {
    const el = outer.current;
    if (!el) return;
    const measure = () => {
      setViewport(el.clientHeight || 600);
      onWidth?.(el.clientWidth);
    };
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, [onWidth]);

  useEffect(
    () => () => {
      cancelAnimationFrame(frame.current);
      if (scrollEnd.current) clearTimeout(scrollEnd.current);
    },
    [],
  );

  const onScroll = useCallback((e: UIEvent<HTMLDivElement>) => {
    onScrollProp?.(e);
    const el = outer.current;
    if (el && !scrollEnd.current) el.classList.add('vlist-scrolling');
    if (scrollEnd.current) clearTimeout(scrollEnd.current);
    scrollEnd.current = setTimeout(() => {
      scrollEnd.current = null;
      outer.current?.classList.remove('vlist-scrolling');
    }, 120);
    cancelAnimationFrame(frame.current);
    frame.current = requestAnimationFrame(() => {
      if (outer.current) setScrollTop(outer.current.scrollTop);
    });
  }, [onScrollProp]);

  useImperativeHandle(
    ref,
    () => ({
      element: () => outer.current,
      scrollToRow(row, align = 'nearest') {
        const el = outer.current;
        if (!el) return;
        const top = row * rowHeight;
        const bottom = top + rowHeight;
        let next = el.scrollTop;
        if (align === 'start') next = top;
        else if (align === 'center') next = top - (el.clientHeight - rowHeight) / 2;
        else if (top < el.scrollTop) next = top;
        else if (bottom > el.scrollTop + el.clientHeight) next = bottom - el.clientHeight;
        el.scrollTop = Math.max(0, next);
        setScrollTop(el.scrollTop);
      },
    }),
    [rowHeight],
  );

  const first = Math.max(0, Math.floor(scrollTop / rowHeight) - overscan);
  const last = Math.min(rowCount, Math.ceil((scrollTop + viewport) / rowHeight) + overscan);
  // Enough slots for every row that can be on screen at once, so keys never collide.
  const slots = Math.ceil(viewport / rowHeight) + 2 * overscan + 2;
  const rows: ReactNode[] = [];
  for (let r = first; r < last; r++) {
    rows.push(<Row key={r % slots} r={r} rowHeight={rowHeight} renderRow={renderRow} />);
  }

  return (
    <div ref={outer} className={`vlist ${className ?? ''}`} {...rest} onScroll={onScroll}>
      <div className="vlist-inner" style={{ height: rowCount * rowHeight }}>
        {rows}
      </div>
    </div>
  );
});
