// Sortable headers and the query box shared by the workbench's tables (logic in lib/tableQuery.ts).
import { useMemo, useState } from 'react';
import { filterRows, nextSort, sortRows, unknownFields, type Column, type Sort } from '../lib/tableQuery.js';

export interface TableState<T> {
  rows: T[];
  sort: Sort | null;
  setSort(s: Sort | null): void;
  query: string;
  setQuery(q: string): void;
  unknown: string[];
}

/** Filtered and sorted rows; the query and sort live in the component (or come from the URL). */
export function useTable<T>(rows: readonly T[], columns: readonly Column<T>[], init: { sort?: Sort | null; query?: string } = {}): TableState<T> {
  const [sort, setSort] = useState<Sort | null>(init.sort ?? null);
  const [query, setQuery] = useState(init.query ?? '');
  const visible = useMemo(() => sortRows(filterRows(rows, columns, query), columns, sort), [rows, columns, query, sort]);
  const unknown = useMemo(() => unknownFields(columns, query), [columns, query]);
  return { rows: visible, sort, setSort, query, setQuery, unknown };
}

export function SortTh<T>({ col, table }: { col: Column<T>; table: Pick<TableState<T>, 'sort' | 'setSort'> }) {
  const on = table.sort?.key === col.key ? table.sort.dir : null;
  return (
    <th className={col.num ? 'num' : ''} aria-sort={on === 'asc' ? 'ascending' : on === 'desc' ? 'descending' : 'none'} data-col={col.key}>
      <button type="button" className="th-sort" onClick={() => table.setSort(nextSort(table.sort, col.key, !!col.num))} title={`Sort by ${col.label.toLowerCase()}`}>
        {col.label}
        <span className="th-arrow" aria-hidden="true">{on === 'asc' ? '▲' : on === 'desc' ? '▼' : '↕'}</span>
      </button>
    </th>
  );
}

/** The query box with one-click presets (e.g. `reward:0`, `status:failed`). */
export function TableFilter<T>({ table, columns, presets = [], label, total, placeholder }: { table: TableState<T>; columns: readonly Column<T>[]; presets?: string[]; label: string; total: number; placeholder?: string }) {
  const fields = columns.map((c) => c.key).join(', ');
  return (
    <div className="table-filter">
      <input
        type="search"
        className="input"
        aria-label={label}
        placeholder={placeholder ?? `Filter: ${presets.join(' ') || 'field:value'} or words`}
        title={`field:value, field:>n, field:<n, field:!value, or words. Fields: ${fields}`}
        value={table.query}
        onChange={(e) => table.setQuery(e.target.value)}
      />
      {presets.map((p) => (
        <button key={p} type="button" className={`btn btn-small ${table.query === p ? 'on' : ''}`} aria-pressed={table.query === p} onClick={() => table.setQuery(table.query === p ? '' : p)}>
          {p}
        </button>
      ))}
      <span className="muted" data-testid="filter-count">
        {table.rows.length === total ? `${total}` : `${table.rows.length} of ${total}`}
      </span>
      {table.unknown.length > 0 && <span className="inline-error">unknown field {table.unknown.join(', ')} (fields: {fields})</span>}
    </div>
  );
}
