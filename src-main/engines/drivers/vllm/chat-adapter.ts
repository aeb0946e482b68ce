// vLLM in chat mode (DESIGN §4): the engine templates; ids come back with return_token_ids.
import type { CanonicalDelta, FinishReason } from '../../../core/types.js';
import { DeltaCollector } from '../../../core/delta-collector.js';
import { isContextLengthError } from '../../context-room.js';
import { engineErrorFrom, engineRequest, probeHealth, sseData } from '../../http.js';
import { servedMessage, samplingFields } from '../../served-messages.js';
import { matchedStopString } from '../../stop-sequence.js';
import { CaptureError, EngineError, type DeveloperRole, type EngineAdapter, type EngineCallInput, type EngineConfig, type EngineResult, type EngineRun } from '../../types.js';
import { engineSampled, TokenAccumulator, type CaptureFields } from '../../token-accumulator.js';

interface VllmToolCallDelta { index: number; id?: string; function?: { name?: string; arguments?: string } }
interface VllmChunk {
  id?: string;
  prompt_token_ids?: number[] | null;
  choices?: Array<{
    delta?: { content?: string | null; reasoning?: string | null; reasoning_content?: string | null; tool_calls?: VllmToolCallDelta[] };
    logprobs?: { content?: Array<{ logprob: number }> } | null;
    token_ids?: number[] | null;
    finish_reason?: string | null;
    stop_reason?: number | string | null;
  }>;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
}

/** Where vLLM's chat answer carries the ids (with return_token_ids) and the sampled logprobs. */
const CHAT_FIELDS: CaptureFields = { ids: 'choices[].token_ids', logprobs: 'choices[].logprobs.content' };

export function vllmChatBody(input: EngineCallInput, model: string, developerRole?: DeveloperRole): Record<string, unknown> {
  const req = input.request;
  return {
    model,
    messages: req.messages.map((m) => servedMessage(m, developerRole)),
    ...(req.tools?.length ? { tools: req.tools } : {}),
    ...(req.tool_choice ? { tool_choice: req.tool_choice } : {}),
    ...samplingFields(req),
    ...(req.response_format ? { response_format: req.response_format } : {}),
    ...(req.chat_template_kwargs ? { chat_template_kwargs: req.chat_template_kwargs } : {}),
    logprobs: true,
    top_logprobs: 0,
    return_token_ids: true,
    stream: true,
    stream_options: { include_usage: true },
  };
}

export function toFinishReason(raw: string | null | undefined): FinishReason {
  if (raw === 'length' || raw === 'tool_calls' || raw === 'abort' || raw === 'error') return raw;
  return 'stop';
}

export class VllmChatAdapter implements EngineAdapter {
  constructor(readonly config: EngineConfig) {}

  health(replica: string, signal?: AbortSignal): Promise<boolean> { return probeHealth(replica, signal); }

  async *generate(input: EngineCallInput): EngineRun {
    let body = vllmChatBody(input, this.config.model, this.config.developerRole);
    const headers = { ...input.headers, ...(input.dataParallelRank !== undefined ? { 'X-data-parallel-rank': String(input.dataParallelRank) } : {}) };
    let res = await engineRequest({ baseUrl: input.replica, path: '/v1/chat/completions', body, headers, signal: input.signal, timeouts: input.timeouts });
    if (res.statusCode !== 200) {
      const err = await engineErrorFrom(res);
      if (!isContextLengthError(err) || body.max_tokens === undefined) throw err;
      // The agent's budget does not fit beside its prompt: without max_tokens vLLM uses the room left.
      const { max_tokens: _dropped, ...rest } = body;
      body = rest;
      res = await engineRequest({ baseUrl: input.replica, path: '/v1/chat/completions', body, headers, signal: input.signal, timeouts: input.timeouts });
      if (res.statusCode !== 200) throw await engineErrorFrom(res);
    }

    const acc = new TokenAccumulator();
    let promptIds: number[] | null = null;
    let engineResponseId = '';
    let finish: string | null = null;
    let stopReason: unknown = null;
    let usage: EngineResult['usage'] | null = null;
    const collected = new DeltaCollector();

    for await (const raw of sseData(res)) {
      const chunk = raw as VllmChunk;
      engineResponseId ||= chunk.id ?? '';
      if (chunk.prompt_token_ids) promptIds = chunk.prompt_token_ids;
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices?.[0];
      if (!choice) continue;
      acc.take(choice.token_ids ?? undefined, choice.logprobs?.content?.map((c) => c.logprob));
      if (choice.finish_reason) { finish = choice.finish_reason; stopReason = choice.stop_reason; }
      for (const delta of deltasOf(choice.delta)) { collected.add(delta); yield delta; }
    }

    if (!promptIds) throw new CaptureError('vLLM returned no prompt_token_ids: the server must be vLLM >= 0.10.2 (return_token_ids)', 'missing-ids', 'prompt_token_ids');
    const capture = acc.finish(CHAT_FIELDS, engineSampled(finish, usage?.completion_tokens));
    return {
      promptIds: Int32Array.from(promptIds),
      ...capture,
      finishReason: toFinishReason(finish),
      usage: usage ?? { prompt_tokens: promptIds.length, completion_tokens: capture.outputIds.length, total_tokens: promptIds.length + capture.outputIds.length },
      requestServed: body,
      engineResponseId,
      stopSequence: matchedStopString(stopReason, input.request.stop),
      ...collected.result(),
    };
  }
}

function* deltasOf(delta: NonNullable<VllmChunk['choices']>[number]['delta']): Generator<CanonicalDelta> {
  if (!delta) return;
  const reasoning = delta.reasoning ?? delta.reasoning_content;
  if (reasoning) yield { kind: 'reasoning', text: reasoning };
  if (delta.content) yield { kind: 'content', text: delta.content };
  for (const tc of delta.tool_calls ?? []) {
    yield { kind: 'tool_call', index: tc.index, ...(tc.id ? { id: tc.id } : {}), ...(tc.function?.name ? { name: tc.function.name } : {}), arguments: tc.function?.arguments ?? '' };
  }
}
