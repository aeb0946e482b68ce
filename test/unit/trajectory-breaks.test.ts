// Every chain split has a reason (issue 16): a client that drops the model's reasoning from its history
// makes the next prompt part from the trace at the turn boundary, where the template's assistant header
// newline is tokenized together with what follows; that is a recorded 'prompt-diverged' break, not a
// silent new root.
import { describe, expect, it } from 'vitest';
import { buildPrefixMerge } from '../../src-main/core/trajectory/index.js';
import { EOS, NL, rec } from './trajectory-fixtures.js';

const SYS = [4, 100, 101, 102, 103, 104, 105, 106];
const HEADER_NL = 198; // "\n" closing "<|im_start|>assistant"
const NL4 = 271; // "\n\n\n\n": the header newline merged with the re-rendered content's "\n\n\n"

describe('prefix-merge: splits at a re-tokenized turn boundary', () => {
  it('records prompt-diverged when the next prompt re-tokenizes the end of the last prompt', () => {
    const a = rec('a', 0, [...SYS, 7, 8, 4, 9, HEADER_NL], [150, 151, 152, 20, 21, EOS]); // 150..152 = "<think>…</think>"
    const b = rec('b', 1, [...SYS, 7, 8, 4, 9, NL4, 20, 21, EOS, NL, 4, 5], [30, EOS]);
    const { traces } = buildPrefixMerge([a, b]);
    expect(traces.map((t) => t.completionIds)).toEqual([['a'], ['b']]);
    expect(traces[0].breaks).toEqual([
      { reason: 'prompt-diverged', atCompletionId: 'b', tokenIndex: a.promptIds.length - 1, continuedIn: 's1/pm/b' },
    ]);
  });

  it('a sibling with another question (parting inside its own message) is no break', () => {
    const a = rec('a', 0, [...SYS, 7, 8, 4, 9, HEADER_NL], [20, EOS]);
    const b = rec('b', 1, [...SYS, 7, 300, 301, 302, 4, 9, HEADER_NL], [31, EOS]);
    const { traces } = buildPrefixMerge([a, b]);
    expect(traces).toHaveLength(2);
    expect(traces.flatMap((t) => t.breaks)).toEqual([]);
  });
});
