// Fail-closed custody (DESIGN §9): which traces an incomplete call spoils. A trace is masked when it
// includes an incomplete call (as a turn, a skipped attempt or the attempt that ended it) or depends on one:
//  - an incomplete call with prompt ids (malformed output) spoils every trace with a later turn whose prompt
//    strictly extends that prompt — the conversation went on from the untrusted answer — and every trace whose
//    tip (last turn's prompt + output) its prompt extends: that trace was cut short, its true end is untrusted;
//  - one without prompt ids (lost in a crash, no ids at all) cannot be placed: it may have gone on from any
//    trace, or be the turn a later one rests on, so it spoils every trace of its session.
// The first incomplete call (in time order) that applies gives the reason.
import { byTime } from './common.js';
import type { Trace, TrajectoryInput } from './types.js';

export type CustodyInput = Pick<TrajectoryInput, 'id' | 'seq' | 'createdAt' | 'status' | 'promptIds' | 'outputIds' | 'incompleteReason'>;

function startsWith(q: ArrayLike<number>, p: ArrayLike<number>): boolean {
  if (q.length <= p.length) return false;
  for (let i = 0; i < p.length; i++) if (q[i] !== p[i]) return false;
  return true;
}

/** Whether `q` begins with `p` followed by `then` (q may be longer). */
function extendsTip(q: ArrayLike<number>, p: ArrayLike<number>, then: ArrayLike<number>): boolean {
  if (q.length < p.length + then.length) return false;
  for (let i = 0; i < p.length; i++) if (q[i] !== p[i]) return false;
  for (let i = 0; i < then.length; i++) if (q[p.length + i] !== then[i]) return false;
  return true;
}

/** Sets `masked`, `maskReason` and `maskedBy` on every trace of one session (records: that session's completions). */
export function applyCustody(traces: Trace[], records: readonly CustodyInput[]): void {
  const ordered = [...records].sort(byTime);
  const order = new Map(ordered.map((r, i) => [r.id, i]));
  const byId = new Map(ordered.map((r) => [r.id, r]));
  const incomplete = ordered.filter((r) => r.status === 'incomplete');
  for (const t of traces) {
    t.masked = false;
    t.maskReason = null;
    t.maskedBy = null;
    if (incomplete.length === 0) continue;
    const own = new Set<string>([...t.completionIds, ...t.skipped.map((s) => s.completionId), ...t.breaks.map((b) => b.atCompletionId)]);
    const turns = t.completionIds.map((id) => byId.get(id)).filter((r): r is CustodyInput => r !== undefined);
    const tip = turns[turns.length - 1];
    for (const inc of incomplete) {
      const at = order.get(inc.id)!;
      const later = turns.filter((c) => order.get(c.id)! > at);
      const spoiled = own.has(inc.id) || inc.promptIds.length === 0
        || later.some((c) => startsWith(c.promptIds, inc.promptIds))
        || (tip !== undefined && order.get(tip.id)! < at && extendsTip(inc.promptIds, tip.promptIds, tip.outputIds));
      if (spoiled) {
        t.masked = true;
        t.maskReason = inc.incompleteReason ?? 'missing-ids';
        t.maskedBy = inc.id;
        break;
      }
    }
  }
}
