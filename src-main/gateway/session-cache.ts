// The recent ok turns of each active session, so token mode can reuse sampled ids without a store read.
import type { CanonicalRequest, TokenCapture } from '../core/types.js';

export interface Turn { request: CanonicalRequest; capture: TokenCapture }

export class SessionTurnCache {
  private readonly turns = new Map<string, Turn[]>();
  constructor(private readonly sessionLimit = 10_000, private readonly turnsPerSession = 8) {}

  history(sessionId: string): Turn[] { return this.turns.get(sessionId) ?? []; }

  remember(sessionId: string, turn: Turn): void {
    const list = this.turns.get(sessionId) ?? [];
    this.turns.delete(sessionId);
    list.push(turn);
    if (list.length > this.turnsPerSession) list.shift();
    this.turns.set(sessionId, list);
    if (this.turns.size > this.sessionLimit) this.turns.delete(this.turns.keys().next().value!);
  }
}
