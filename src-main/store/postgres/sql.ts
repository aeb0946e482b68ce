// The shared row codecs (../rows.ts, ../sessions.ts, ../batches.ts) produce named parameters for SQLite; these
// turn them into positional Postgres statements, and map the completions' JSON columns to BYTEA and back.
import type { CompletionRow } from '../rows.js';
import type { JsonColumn } from '../json-columns.js';
import type { SqlValues } from './connection.js';

/** Postgres allows 65,535 parameters per statement: multi-row inserts go in chunks below that. */
const MAX_PARAMS = 60_000;

/**
 * `INSERT INTO table (cols) VALUES ($1, …), ($n, …)` for many rows of named params, in as few statements as
 * the parameter limit allows. `suffix` follows each statement (e.g. ON CONFLICT …).
 */
export function insertStatements(table: string, columns: readonly string[], rows: ReadonlyArray<Record<string, unknown>>, suffix = ''): Array<{ text: string; values: SqlValues }> {
  const per = Math.max(1, Math.floor(MAX_PARAMS / columns.length));
  const out: Array<{ text: string; values: SqlValues }> = [];
  for (let start = 0; start < rows.length; start += per) {
    const chunk = rows.slice(start, start + per);
    const values: SqlValues = [];
    const tuples = chunk.map((row) => `(${columns.map((c) => { values.push(row[c] ?? null); return `$${values.length}`; }).join(', ')})`);
    out.push({ text: `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${tuples.join(', ')} ${suffix}`, values });
  }
  return out;
}

/**
 * `UPDATE table SET col = $n, … WHERE key = $1` from a patch encoded by a shared codec (`has_<col>` flags
 * next to the values), or null when the patch changes nothing.
 */
export function updateStatement(table: string, keyColumn: string, key: string, encoded: Record<string, unknown>): { text: string; values: SqlValues } | null {
  const values: SqlValues = [key];
  const sets: string[] = [];
  for (const [name, flag] of Object.entries(encoded)) {
    if (!name.startsWith('has_') || !flag) continue;
    const col = name.slice(4);
    values.push(encoded[col] ?? null);
    sets.push(`${col} = $${values.length}`);
  }
  return sets.length ? { text: `UPDATE ${table} SET ${sets.join(', ')} WHERE ${keyColumn} = $1`, values } : null;
}

export const COMPLETION_COLUMNS = [
  'id', 'session_id', 'seq', 'dialect', 'engine_id', 'replica', 'policy_version', 'request_received', 'request_served', 'response',
  'finish_reason', 'usage', 'queue_ms', 'ttft_ms', 'total_ms', 'status', 'error', 'retry_of', 'created_at', 'body_hash',
  'n_prompt', 'n_output', 'incomplete_reason', 'parent_id', 'prompt_base', 'prompt_ids', 'output_ids', 'output_logprobs',
] as const;

const JSON_COLUMNS = ['request_received', 'request_served', 'response'] as const;
/** Tag bytes json-columns.ts puts first in an encoded value (plain JSON text never starts with them). */
const MAX_TAG = 0x03;

/** Completion params as Postgres stores them: JSON text as its UTF-8 bytes (the columns are BYTEA). */
export function toPgCompletion(params: Record<string, unknown>): Record<string, unknown> {
  const out = { ...params };
  for (const c of JSON_COLUMNS) if (typeof out[c] === 'string') out[c] = Buffer.from(out[c], 'utf8');
  return out;
}

function fromBytea(v: Buffer | null): JsonColumn {
  if (v === null) return null;
  return v.length > 0 && v[0]! <= MAX_TAG ? v : v.toString('utf8');
}

/** A row read back from Postgres, in the shape the shared decoder (rowToCompletion) reads. */
export function fromPgCompletion(row: Record<string, unknown>): CompletionRow {
  const r = row as unknown as CompletionRow;
  for (const c of JSON_COLUMNS) r[c] = fromBytea(row[c] as Buffer | null);
  return r;
}
