// vLLM in token mode (DESIGN §4): Rollgate renders the template and sends token ids to /v1/completions,
// so a session's earlier sampled ids are reused verbatim; output is parsed like SGLang's token mode.
import { contextLength, fitMaxTokens } from './context-room.js';
import { engineErrorFrom, engineRequest, probeHealth, sseData } from './http.js';
import { samplerFields } from './served-messages.js';
import { matchedStopString } from './stop-sequence.js';
import { buildTokenPrompt } from './token-prompt.js';
import { TokenAccumulator } from './token-accumulator.js';
import { DEFAULT_MAX_NEW_TOKENS, TokenModeOutput } from './token-output.js';
import { loadTokenizer } from './tokenizer/index.js';
import { EngineError, type EngineAdapter, type EngineCallInput, type EngineConfig, type EngineRun } from './types.js';

interface CompletionChunk {
  id?: string;
  choices?: Array<{
    text?: string;
    token_ids?: number[] | null;
    prompt_token_ids?: number[] | null;
    logprobs?: { token_logprobs?: Array<number | null> } | null;
    finish_reason?: string | null;
    stop_reason?: number | string | null;
  }>;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
}

export class VllmTokenAdapter implements EngineAdapter {
  constructor(readonly config: EngineConfig) {}

  health(replica: string, signal?: AbortSignal): Promise<boolean> { return probeHealth(replica, signal); }

  async *generate(input: EngineCallInput): EngineRun {
    const tok = await loadTokenizer(this.config.tokenizer ?? 'builtin:qwen3');
    const req = input.request;
    const { promptIds } = buildTokenPrompt(tok, req, input.sessionHistory, this.config.developerRole);
    const body = {
      model: this.config.model,
      prompt: Array.from(promptIds),
      max_tokens: fitMaxTokens(req.max_tokens ?? DEFAULT_MAX_NEW_TOKENS, promptIds.length, await contextLength(input.replica, input.signal)),
      ...samplerFields(req),
      ...(req.seed !== undefined ? { seed: req.seed } : {}),
      logprobs: 0,
      return_token_ids: true,
      skip_special_tokens: true,
      stream: true,
      stream_options: { include_usage: true },
    };
    const headers = input.dataParallelRank !== undefined ? { 'X-data-parallel-rank': String(input.dataParallelRank) } : undefined;
    const res = await engineRequest({ baseUrl: input.replica, path: '/v1/completions', body, headers, signal: input.signal, timeouts: input.timeouts });
    if (res.statusCode !== 200) throw await engineErrorFrom(res);

    const acc = new TokenAccumulator();
    const output = new TokenModeOutput(tok, promptIds);
    let finish: string | null = null;
    let stopReason: unknown = null;
    let usage: CompletionChunk['usage'] = null;
    let engineResponseId = '';
    for await (const raw of sseData(res)) {
      const chunk = raw as CompletionChunk;
      engineResponseId ||= chunk.id ?? '';
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices?.[0];
      if (!choice) continue;
      if (choice.token_ids) acc.addIds(choice.token_ids);
      if (choice.logprobs?.token_logprobs) acc.addLogprobs(choice.logprobs.token_logprobs.map((lp) => lp ?? 0));
      if (choice.finish_reason) { finish = choice.finish_reason; stopReason = choice.stop_reason; }
      if (choice.text) yield* output.push(choice.text);
    }
    yield* output.end();
    if (finish === null) throw new EngineError('vLLM stream ended without a finish reason', 502, true);
    const capture = acc.finish();
    return {
      promptIds,
      ...capture,
      finishReason: output.finishReason(finish === 'length' ? 'length' : finish === 'abort' ? 'abort' : 'stop'),
      usage: usage ?? { prompt_tokens: promptIds.length, completion_tokens: capture.outputIds.length, total_tokens: promptIds.length + capture.outputIds.length },
      requestServed: body,
      engineResponseId,
      stopSequence: matchedStopString(stopReason, req.stop),
      ...output.result(),
    };
  }
}
