// Builders of synthetic completion records for the trajectory tests (no engine, no tokenizer).
import type { TrajectoryInput } from '../../src-main/core/trajectory/types.js';

export const EOS = 2;
export const NL = 3;

let clock = 0;
export function rec(
  id: string,
  seq: number,
  prompt: number[],
  out: number[],
  over: Partial<TrajectoryInput> = {},
): TrajectoryInput {
  return {
    id,
    sessionId: 's1',
    seq,
    promptIds: Int32Array.from(prompt),
    outputIds: Int32Array.from(out),
    outputLogprobs: Float32Array.from(out, (_, i) => -(i + 1) / 8 - seq / 100),
    status: 'ok',
    policyVersion: 0,
    retryOf: null,
    createdAt: ++clock,
    ...over,
  };
}

export const tip = (r: TrajectoryInput): number[] => [...r.promptIds, ...r.outputIds];

export { prng as rng } from '../../src-main/engines/sim/rng.js';
