// Re-scoring replies that do not add up are the engine's fault (502), named by engine.
import { EngineError } from '../types.js';

export function badScore(engineId: string, what: string): EngineError {
  return new EngineError(`engine ${engineId} re-score: ${what}`, 502);
}

export function sameIds(a: unknown, ids: ArrayLike<number>): boolean {
  if (!Array.isArray(a) || a.length !== ids.length) return false;
  for (let i = 0; i < ids.length; i++) if (a[i] !== ids[i]) return false;
  return true;
}
