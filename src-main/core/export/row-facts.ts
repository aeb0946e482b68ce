// What every export row says about its sample and its trace, whatever the format (issue 19): whether it is
// the sample's final trace and how many the sample has, how its last turn ended, its turn boundaries, the
// sampling parameters, and the model. Pure: a session's records and traces in, facts out.
import type { Trace } from '../trajectory/types.js';
import type { CompletionRecord, FinishReason } from '../types.js';

export interface TurnFacts {
  completion_id: string;
  /** Where this turn's sampled ids start in prompt_ids ++ response_ids, and how many there are. */
  output_start: number;
  output_length: number;
  /** The engine's prompt length for this turn (differs from output_start after chat-mode re-renders). */
  prompt_length: number;
  finish_reason: FinishReason | null;
}

export interface TraceFacts {
  /** The trace holding the sample's last answer (its session's latest ok completion). */
  is_final: boolean;
  /** Traces the sample (session) has under this builder. */
  num_traces: number;
  finish_reason: FinishReason | null;
  /** The last turn stopped at its token limit. */
  truncated: boolean;
  turns: TurnFacts[];
  /** Sampling parameters of the last turn as served to the engine. */
  sampling: Record<string, unknown>;
  model: string | null;
  tokenizer: string | null;
}

type RecordFacts = Pick<CompletionRecord, 'id' | 'seq' | 'createdAt' | 'status' | 'finishReason' | 'requestServed'>;

// The names vLLM request bodies and SGLang's sampling_params use (SGLang says max_new_tokens).
const SAMPLING_KEYS = ['temperature', 'top_p', 'top_k', 'min_p', 'presence_penalty', 'frequency_penalty', 'repetition_penalty', 'seed', 'stop', 'max_tokens', 'max_new_tokens', 'n'];

export function samplingOf(requestServed: unknown): Record<string, unknown> {
  if (!requestServed || typeof requestServed !== 'object') return {};
  const body = requestServed as Record<string, unknown>;
  const src = body.sampling_params && typeof body.sampling_params === 'object' ? { ...body, ...(body.sampling_params as Record<string, unknown>) } : body;
  const out: Record<string, unknown> = {};
  for (const k of SAMPLING_KEYS) if (src[k] !== undefined && src[k] !== null) out[k === 'max_new_tokens' ? 'max_tokens' : k] = src[k];
  return out;
}

function modelOf(requestServed: unknown): string | null {
  const m = requestServed && typeof requestServed === 'object' ? (requestServed as { model?: unknown }).model : undefined;
  return typeof m === 'string' ? m : null;
}

/** The facts of each trace of one session, aligned with `traces`. */
export function traceFacts(traces: readonly Trace[], records: readonly RecordFacts[], engine: { model?: string | null; tokenizer?: string | null } = {}): TraceFacts[] {
  const byId = new Map(records.map((r) => [r.id, r]));
  let latest: RecordFacts | null = null;
  for (const r of records) {
    if (r.status !== 'ok') continue;
    if (!latest || r.seq > latest.seq || (r.seq === latest.seq && r.createdAt >= latest.createdAt)) latest = r;
  }
  return traces.map((t) => {
    const last = byId.get(t.completionIds[t.completionIds.length - 1]);
    const finish = last?.finishReason ?? null;
    return {
      is_final: latest !== null && t.completionIds.includes(latest.id),
      num_traces: traces.length,
      finish_reason: finish,
      truncated: finish === 'length',
      turns: t.proof.turns.map((x) => ({
        completion_id: x.completionId,
        output_start: x.outputStart ?? x.promptLength,
        output_length: x.outputLength,
        prompt_length: x.promptLength,
        finish_reason: byId.get(x.completionId)?.finishReason ?? null,
      })),
      sampling: samplingOf(last?.requestServed),
      model: modelOf(last?.requestServed) ?? engine.model ?? null,
      tokenizer: engine.tokenizer ?? null,
    };
  });
}
