// What a failed sample says when its engine calls failed: the agent only reports "exited with 1" after
// its own retries, while the session's records hold the real cause (e.g. the connection error).
import type { CompletionRecord } from '../core/types.js';

/** "N engine calls failed, the last: <error>" when the session's last engine call failed, else null. */
export function engineFailureOf(records: ReadonlyArray<Pick<CompletionRecord, 'status' | 'error'>>): string | null {
  const last = records[records.length - 1];
  if (!last || last.status !== 'error') return null;
  const failed = records.filter((r) => r.status === 'error').length;
  const what = failed === 1 ? '1 engine call failed' : `${failed} engine calls failed, the last`;
  return `${what}: ${last.error ?? 'unknown engine error'}`;
}
