// Token mode on any engine kind (DESIGN §4): Rollgate renders the prompt with the family's format, reuses
// the session's sampled ids, sends token ids, and parses the sampled ids with the family's parser. Only
// the wire — path, body, how to read a stream event — comes from the engine's driver.
import { contextLength, fitMaxTokens } from './context-room.js';
import type { EngineDriver } from './drivers/types.js';
import { engineErrorFrom, engineRequest, probeHealth, sseData } from './http.js';
import { samplerFields } from './served-messages.js';
import { matchedStopString } from './stop-sequence.js';
import { loadTokenFormat } from './token-format.js';
import { DEFAULT_MAX_NEW_TOKENS, TokenModeOutput } from './token-output.js';
import { engineSampled, TokenAccumulator } from './token-accumulator.js';
import { buildPromptOffThread } from './prompt-pool.js';
import type { Usage } from '../core/types.js';
import { EngineError, type EngineAdapter, type EngineCallInput, type EngineConfig, type EngineRun } from './types.js';

export class TokenModeAdapter implements EngineAdapter {
  constructor(readonly config: EngineConfig, private readonly driver: EngineDriver) {}

  health(replica: string, signal?: AbortSignal): Promise<boolean> { return probeHealth(replica, signal, this.driver.healthTimeoutMs); }

  async *generate(input: EngineCallInput): EngineRun {
    const fmt = await loadTokenFormat(this.config);
    const req = input.request;
    const { promptIds } = await buildPromptOffThread(fmt, this.config, req, input.sessionHistory, this.config.developerRole);
    const wire = this.driver.token;
    const body = wire.body({
      model: this.config.model,
      promptIds,
      maxTokens: fitMaxTokens(req.max_tokens ?? DEFAULT_MAX_NEW_TOKENS, promptIds.length, await contextLength(this.driver, input.replica, input.signal)),
      sampler: samplerFields(req),
      seed: req.seed,
      stopTokenIds: fmt.stopIds,
      dataParallelRank: input.dataParallelRank,
    });
    const headers = { ...input.headers, ...(input.dataParallelRank !== undefined ? this.driver.rankHeaders(input.dataParallelRank) : {}) };
    const res = await engineRequest({ baseUrl: input.replica, path: wire.path, body, headers, signal: input.signal, timeouts: input.timeouts });
    if (res.statusCode !== 200) throw await engineErrorFrom(res);

    const read = wire.reader();
    const output = new TokenModeOutput(fmt, promptIds, req);
    const acc = new TokenAccumulator();
    let finish: 'stop' | 'length' | 'abort' | null = null;
    let matched: unknown = null;
    let usage: Usage | null = null;
    let engineResponseId = '';
    for await (const event of sseData(res)) {
      const c = read(event);
      engineResponseId ||= c.responseId ?? '';
      if (c.usage) usage = c.usage;
      acc.take(c.ids, c.logprobs, c.cumulative);
      if (c.finish) { finish = c.finish; matched = c.matched ?? null; }
      yield* output.advance(acc.ids);
    }
    const { outputIds, outputLogprobs } = acc.finish(wire.fields, engineSampled(finish, usage?.completion_tokens));
    if (finish === null) throw new EngineError(`${this.driver.label} stream ended without a finish reason`, 502, true);
    const stopSequence = finish === 'stop' ? matchedStopString(matched, req.stop) : null;
    yield* output.end(stopSequence);
    return {
      promptIds,
      outputIds,
      outputLogprobs,
      finishReason: output.finishReason(finish),
      usage: usage ?? { prompt_tokens: promptIds.length, completion_tokens: outputIds.length, total_tokens: promptIds.length + outputIds.length },
      requestServed: body,
      engineResponseId,
      stopSequence,
      ...output.result(),
    };
  }
}
