// Incremental detokenizer: text deltas as ids arrive. Each step decodes only the ids since the last
// emitted text plus the chunk before it (so byte-level pieces join right), and holds back an incomplete
// UTF-8 sequence (U+FFFD) until the ids that complete it arrive.
import type { ChatTokenizer } from './index.js';

export interface Detokenizer {
  push(id: number): string;
  /** Whatever is still held back (an incomplete sequence at the very end). */
  flush(): string;
}

export function createDetokenizer(tok: ChatTokenizer, opts: { skipSpecialTokens?: boolean } = {}): Detokenizer {
  const skip = opts.skipSpecialTokens ?? false;
  const ids: number[] = [];
  let prefix = 0;
  let read = 0;
  const emit = (final: boolean): string => {
    const before = tok.decode(ids.slice(prefix, read), { skipSpecialTokens: skip });
    const full = tok.decode(ids.slice(prefix), { skipSpecialTokens: skip });
    if (!final && (full.length <= before.length || full.endsWith('\uFFFD'))) return '';
    prefix = read;
    read = ids.length;
    return full.slice(before.length);
  };
  return {
    push(id) {
      ids.push(id);
      return emit(false);
    },
    flush: () => (read < ids.length ? emit(true) : ''),
  };
}
