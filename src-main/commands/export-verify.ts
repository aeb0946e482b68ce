// `rollgate export --verify FILE` (issue 14): re-checks a train-format JSONL export. Each row's digest must
// match its own ids, mask and logprobs (the file was not altered), and the trace rebuilt from the store now
// must carry the same digest (the file still says what the store holds). Rows are read one at a time; the
// store's rows for a session are rebuilt with the export's own pipeline once per session.
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { exportLines, newProgress, SESSION_STATUSES } from '../api/export.js';
import { traceDigest, type DigestFields } from '../core/export/digest.js';
import type { BuilderName } from '../core/trajectory/types.js';
import { openExportSource, type ExportCommandOptions } from './export.js';

export interface VerifyResult {
  rows: number;
  ok: number;
  problems: Array<{ line: number; traceId: string | null; problem: string }>;
}

type Row = DigestFields & { trace_id?: string; session_id?: string; digest?: string; metadata?: { builder?: string } };

export async function runVerify(file: string, opts: Pick<ExportCommandOptions, 'dataDir' | 'topology'>): Promise<VerifyResult> {
  const { store, source } = await openExportSource(opts);
  const result: VerifyResult = { rows: 0, ok: 0, problems: [] };
  let session = '';
  let stored = new Map<string, string>();
  const storedDigests = async (sessionId: string, builder: BuilderName): Promise<Map<string, string>> => {
    const out = new Map<string, string>();
    const lines = exportLines(source, { sessionId, builder, includeMasked: true, statuses: [...SESSION_STATUSES] }, newProgress());
    for await (const line of lines) {
      const r = JSON.parse(line) as { trace_id: string; digest: string };
      out.set(r.trace_id, r.digest);
    }
    return out;
  };
  try {
    let n = 0;
    for await (const text of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
      n++;
      if (!text.trim()) continue;
      result.rows++;
      let row: Row;
      try {
        row = JSON.parse(text) as Row;
      } catch {
        result.problems.push({ line: n, traceId: null, problem: 'not JSON' });
        continue;
      }
      const id = row.trace_id ?? null;
      if (!id || !row.session_id || typeof row.digest !== 'string' || !Array.isArray(row.prompt_ids)) {
        result.problems.push({ line: n, traceId: id, problem: 'not a train-format row with a digest' });
        continue;
      }
      if (traceDigest(row) !== row.digest) {
        result.problems.push({ line: n, traceId: id, problem: 'ids, mask or logprobs do not match the row\'s digest (the file was altered)' });
        continue;
      }
      const builder = (row.metadata?.builder === 'per-request' ? 'per-request' : 'prefix-merge') as BuilderName;
      const key = `${row.session_id}\0${builder}`;
      if (key !== session) {
        session = key;
        stored = await storedDigests(row.session_id, builder);
      }
      const want = stored.get(id);
      if (want === undefined) result.problems.push({ line: n, traceId: id, problem: 'no such trace in the store' });
      else if (want !== row.digest) result.problems.push({ line: n, traceId: id, problem: 'differs from the trace the store holds now' });
      else result.ok++;
    }
  } finally {
    await store.close();
  }
  return result;
}

export function verifySummary(r: VerifyResult): string {
  const head = `verified ${r.rows} rows: ${r.ok} match the store${r.problems.length ? `, ${r.problems.length} do not` : ''}`;
  const lines = r.problems.slice(0, 20).map((p) => `  line ${p.line}${p.traceId ? ` (${p.traceId})` : ''}: ${p.problem}`);
  if (r.problems.length > 20) lines.push(`  … and ${r.problems.length - 20} more`);
  return [head, ...lines].join('\n');
}
