// Filter and sort for the workbench's tables. Pure.
//
// A query is space-separated terms: `field:value` (text fields: contains, case-insensitive; number
// fields: equals), `field:>n`, `field:>=n`, `field:<n`, `field:<=n`, `field:!value` (not), and bare words
// that must appear in some text field. `reward:0 status:failed`, `breaks:>0`, `calc-add`.

export type CellValue = string | number | null | undefined;

export interface Column<T> {
  key: string;
  label: string;
  /** Right-aligned, compared as numbers. */
  num?: boolean;
  value(row: T): CellValue;
}

export interface Sort { key: string; dir: 'asc' | 'desc' }

interface Term { field: string | null; op: '=' | '>' | '>=' | '<' | '<=' | '!'; value: string }

export function parseQuery(q: string): Term[] {
  const terms: Term[] = [];
  for (const raw of q.trim().split(/\s+/).filter(Boolean)) {
    const m = /^([a-zA-Z][\w-]*):(>=|<=|>|<|!)?(.*)$/.exec(raw);
    if (m) terms.push({ field: m[1].toLowerCase(), op: (m[2] as Term['op'] | undefined) ?? '=', value: m[3].toLowerCase() });
    else terms.push({ field: null, op: '=', value: raw.toLowerCase() });
  }
  return terms;
}

function test(v: CellValue, num: boolean, t: Term): boolean {
  if (num) {
    const x = typeof v === 'number' ? v : NaN;
    const y = Number(t.value);
    if (t.value === '') return true;
    if (t.value === 'none' || t.value === 'null' || t.value === '—') return t.op === '!' ? Number.isFinite(x) : !Number.isFinite(x);
    if (!Number.isFinite(y)) return false;
    if (!Number.isFinite(x)) return t.op === '!';
    switch (t.op) {
      case '>': return x > y;
      case '>=': return x >= y;
      case '<': return x < y;
      case '<=': return x <= y;
      case '!': return x !== y;
      default: return x === y;
    }
  }
  const s = v === null || v === undefined ? '' : String(v).toLowerCase();
  return t.op === '!' ? !s.includes(t.value) : s.includes(t.value);
}

/** The rows that match every term. Unknown fields match nothing, so a typo shows an empty table. */
export function filterRows<T>(rows: readonly T[], columns: readonly Column<T>[], query: string): T[] {
  const terms = parseQuery(query);
  if (terms.length === 0) return rows.slice();
  const byKey = new Map(columns.map((c) => [c.key.toLowerCase(), c]));
  const text = columns.filter((c) => !c.num);
  return rows.filter((r) =>
    terms.every((t) => {
      if (t.field === null) return text.some((c) => test(c.value(r), false, t));
      const c = byKey.get(t.field);
      return !!c && test(c.value(r), !!c.num, t);
    }),
  );
}

/** Unknown fields in the query (to tell the user), given the columns. */
export function unknownFields<T>(columns: readonly Column<T>[], query: string): string[] {
  const keys = new Set(columns.map((c) => c.key.toLowerCase()));
  return parseQuery(query).filter((t) => t.field !== null && !keys.has(t.field)).map((t) => t.field!);
}

/** Stable sort by one column; empty values last in either direction. */
export function sortRows<T>(rows: readonly T[], columns: readonly Column<T>[], sort: Sort | null): T[] {
  const out = rows.slice();
  const c = sort && columns.find((x) => x.key === sort.key);
  if (!c || !sort) return out;
  const sign = sort.dir === 'asc' ? 1 : -1;
  const empty = (v: CellValue) => v === null || v === undefined || v === '' || (typeof v === 'number' && !Number.isFinite(v));
  return out
    .map((r, i) => ({ r, i, v: c.value(r) }))
    .sort((a, b) => {
      if (empty(a.v) || empty(b.v)) return empty(a.v) === empty(b.v) ? a.i - b.i : empty(a.v) ? 1 : -1;
      const d = c.num ? (a.v as number) - (b.v as number) : String(a.v).localeCompare(String(b.v), undefined, { numeric: true });
      return d === 0 ? a.i - b.i : sign * d;
    })
    .map((x) => x.r);
}

/** Clicking a header: first its natural direction (numbers: descending), then the other, then off. */
export function nextSort(cur: Sort | null, key: string, num: boolean): Sort | null {
  const first: Sort['dir'] = num ? 'desc' : 'asc';
  if (!cur || cur.key !== key) return { key, dir: first };
  if (cur.dir === first) return { key, dir: first === 'asc' ? 'desc' : 'asc' };
  return null;
}
