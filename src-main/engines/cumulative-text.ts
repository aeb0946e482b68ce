// SGLang streams cumulative `text` and trims a matched stop string only from its final event, so the
// last few characters are held back while a stop string could still be forming.
import { EngineError } from './types.js';

export class CumulativeText {
  private sent = '';
  private latest = '';

  constructor(private readonly holdBack: number) {}

  /** The part of the engine's cumulative text that is safe to pass on now. */
  next(full: string, finished: boolean): string {
    if (!full.startsWith(this.sent)) {
      throw new EngineError('SGLang stream is not cumulative; start SGLang without --incremental-streaming-output', 502, true);
    }
    this.latest = full;
    const upto = finished ? full.length : Math.max(this.sent.length, full.length - this.holdBack);
    const delta = full.slice(this.sent.length, upto);
    this.sent = full.slice(0, upto);
    return delta;
  }

  /** Whatever is still held back when the stream ends without a finish event. */
  rest(): string { return this.next(this.latest, true); }
}
