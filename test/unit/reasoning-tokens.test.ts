// The reasoning share of the sampled tokens: through the think block's closing token.
import { describe, expect, it } from 'vitest';
import { countReasoningTokens } from '../../src-main/core/reasoning-tokens.js';

const THINK_END = 151668;

describe('countReasoningTokens', () => {
  it('counts through the closing tag', () => {
    expect(countReasoningTokens([151667, 1, 2, 3, THINK_END, 271, 9, 10], THINK_END, true)).toBe(5);
  });
  it('is the whole output when the think block never closed (budget ran out)', () => {
    expect(countReasoningTokens([151667, 1, 2, 3], THINK_END, true)).toBe(4);
  });
  it('is 0 without reasoning, even if the id shows up', () => {
    expect(countReasoningTokens([1, THINK_END, 2], THINK_END, false)).toBe(0);
    expect(countReasoningTokens([], THINK_END, false)).toBe(0);
  });
  it('without a known think-end token, reasoning counts whole', () => {
    expect(countReasoningTokens([1, 2, 3], undefined, true)).toBe(3);
  });
});
