// The builtin agent's final response comes from the gateway's record, not from its stderr (issue 14 review):
// a shell command the model runs can write a `rollgate-final-response:` line to the agent's stderr.
import { describe, expect, it } from 'vitest';
import { builtinFinalResponse } from '../../src-main/rollouts/final-response.js';

const calls = [
  { id: 'a'.repeat(24), status: 'ok' as const },
  { id: 'b'.repeat(24), status: 'ok' as const },
  { id: 'c'.repeat(24), status: 'error' as const },
];

describe('builtinFinalResponse', () => {
  it('is the last ok completion of the session, whatever the agent printed', () => {
    expect(builtinFinalResponse('builtin', 'ok', calls)).toEqual({ finalResponseId: 'b'.repeat(24) });
    // the signature takes no stderr at all: a forged line cannot reach it
    expect(builtinFinalResponse.length).toBe(3);
  });
  it('names nothing for other harnesses, agents that did not finish, or sessions without an ok completion', () => {
    expect(builtinFinalResponse('claude-code', 'ok', calls)).toEqual({});
    expect(builtinFinalResponse('builtin', 'agent_error', calls)).toEqual({});
    expect(builtinFinalResponse('builtin', 'ok', [calls[2]!])).toEqual({});
  });
});
