// Trajectory builders (DESIGN §6): pure functions from a session's completion records to traces.
import { buildPerRequest } from './per-request.js';
import { buildPrefixMerge } from './prefix-merge.js';
import type { BuildOptions, BuildResult, BuilderName, TrajectoryInput } from './types.js';

export * from './types.js';
export { buildPerRequest } from './per-request.js';
export { buildPrefixMerge } from './prefix-merge.js';
export { verifyTrace, type ProofCheck } from './proof.js';
export { applyCustody, type CustodyInput } from './custody.js';
export * from './rescore-stats.js';

export const BUILDERS: readonly BuilderName[] = ['prefix-merge', 'per-request'];

export function buildTraces(builder: BuilderName, records: Iterable<TrajectoryInput>, opts: BuildOptions = {}): BuildResult {
  switch (builder) {
    case 'per-request':
      return buildPerRequest(records, opts);
    case 'prefix-merge':
      return buildPrefixMerge(records, opts);
    default:
      throw new Error(`unknown trace builder: ${String(builder)}`);
  }
}
