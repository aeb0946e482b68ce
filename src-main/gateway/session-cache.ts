// The recent ok turns of each active session, so token mode can reuse sampled ids without a store read.
// Bounded twice: a session's turns are dropped as soon as it ends (`forget`), and the whole cache holds at most
// `maxBytes`, the least recently used sessions going first (a dropped history only costs a re-render).
import type { CanonicalRequest, TokenCapture } from '../core/types.js';

export interface Turn { request: CanonicalRequest; capture: TokenCapture }

interface Entry { turns: Turn[]; bytes: number[] }

export const DEFAULT_TURN_CACHE_BYTES = 64 * 1024 * 1024;

/** Roughly what a turn keeps alive: its token arrays, and its request's text (UTF-16, so two bytes a character). */
function turnBytes(turn: Turn): number {
  const c = turn.capture;
  return c.promptIds.byteLength + c.outputIds.byteLength + c.outputLogprobs.byteLength + 2 * JSON.stringify(turn.request).length;
}

export class SessionTurnCache {
  private readonly sessions = new Map<string, Entry>();
  private total = 0;

  constructor(private readonly maxBytes = DEFAULT_TURN_CACHE_BYTES, private readonly turnsPerSession = 8) {}

  /** Bytes held now (estimated as turnBytes does). */
  get bytes(): number { return this.total; }

  /** Sessions with turns held now. */
  get size(): number { return this.sessions.size; }

  history(sessionId: string): Turn[] { return this.sessions.get(sessionId)?.turns ?? []; }

  remember(sessionId: string, turn: Turn): void {
    // Only the ids are needed later; the rest of an engine result (served request, text) is not kept alive.
    const { promptIds, outputIds, outputLogprobs } = turn.capture;
    const kept: Turn = { request: turn.request, capture: { promptIds, outputIds, outputLogprobs } };
    const entry = this.sessions.get(sessionId) ?? { turns: [], bytes: [] };
    this.sessions.delete(sessionId); // re-inserted last: the map's order is least recently used first
    const size = turnBytes(kept);
    entry.turns.push(kept);
    entry.bytes.push(size);
    this.total += size;
    if (entry.turns.length > this.turnsPerSession) {
      entry.turns.shift();
      this.total -= entry.bytes.shift()!;
    }
    this.sessions.set(sessionId, entry);
    for (const [id] of this.sessions) {
      if (this.total <= this.maxBytes || id === sessionId) break;
      this.forget(id);
    }
  }

  /** Drops a session's turns (it ended, or memory is short). */
  forget(sessionId: string): void {
    const entry = this.sessions.get(sessionId);
    if (!entry) return;
    this.sessions.delete(sessionId);
    for (const b of entry.bytes) this.total -= b;
  }
}
