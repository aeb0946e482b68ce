// per-request builder (DESIGN §6): one trace per ok completion; prompt = promptIds, response = outputIds, mask 1.
import { applyReward, byTime, checkInput, groupBySession, toArray } from './common.js';
import type { BuildOptions, BuildResult, Trace, TrajectoryInput, UnplacedCompletion } from './types.js';

export function buildPerRequest(records: Iterable<TrajectoryInput>, opts: BuildOptions = {}): BuildResult {
  const traces: Trace[] = [];
  const unplaced: UnplacedCompletion[] = [];
  let inputTokens = 0;
  for (const [sessionId, list] of groupBySession(records)) {
    for (const c of [...list].sort(byTime)) {
      checkInput(c);
      inputTokens += c.promptIds.length + c.outputIds.length;
      if (c.status !== 'ok') {
        unplaced.push({ completionId: c.id, reason: c.status });
        continue;
      }
      const n = c.outputIds.length;
      traces.push({
        id: `${sessionId}/pr/${c.id}`,
        sessionId,
        builder: 'per-request',
        completionIds: [c.id],
        promptIds: toArray(c.promptIds),
        responseIds: toArray(c.outputIds),
        lossMask: new Array<number>(n).fill(1),
        responseLogprobs: toArray(c.outputLogprobs),
        reward: null,
        policyVersions: [c.policyVersion],
        breaks: [],
        proof: { ok: true, turns: [{ completionId: c.id, promptLength: c.promptIds.length, outputLength: n }] },
        origin: { kind: 'root' },
        skipped: [],
        rerendered: [],
      });
    }
  }
  applyReward(traces, opts.reward);
  return { traces, unplaced, stats: { inputTokens, tokenOps: inputTokens } };
}
