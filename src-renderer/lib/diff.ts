// Sequence diff (Myers' O(ND) algorithm) for lines, words and token ids. Pure. Common prefix and
// suffix are trimmed first; when the edit distance exceeds `maxD` the middle is reported as one
// replacement, so a diff of two unrelated 100k-token sequences stays bounded in time and memory.

export type DiffOp = 'equal' | 'delete' | 'insert';

/** A run of equal / deleted (from A) / inserted (from B) items. `a` and `b` are start indices. */
export interface DiffHunk<T> {
  op: DiffOp;
  a: number;
  b: number;
  items: T[];
}

export interface DiffResult<T> {
  hunks: DiffHunk<T>[];
  /** The middle part was too different to diff item by item within maxD. */
  approximate: boolean;
  equal: number;
  deleted: number;
  inserted: number;
}

function push<T>(out: DiffHunk<T>[], op: DiffOp, a: number, b: number, item: T): void {
  const last = out[out.length - 1];
  if (last && last.op === op) last.items.push(item);
  else out.push({ op, a, b, items: [item] });
}

/** Edit script between a[lo..hiA) and b[lo..hiB) as (op, item) steps, or null when D > maxD. */
function myers<T>(a: ArrayLike<T>, b: ArrayLike<T>, aLo: number, aHi: number, bLo: number, bHi: number, maxD: number, eq: (x: T, y: T) => boolean): Array<[DiffOp, number, number]> | null {
  const n = aHi - aLo;
  const m = bHi - bLo;
  const max = Math.min(n + m, maxD);
  const off = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let found = -1;
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice(off - d - 1, off + d + 2)); // k in [-d-1, d+1] → index k + d + 1
    for (let k = -d; k <= d; k += 2) {
      let x: number;
      if (k === -d || (k !== d && v[off + k - 1] < v[off + k + 1])) x = v[off + k + 1];
      else x = v[off + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && eq(a[aLo + x], b[bLo + y])) {
        x++;
        y++;
      }
      v[off + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
    if (found >= 0) break;
  }
  if (found < 0) return null;
  // Backtrack.
  const steps: Array<[DiffOp, number, number]> = [];
  let x = n;
  let y = m;
  for (let d = found; d > 0; d--) {
    const vd = trace[d];
    const at = (kk: number) => vd[kk + d + 1];
    const k = x - y;
    const down = k === -d || (k !== d && at(k - 1) < at(k + 1));
    const prevK = down ? k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      x--;
      y--;
      steps.push(['equal', x, y]);
    }
    if (down) {
      y--;
      steps.push(['insert', x, y]);
    } else {
      x--;
      steps.push(['delete', x, y]);
    }
  }
  while (x > 0 && y > 0) {
    x--;
    y--;
    steps.push(['equal', x, y]);
  }
  steps.reverse();
  return steps;
}

export function diffSequences<T>(a: ArrayLike<T>, b: ArrayLike<T>, opts: { maxD?: number; eq?: (x: T, y: T) => boolean } = {}): DiffResult<T> {
  const eq = opts.eq ?? ((x: T, y: T) => x === y);
  const maxD = opts.maxD ?? 1000;
  let pre = 0;
  const minLen = Math.min(a.length, b.length);
  while (pre < minLen && eq(a[pre], b[pre])) pre++;
  let suf = 0;
  while (suf < minLen - pre && eq(a[a.length - 1 - suf], b[b.length - 1 - suf])) suf++;
  const aHi = a.length - suf;
  const bHi = b.length - suf;
  const hunks: DiffHunk<T>[] = [];
  for (let i = 0; i < pre; i++) push(hunks, 'equal', i, i, a[i]);
  let approximate = false;
  const steps = myers(a, b, pre, aHi, pre, bHi, maxD, eq);
  if (steps) {
    for (const [op, x, y] of steps) push(hunks, op, pre + x, pre + y, op === 'insert' ? b[pre + y] : a[pre + x]);
  } else {
    approximate = true;
    for (let i = pre; i < aHi; i++) push(hunks, 'delete', i, pre, a[i]);
    for (let j = pre; j < bHi; j++) push(hunks, 'insert', aHi, j, b[j]);
  }
  for (let i = 0; i < suf; i++) push(hunks, 'equal', aHi + i, bHi + i, a[aHi + i]);
  let equal = 0;
  let deleted = 0;
  let inserted = 0;
  for (const h of hunks) {
    if (h.op === 'equal') equal += h.items.length;
    else if (h.op === 'delete') deleted += h.items.length;
    else inserted += h.items.length;
  }
  return { hunks, approximate, equal, deleted, inserted };
}

/** Side-by-side rows: equal lines pair up; a delete run pairs with the insert run after it. */
export interface SideRow {
  kind: 'equal' | 'change' | 'fold';
  left: { n: number; text: string } | null;
  right: { n: number; text: string } | null;
  /** For folds: how many equal lines are hidden. */
  hidden?: number;
}

export function sideBySide(a: string[], b: string[], opts: { context?: number; maxD?: number } = {}): { rows: SideRow[]; result: DiffResult<string> } {
  const context = opts.context ?? 3;
  const result = diffSequences(a, b, { maxD: opts.maxD ?? 1500 });
  const rows: SideRow[] = [];
  const hs = result.hunks;
  for (let h = 0; h < hs.length; h++) {
    const hunk = hs[h];
    if (hunk.op === 'equal') {
      const len = hunk.items.length;
      const keepHead = h === 0 ? 0 : context;
      const keepTail = h === hs.length - 1 ? 0 : context;
      const show = (i: number) => rows.push({ kind: 'equal', left: { n: hunk.a + i + 1, text: hunk.items[i] }, right: { n: hunk.b + i + 1, text: hunk.items[i] } });
      if (len <= keepHead + keepTail + 1) for (let i = 0; i < len; i++) show(i);
      else {
        for (let i = 0; i < keepHead; i++) show(i);
        rows.push({ kind: 'fold', left: null, right: null, hidden: len - keepHead - keepTail });
        for (let i = len - keepTail; i < len; i++) show(i);
      }
      continue;
    }
    const del = hunk.op === 'delete' ? hunk : null;
    const ins = hunk.op === 'insert' ? hunk : hs[h + 1]?.op === 'insert' && del ? hs[h + 1] : null;
    if (del && ins) h++;
    const n = Math.max(del?.items.length ?? 0, ins?.items.length ?? 0);
    for (let i = 0; i < n; i++) {
      rows.push({
        kind: 'change',
        left: del && i < del.items.length ? { n: del.a + i + 1, text: del.items[i] } : null,
        right: ins && i < ins.items.length ? { n: ins.b + i + 1, text: ins.items[i] } : null,
      });
    }
  }
  return { rows, result };
}

/** Words and the whitespace between them, so a word diff can be joined back into the text. */
export function splitWords(text: string): string[] {
  return text.match(/\s+|[\p{L}\p{N}_]+|[^\s\p{L}\p{N}_]/gu) ?? [];
}
