// Collects sampled ids and their logprobs as they stream, and checks they line up (DESIGN §3 invariant).
// An answer whose ids or logprobs never came is a capture failure naming the missing wire field, never an
// `ok` record with empty ids (a router that re-serialises answers drops fields it does not know).
import { CaptureError } from './types.js';

/** Where one engine wire carries the sampled ids and their logprobs (named in capture errors). */
export interface CaptureFields {
  ids: string;
  logprobs: string;
}

export class TokenAccumulator {
  private idList: number[] = [];
  private logprobs: number[] = [];

  get ids(): readonly number[] { return this.idList; }

  /** One stream event's ids and logprobs: new ones, or (cumulative engines like SGLang) all so far. */
  take(ids: readonly number[] | undefined, logprobs: readonly number[] | undefined, cumulative = false): void {
    if (ids) this.idList = cumulative ? [...ids] : this.idList.concat(ids);
    if (logprobs) this.logprobs = cumulative ? [...logprobs] : this.logprobs.concat(logprobs);
  }

  /**
   * `sampled`: the engine says it generated tokens (a stop or length finish, or completion_tokens > 0);
   * every such generation has at least one id (the stop token is one), so none at all means the field is gone.
   */
  finish(fields: CaptureFields, sampled: boolean): { outputIds: Int32Array; outputLogprobs: Float32Array } {
    const ids = this.idList.length;
    const lps = this.logprobs.length;
    if (ids === 0 && (sampled || lps > 0)) {
      throw new CaptureError(`the engine's answer has no \`${fields.ids}\` (sampled token ids)`, 'missing-ids', fields.ids);
    }
    if (lps === 0 && ids > 0) {
      throw new CaptureError(`the engine's answer has no \`${fields.logprobs}\` for its ${ids} sampled ids`, 'logprob-count', fields.logprobs);
    }
    if (lps !== ids) throw new CaptureError(`engine reported ${ids} output ids but ${lps} logprobs`, 'logprob-count');
    return { outputIds: Int32Array.from(this.idList), outputLogprobs: Float32Array.from(this.logprobs) };
  }
}

/** Did the engine sample anything? Its usage says so, else a finish other than abort/error does. */
export function engineSampled(finish: string | null, completionTokens: number | undefined): boolean {
  if (completionTokens !== undefined) return completionTokens > 0;
  return finish !== null && finish !== 'abort' && finish !== 'error';
}
