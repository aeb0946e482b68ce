// Per-token Δlogprob display helpers (Δ = logprob under the sampling engine A − under the re-scorer B). Pure.

/** |Δ| bucket edges in nats: 0 …5 from "same" to "very different". */
export const DELTA_EDGES = [0.01, 0.05, 0.2, 0.5, 1] as const;

export function deltaBucket(d: number): number {
  const a = Math.abs(d);
  let k = 0;
  while (k < DELTA_EDGES.length && a >= DELTA_EDGES[k]) k++;
  return k;
}

/** CSS class of a token chip: bucket and sign (A more confident = positive). */
export function deltaClass(d: number): string {
  const k = deltaBucket(d);
  return k === 0 ? 'dlt dlt-0' : `dlt dlt-${k} ${d > 0 ? 'dlt-pos' : 'dlt-neg'}`;
}
