// slime: its `Sample` fields — `tokens` (prompt and response joined), `response_length`, `loss_mask` and
// `rollout_log_probs` over the response tokens, `reward`, an integer `group_index` (samples of one prompt)
// and `index`, `status` (completed | truncated), `weight_versions` (strings).
import type { TrainRow } from '../rows.js';
import type { PresetState } from './index.js';

export function slimeRow(row: TrainRow, state: PresetState): Record<string, unknown> {
  const { prompt_ids, response_ids, loss_mask, response_logprobs, reward, ...rest } = row;
  return {
    index: state.nextRowIndex(),
    group_index: state.groupIndex(row.group_id, row.session_id),
    tokens: [...prompt_ids, ...response_ids],
    response_length: response_ids.length,
    loss_mask,
    rollout_log_probs: response_logprobs,
    reward,
    status: row.truncated ? 'truncated' : 'completed',
    weight_versions: row.policy_versions.map(String),
    ...rest,
  };
}
