// SGLang in token mode (DESIGN §4): SGLang 0.5.x's chat endpoint returns no ids, so Rollgate renders
// the template, calls native /generate with input_ids and parses reasoning and tool calls itself.
import { contextLength, fitMaxTokens } from './context-room.js';
import { engineErrorFrom, engineRequest, probeHealth, sseData } from './http.js';
import { samplerFields } from './served-messages.js';
import { matchedStopString } from './stop-sequence.js';
import { buildTokenPrompt } from './token-prompt.js';
import { loadTokenizer } from './tokenizer/index.js';
import { type EngineAdapter, type EngineCallInput, type EngineConfig, type EngineRun } from './types.js';
import { CumulativeText } from './cumulative-text.js';
import { TokenAccumulator } from './token-accumulator.js';
import { DEFAULT_MAX_NEW_TOKENS, TokenModeOutput } from './token-output.js';

interface SglangEvent {
  text?: string;
  output_ids?: number[];
  meta_info?: {
    id?: string;
    finish_reason?: { type: string; matched?: number | string | null } | null;
    prompt_tokens?: number;
    completion_tokens?: number;
    output_token_logprobs?: Array<[number | null, number, string | null]>;
  };
}

function engineFinish(raw: { type: string } | null | undefined): 'stop' | 'length' | 'abort' {
  return raw?.type === 'length' ? 'length' : raw?.type === 'abort' ? 'abort' : 'stop';
}

export class SglangTokenAdapter implements EngineAdapter {
  constructor(readonly config: EngineConfig) {}

  // SGLang's /health runs a one-token generation, so it gets longer.
  health(replica: string, signal?: AbortSignal): Promise<boolean> { return probeHealth(replica, signal, 10_000); }

  async *generate(input: EngineCallInput): EngineRun {
    const tok = await loadTokenizer(this.config.tokenizer ?? 'builtin:qwen3');
    const req = input.request;
    const { promptIds } = buildTokenPrompt(tok, req, input.sessionHistory, this.config.developerRole);
    const body = {
      input_ids: Array.from(promptIds),
      sampling_params: {
        max_new_tokens: fitMaxTokens(req.max_tokens ?? DEFAULT_MAX_NEW_TOKENS, promptIds.length, await contextLength(input.replica, input.signal)),
        ...samplerFields(req),
        ...(req.seed !== undefined ? { sampling_seed: req.seed } : {}),
        stop_token_ids: [tok.eosTokenId],
        skip_special_tokens: true,
      },
      return_logprob: true,
      logprob_start_len: -1,
      return_text_in_logprobs: false,
      stream: true,
      ...(input.dataParallelRank !== undefined ? { data_parallel_rank: input.dataParallelRank } : {}),
    };
    const res = await engineRequest({ baseUrl: input.replica, path: '/generate', body, signal: input.signal, timeouts: input.timeouts });
    if (res.statusCode !== 200) throw await engineErrorFrom(res);

    const acc = new TokenAccumulator();
    const output = new TokenModeOutput(tok, promptIds);
    const text = new CumulativeText(Math.max(0, ...(req.stop ?? []).map((x) => x.length)));
    let last: SglangEvent['meta_info'];
    for await (const raw of sseData(res)) {
      const ev = raw as SglangEvent;
      last = ev.meta_info ?? last;
      if (ev.output_ids) {
        const lps = (ev.meta_info?.output_token_logprobs ?? []).map((t) => t[0] ?? 0);
        acc.replaceAll(ev.output_ids, lps);
      }
      if (ev.text !== undefined) {
        const delta = text.next(ev.text, Boolean(ev.meta_info?.finish_reason));
        if (delta) yield* output.push(delta);
      }
    }
    const rest = text.rest();
    if (rest) yield* output.push(rest);
    yield* output.end();

    const capture = acc.finish();
    return {
      promptIds,
      ...capture,
      finishReason: output.finishReason(engineFinish(last?.finish_reason)),
      usage: {
        prompt_tokens: last?.prompt_tokens ?? promptIds.length,
        completion_tokens: last?.completion_tokens ?? capture.outputIds.length,
        total_tokens: (last?.prompt_tokens ?? promptIds.length) + (last?.completion_tokens ?? capture.outputIds.length),
      },
      requestServed: body,
      engineResponseId: last?.id ?? '',
      stopSequence: last?.finish_reason?.type === 'stop' ? matchedStopString(last.finish_reason.matched, req.stop) : null,
      ...output.result(),
    };
  }
}
