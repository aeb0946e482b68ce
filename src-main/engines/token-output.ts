// Token mode output (both engines): the sampled ids → text (special tokens kept, the stop token left out)
// → the family's parser → canonical deltas. Parsing the ids rather than the engine's text means the
// markers a family needs survive whatever skip_special_tokens the engine applied. An agent's stop string
// is held back while it could still be forming and cut at the end, as the engines do.
import { randomBytes } from 'node:crypto';
import { DeltaCollector, type CollectedMessage } from '../core/delta-collector.js';
import type { OutputParser } from '../core/families/index.js';
import type { CanonicalDelta, CanonicalRequest, FinishReason } from '../core/types.js';
import type { TokenFormat } from './token-format.js';
import { createDetokenizer, type Detokenizer } from './tokenizer/detokenizer.js';

/** When the agent gives no limit: enough for any agent turn, small enough to fit usual contexts. */
export const DEFAULT_MAX_NEW_TOKENS = 8192;

export class TokenModeOutput {
  private readonly parser: OutputParser;
  private readonly detok: Detokenizer;
  private readonly collected = new DeltaCollector();
  private readonly holdBack: number;
  private pending = '';
  private seen = 0;

  constructor(private readonly fmt: TokenFormat, promptIds: Int32Array, req: CanonicalRequest) {
    const { tok, family } = fmt;
    // The last ids tell whether the template left the model inside reasoning or a harmony message.
    const promptTail = tok.decode(promptIds.subarray(Math.max(0, promptIds.length - 16)));
    this.parser = family.createParser({ promptTail, tools: req.tools, newToolCallId: () => `call_${randomBytes(12).toString('hex')}` });
    this.detok = createDetokenizer(tok);
    this.holdBack = Math.max(0, ...(req.stop ?? []).map((s) => s.length));
  }

  /** All output ids so far (engines that stream cumulative lists pass the whole list each time). */
  *advance(ids: readonly number[]): Generator<CanonicalDelta> {
    let text = '';
    for (; this.seen < ids.length; this.seen++) {
      const id = ids[this.seen]!;
      if (!this.fmt.stopIds.includes(id)) text += this.detok.push(id);
    }
    this.pending += text;
    const upto = Math.max(0, this.pending.length - this.holdBack);
    if (upto > 0) {
      const out = this.pending.slice(0, upto);
      this.pending = this.pending.slice(upto);
      yield* this.record(this.parser.push(out));
    }
  }

  /** The stream ended: cut the matched stop string, pass on the rest, close the parser. */
  *end(stopString: string | null): Generator<CanonicalDelta> {
    let rest = this.pending + this.detok.flush();
    this.pending = '';
    if (stopString) {
      const at = rest.indexOf(stopString);
      if (at >= 0) rest = rest.slice(0, at);
    }
    if (rest) yield* this.record(this.parser.push(rest));
    yield* this.record(this.parser.end());
  }

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
