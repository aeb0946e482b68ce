// Which earlier completion a new one is stored against (delta storage, store/README.md): per session, the
// last few completions written by this process, bounded in total bytes. The chosen parent is the one whose
// tip (prompt ids ++ output ids) shares the longest prefix with the new prompt; the new row then stores
// only the prompt ids after that prefix, and its requests as deltas against the parent's.
import type { CompletionRecord } from '../core/types.js';
import { DeltaBase } from './json-columns.js';
import { completionParams, type EncodedCompletion } from './rows.js';

export interface BaseEntry {
  id: string;
  seq: number;
  promptIds: Int32Array;
  outputIds: Int32Array;
  received: DeltaBase;
  served: DeltaBase;
  bytes: number;
}

export interface ChosenBase {
  entry: BaseEntry;
  /** Leading prompt ids that equal the parent's tip (0 when only the requests are stored as deltas). */
  promptBase: number;
}

/** Per session, how many recent completions are candidates (the previous turn, n>1 samples, a sub-agent). */
const PER_SESSION = 3;
const DEFAULT_MAX_BYTES = 256 * 1024 * 1024;

/** Length of the common prefix of `q` and `p ++ o`. */
export function tipPrefix(q: Int32Array, p: Int32Array, o: Int32Array): number {
  const n1 = Math.min(q.length, p.length);
  let i = 0;
  while (i < n1 && q[i] === p[i]) i++;
  if (i < p.length) return i;
  const n2 = Math.min(q.length - p.length, o.length);
  let j = 0;
  while (j < n2 && q[p.length + j] === o[j]) j++;
  return p.length + j;
}

export class DeltaBases {
  /** Insertion order = least recently written first (LRU over sessions). */
  private readonly sessions = new Map<string, BaseEntry[]>();
  private bytes = 0;

  constructor(private readonly maxBytes = DEFAULT_MAX_BYTES) {}

  has(sessionId: string): boolean {
    return this.sessions.has(sessionId);
  }

  /** The best parent for a new prompt, or null when the session has no known completion. */
  choose(sessionId: string, promptIds: Int32Array): ChosenBase | null {
    const list = this.sessions.get(sessionId);
    if (!list || list.length === 0) return null;
    let best: ChosenBase | null = null;
    for (let i = list.length - 1; i >= 0; i--) {
      const e = list[i]!;
      const k = tipPrefix(promptIds, e.promptIds, e.outputIds);
      if (!best || k > best.promptBase) best = { entry: e, promptBase: k };
      if (k === e.promptIds.length + e.outputIds.length && k > 0) break; // extends this tip: the usual case
    }
    return best;
  }

  /** Remembers a completion as a candidate parent for the session's next ones. */
  add(sessionId: string, entry: Omit<BaseEntry, 'bytes'>): BaseEntry {
    // ids (4 bytes a token) plus, roughly, the element texts kept for the two requests (~4 chars a token each)
    const full: BaseEntry = { ...entry, bytes: 16 * (entry.promptIds.length + entry.outputIds.length) + 256 };
    let list = this.sessions.get(sessionId);
    if (list) this.sessions.delete(sessionId); // re-insert: most recently used
    else list = [];
    list.push(full);
    this.bytes += full.bytes;
    while (list.length > PER_SESSION) this.bytes -= list.shift()!.bytes;
    this.sessions.set(sessionId, list);
    for (const [sid, l] of this.sessions) {
      if (this.bytes <= this.maxBytes || sid === sessionId) break;
      for (const e of l) this.bytes -= e.bytes;
      this.sessions.delete(sid);
    }
    return full;
  }

  /**
   * Encodes a record against its session's best parent (both stores' writers and the schema-7 conversion), and
   * remembers it as a candidate parent of the session's next completions. `full` is the same row without a parent.
   */
  encode(rec: CompletionRecord, bodyHash: string | null): EncodedCompletion {
    const next = candidateOf(rec);
    const params = completionParams(rec, bodyHash, this.choose(rec.sessionId, rec.promptIds), next);
    if (rec.promptIds.length > 0) this.add(rec.sessionId, next);
    return { params, full: () => completionParams(rec, bodyHash) };
  }

  /** Seeds a session with its latest completions (read back from the database) so its next one finds its parent. */
  seed(sessionId: string, recs: CompletionRecord[]): void {
    if (!this.sessions.has(sessionId)) this.sessions.set(sessionId, []);
    for (const r of [...recs].sort((a, b) => a.seq - b.seq)) this.add(sessionId, candidateOf(r));
  }

  /** Lets go of an ended session (a completion that still comes is stored against a parent read back from the database). */
  forget(sessionId: string): void {
    for (const e of this.sessions.get(sessionId) ?? []) this.bytes -= e.bytes;
    this.sessions.delete(sessionId);
  }

  clear(): void {
    this.sessions.clear();
    this.bytes = 0;
  }
}

function candidateOf(r: CompletionRecord): Omit<BaseEntry, 'bytes'> {
  return {
    id: r.id, seq: r.seq, promptIds: r.promptIds, outputIds: r.outputIds,
    received: new DeltaBase(r.requestReceived), served: new DeltaBase(r.requestServed),
  };
}
