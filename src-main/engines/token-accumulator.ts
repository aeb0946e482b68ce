// Collects sampled ids and their logprobs as they stream, and checks they line up (DESIGN §3 invariant).
import { CaptureError } from './types.js';

export class TokenAccumulator {
  private ids: number[] = [];
  private logprobs: number[] = [];

  addIds(ids: readonly number[]): void { for (const id of ids) this.ids.push(id); }
  addLogprobs(lps: readonly number[]): void { for (const lp of lps) this.logprobs.push(lp); }
  /** SGLang streams cumulative lists: keep only what is new. */
  replaceAll(ids: readonly number[], lps: readonly number[]): void { this.ids = [...ids]; this.logprobs = [...lps]; }

  finish(): { outputIds: Int32Array; outputLogprobs: Float32Array } {
    if (this.logprobs.length !== this.ids.length) {
      throw new CaptureError(`engine reported ${this.ids.length} output ids but ${this.logprobs.length} logprobs`, 'logprob-count');
    }
    return { outputIds: Int32Array.from(this.ids), outputLogprobs: Float32Array.from(this.logprobs) };
  }
}
