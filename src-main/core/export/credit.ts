// Reward attribution (issue 14): which trace of a session earns its outcome reward, and what the others get.
//  - the earner: the trace holding the response the caller declared final (`finish {finalResponseId}`, or the
//    `x-rollgate-final` request header the builtin agent sends on its last call); else the main chain — the
//    trace holding the session's last ok completion among traces that are not branches (title calls and
//    sub-agents start their own conversations or branch off; the agent's own conversation ends last);
//  - credit policy (session metadata `credit`, set from the batch spec): `broadcast` (default: every trace gets
//    the outcome reward), `final` (only the earner; the others get null), `split` (reward / number of traces).
// When no earner can be chosen although there is a reward to give, every trace is masked 'unattributed'.
import type { Trace } from '../trajectory/types.js';

export type CreditPolicy = 'final' | 'broadcast' | 'split';
export const CREDIT_POLICIES: readonly CreditPolicy[] = ['final', 'broadcast', 'split'];

/** How a trace's reward was decided: recorded in each export row. */
export interface Credit {
  policy: CreditPolicy;
  /** What chose the earner: the declared final response, the main chain, or nothing (unattributed). */
  source: 'final-response' | 'main-chain' | 'unattributed';
  earner: boolean;
}

export function creditPolicyOf(metadata: Record<string, unknown> | undefined): CreditPolicy {
  const p = metadata?.credit;
  return typeof p === 'string' && (CREDIT_POLICIES as readonly string[]).includes(p) ? (p as CreditPolicy) : 'broadcast';
}

/**
 * The earner's index in `traces`, and what chose it. `order(id)`: a completion's position in time (-1 for an
 * unknown id); `finalId`: the declared final response's completion id, if any.
 */
export function chooseEarner(traces: readonly Pick<Trace, 'completionIds' | 'origin'>[], order: (id: string) => number, finalId: string | null):
  { index: number; source: Credit['source'] } {
  if (finalId) {
    // A declared final response that is in no trace (it failed, or is not this session's) is not guessed around.
    const i = traces.findIndex((t) => t.completionIds.includes(finalId));
    return i >= 0 ? { index: i, source: 'final-response' } : { index: -1, source: 'unattributed' };
  }
  let best = -1;
  let bestAt = -1;
  traces.forEach((t, i) => {
    if (t.origin.kind === 'branch') return;
    const at = order(t.completionIds[t.completionIds.length - 1]!);
    if (at > bestAt) { best = i; bestAt = at; }
  });
  return best >= 0 ? { index: best, source: 'main-chain' } : { index: -1, source: 'unattributed' };
}

/** The reward a trace gets from the session's outcome reward under the policy. */
export function creditedReward(outcome: number, policy: CreditPolicy, earner: boolean, traces: number): number | null {
  if (policy === 'broadcast') return outcome;
  if (policy === 'final') return earner ? outcome : null;
  return outcome / Math.max(1, traces);
}
