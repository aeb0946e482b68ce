// Which stop string ended a generation, from what vLLM (`stop_reason`) and SGLang (`matched`) report.
import { describe, expect, it } from 'vitest';
import { matchedStopString } from '../../src-main/engines/stop-sequence.js';

describe('matchedStopString', () => {
  it('is the agent stop string the engine matched', () => {
    expect(matchedStopString('###', ['END', '###'])).toBe('###');
  });
  it('is null for a matched token id (EOS, stop_token_ids), for null, or for a string the agent did not ask for', () => {
    expect(matchedStopString(151645, ['END'])).toBeNull();
    expect(matchedStopString(null, ['END'])).toBeNull();
    expect(matchedStopString(undefined, undefined)).toBeNull();
    expect(matchedStopString('<|im_end|>', ['END'])).toBeNull();
    expect(matchedStopString('END', undefined)).toBeNull();
  });
});
