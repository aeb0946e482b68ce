// Schema 7 conversion: rewrites every completion stored in full (schema ≤ 5) into delta form, one session
// at a time, in seq order. Each rewritten row is decoded again and compared with the original before it is
// written; a row that would not read back identically stays in full (nothing is ever lost to a conversion).
import type Database from 'better-sqlite3';
import type { CompletionRecord } from '../core/types.js';
import { DeltaBases } from './delta-bases.js';
import { rowToCompletion, type CompletionRow } from './rows.js';

export interface ConversionStats {
  sessions: number;
  rows: number;
  converted: number;
  keptFull: number;
}

function sameRecord(a: CompletionRecord, b: CompletionRecord): boolean {
  const bytes = (x: Int32Array | Float32Array) => Buffer.from(x.buffer, x.byteOffset, x.byteLength);
  return bytes(a.promptIds).equals(bytes(b.promptIds))
    && bytes(a.outputIds).equals(bytes(b.outputIds))
    && bytes(a.outputLogprobs).equals(bytes(b.outputLogprobs))
    && JSON.stringify(a.requestReceived) === JSON.stringify(b.requestReceived)
    && JSON.stringify(a.requestServed) === JSON.stringify(b.requestServed)
    && JSON.stringify(a.response) === JSON.stringify(b.response);
}

export function convertToDeltas(db: Database.Database): ConversionStats {
  const stats: ConversionStats = { sessions: 0, rows: 0, converted: 0, keptFull: 0 };
  const sessions = db.prepare('SELECT DISTINCT session_id FROM completions').pluck().all() as string[];
  const rowsOf = db.prepare('SELECT * FROM completions WHERE session_id = ? ORDER BY seq, created_at, id');
  const update = db.prepare(`UPDATE completions SET parent_id = @parent_id, prompt_base = @prompt_base, prompt_ids = @prompt_ids,
    request_received = @request_received, request_served = @request_served, response = @response WHERE id = @id`);
  for (const sid of sessions) {
    stats.sessions++;
    const bases = new DeltaBases(Number.MAX_SAFE_INTEGER);
    const decoded = new Map<string, CompletionRecord>();
    // .all(): better-sqlite3 allows no write while a read cursor is open on the same connection
    for (const row of rowsOf.all(sid) as CompletionRow[]) {
      stats.rows++;
      const rec = rowToCompletion(row, (id) => decoded.get(id)!);
      decoded.set(rec.id, rec);
      const { params } = bases.encode(rec, row.body_hash);
      const check = rowToCompletion({ ...row, ...params } as CompletionRow, (id) => decoded.get(id)!);
      if (sameRecord(rec, check)) {
        update.run(params);
        stats.converted++;
      } else stats.keptFull++;
    }
  }
  return stats;
}
