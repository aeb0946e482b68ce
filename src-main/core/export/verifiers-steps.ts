// A session's completions as verifiers trajectory steps (`TrajectoryStep`), the shape prime-rl's rollout
// gateway returns from `GET /v1/rollouts/{id}/trajectory` and verifiers' `RolloutGatewayMixin` reads.
// One step per engine call: the agent's messages, the assistant message it got, and the engine's own ids.
import type { CompletionRecord } from '../types.js';

export interface VerifiersStepTokens {
  prompt_ids: number[];
  /** 0 for every prompt token (verifiers masks prompts; the trainer decides what to learn from). */
  prompt_mask: number[];
  completion_ids: number[];
  completion_mask: number[];
  completion_logprobs: number[];
  overlong_prompt: boolean;
  is_truncated: boolean;
}

/** verifiers' assistant message: OpenAI chat fields plus `reasoning_content`. */
export interface VerifiersAssistantMessage {
  role: 'assistant';
  content: string | null;
  reasoning_content: string | null;
  tool_calls: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }> | null;
}

export interface VerifiersStep {
  prompt: unknown[];
  completion: VerifiersAssistantMessage[];
  tokens: VerifiersStepTokens;
  reward: null;
  advantage: null;
  is_truncated: boolean;
  trajectory_id: string;
  extras: { completion_id: string; policy_version: number; finish_reason: string | null };
}

/**
 * Cuts a step to `maxSeqLen` tokens the way verifiers does: an overlong prompt keeps its first
 * `maxSeqLen` ids and loses its completion; otherwise the completion is cut to what fits.
 */
function stepTokens(rec: CompletionRecord, maxSeqLen: number | null): VerifiersStepTokens {
  let promptIds = Array.from(rec.promptIds);
  let completionIds = Array.from(rec.outputIds);
  let logprobs = Array.from(rec.outputLogprobs);
  let overlong = false;
  let truncated = false;
  if (maxSeqLen !== null) {
    if (promptIds.length > maxSeqLen) {
      overlong = truncated = true;
      promptIds = promptIds.slice(0, maxSeqLen);
      completionIds = [];
      logprobs = [];
    } else if (promptIds.length + completionIds.length > maxSeqLen) {
      truncated = true;
      completionIds = completionIds.slice(0, maxSeqLen - promptIds.length);
      logprobs = logprobs.slice(0, completionIds.length);
    }
  }
  return {
    prompt_ids: promptIds,
    prompt_mask: promptIds.map(() => 0),
    completion_ids: completionIds,
    completion_mask: completionIds.map(() => 1),
    completion_logprobs: logprobs,
    overlong_prompt: overlong,
    is_truncated: truncated,
  };
}

export function assistantStepMessage(rec: CompletionRecord): VerifiersAssistantMessage {
  const m = rec.response!.message;
  return {
    role: 'assistant',
    content: m.content,
    reasoning_content: m.reasoning,
    tool_calls: m.tool_calls.length ? m.tool_calls.map((c) => ({ id: c.id, type: 'function', function: { ...c.function } })) : null,
  };
}

/** The messages the agent sent with this call (the OpenAI chat body it posted). */
export function requestMessages(rec: CompletionRecord): unknown[] {
  const messages = (rec.requestReceived as { messages?: unknown } | null)?.messages;
  return Array.isArray(messages) ? messages : [];
}

/**
 * The calls that count as turns: answered calls, in order, an SDK retry of an answered call counted once.
 * Failed and aborted calls produced nothing the agent saw, so they are no step.
 */
export function answeredTurns(records: readonly CompletionRecord[]): CompletionRecord[] {
  const ok = records.filter((r) => r.status === 'ok' && r.response);
  const okIds = new Set(ok.map((r) => r.id));
  return ok.filter((r) => !(r.retryOf && okIds.has(r.retryOf)));
}

export function toVerifiersStep(rec: CompletionRecord, trajectoryId: string, maxSeqLen: number | null): VerifiersStep {
  const tokens = stepTokens(rec, maxSeqLen);
  return {
    prompt: requestMessages(rec),
    completion: [assistantStepMessage(rec)],
    tokens,
    reward: null,
    advantage: null,
    is_truncated: rec.finishReason === 'length' || tokens.is_truncated,
    trajectory_id: trajectoryId,
    extras: { completion_id: rec.id, policy_version: rec.policyVersion, finish_reason: rec.finishReason },
  };
}

/**
 * The rollout's completion as verifiers renders it: the last step's prompt and answer, minus the
 * rollout's first prompt (the conversation the agent built after it was given its task).
 */
export function renderCompletion(steps: readonly VerifiersStep[], prompt: readonly unknown[]): unknown[] {
  const last = steps.at(-1);
  if (!last) return [];
  return [...last.prompt, ...last.completion].slice(prompt.length);
}
