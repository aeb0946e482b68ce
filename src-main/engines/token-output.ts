// Token mode output (both engines): engine text deltas → canonical deltas via the Qwen3 parsers.
import { randomBytes } from 'node:crypto';
import { DeltaCollector, type CollectedMessage } from '../core/delta-collector.js';
import { createQwen3StreamParser, promptEndsInThink } from '../core/qwen3/output-parser.js';
import type { CanonicalDelta, FinishReason } from '../core/types.js';
import type { ChatTokenizer } from './tokenizer/index.js';

/** When the agent gives no limit: enough for any agent turn, small enough to fit usual contexts. */
export const DEFAULT_MAX_NEW_TOKENS = 8192;

export class TokenModeOutput {
  private readonly parser;
  private readonly collected = new DeltaCollector();

  constructor(tok: ChatTokenizer, promptIds: Int32Array) {
    // Thinking templates may end the prompt inside `<think>`; the last few ids are enough to tell.
    const tail = tok.decode(promptIds.subarray(Math.max(0, promptIds.length - 8)));
    this.parser = createQwen3StreamParser({
      thinkingOpen: promptEndsInThink(tail),
      newToolCallId: () => `call_${randomBytes(12).toString('hex')}`,
    });
  }

  push(text: string): CanonicalDelta[] { return this.record(this.parser.push(text)); }
  end(): CanonicalDelta[] { return this.record(this.parser.end()); }
  result(): CollectedMessage { return this.collected.result(); }

  finishReason(engineSaid: 'stop' | 'length' | 'abort'): FinishReason {
    if (engineSaid !== 'stop') return engineSaid;
    return this.collected.result().toolCalls.length ? 'tool_calls' : 'stop';
  }

  private record(deltas: CanonicalDelta[]): CanonicalDelta[] {
    for (const d of deltas) this.collected.add(d);
    return deltas;
  }
}
