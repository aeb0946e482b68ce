// Helpers shared by the builders.
import type { BuildOptions, Trace, TrajectoryInput } from './types.js';

/** Stable order of a session's completions: seq, then createdAt, then id. */
export function byTime(a: Pick<TrajectoryInput, 'seq' | 'createdAt' | 'id'>, b: Pick<TrajectoryInput, 'seq' | 'createdAt' | 'id'>): number {
  return a.seq - b.seq || a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

export function groupBySession<T extends { sessionId: string }>(records: Iterable<T>): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const r of records) {
    let list = out.get(r.sessionId);
    if (!list) out.set(r.sessionId, (list = []));
    list.push(r);
  }
  return out;
}

export function applyReward(traces: Trace[], reward: BuildOptions['reward']): void {
  if (reward === undefined) return;
  for (const t of traces) t.reward = typeof reward === 'function' ? reward(t) : reward;
}

export function checkInput(c: TrajectoryInput): void {
  if (c.outputLogprobs.length !== c.outputIds.length) {
    throw new RangeError(`completion ${c.id}: outputLogprobs.length !== outputIds.length`);
  }
}

/** A plain number[] copy of a token or logprob array (a loop: Array.from on a typed array is far slower). */
export function toArray(a: ArrayLike<number>): number[] {
  const out: number[] = [];
  for (let i = 0; i < a.length; i++) out.push(a[i]);
  return out;
}
