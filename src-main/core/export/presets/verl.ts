// verl: the DataProto keys its PPO/GRPO trainer reads — `prompts`, `responses`, `response_mask` (1 on
// tokens the policy sampled), `rollout_log_probs` (the rollout engine's logprobs, aligned with
// `responses`), and `uid` (the non-tensor key GRPO groups samples by) — plus the agent loop's
// `reward_score` and `num_turns`.
import type { TrainRow } from '../rows.js';

export function verlRow(row: TrainRow): Record<string, unknown> {
  const { prompt_ids, response_ids, loss_mask, response_logprobs, reward, ...rest } = row;
  return {
    uid: row.group_id ?? row.session_id,
    prompts: prompt_ids,
    responses: response_ids,
    response_mask: loss_mask,
    rollout_log_probs: response_logprobs,
    reward_score: reward,
    num_turns: row.turns?.length ?? row.policy_versions.length,
    ...rest,
  };
}
