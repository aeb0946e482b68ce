// verifiers (prime-rl): its processed-output fields per rollout — `prompt_ids` with `prompt_mask` (0 on
// every prompt token), `completion_ids` with `completion_mask` (1 on sampled tokens, 0 on tool results and
// other environment tokens) and `completion_logprobs`, and `reward`.
import type { TrainRow } from '../rows.js';

export function verifiersRow(row: TrainRow): Record<string, unknown> {
  const { prompt_ids, response_ids, loss_mask, response_logprobs, reward, ...rest } = row;
  return {
    prompt_ids,
    prompt_mask: new Array<number>(prompt_ids.length).fill(0),
    completion_ids: response_ids,
    completion_mask: loss_mask,
    completion_logprobs: response_logprobs,
    reward,
    ...rest,
  };
}
