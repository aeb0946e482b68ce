import { describe, expect, it } from 'vitest';
import { encodeJsonlRow, sftConversation, toSftRow, toTrainRow } from '../../src-main/core/export/rows.js';
import { buildPrefixMerge } from '../../src-main/core/trajectory/index.js';
import { EOS, NL, rec, tip } from './trajectory-fixtures.js';

const a = rec('a', 0, [4, 100, 7], [20, EOS], { policyVersion: 2 });
const b = rec('b', 1, [...tip(a), NL, 4, 5], [30, EOS], { policyVersion: 3 });
const [trace] = buildPrefixMerge([a, b], { reward: 1 }).traces;

describe('export rows', () => {
  it('train row: snake_case fields, plain arrays, derived group id', () => {
    const row = toTrainRow(trace, { taskId: 't1', batchId: 'b1', sampleIndex: 2, engine: 'sim-vllm', metadata: { harness: 'builtin' } });
    expect(Object.keys(row)).toEqual([
      'trace_id', 'session_id', 'task_id', 'batch_id', 'group_id', 'sample_index', 'engine', 'policy_versions',
      'prompt_ids', 'response_ids', 'loss_mask', 'response_logprobs', 'reward', 'masked', 'mask_reason', 'credit', 'metadata',
    ]);
    expect(row).toMatchObject({
      trace_id: 's1/pm/a', session_id: 's1', task_id: 't1', batch_id: 'b1', group_id: 'b1:t1', sample_index: 2,
      engine: 'sim-vllm', policy_versions: [2, 3], prompt_ids: [4, 100, 7], reward: 1,
    });
    expect(row.metadata).toMatchObject({ harness: 'builtin', builder: 'prefix-merge', completion_ids: ['a', 'b'], proof_ok: true });
    const line = encodeJsonlRow(row);
    expect(line.endsWith('\n')).toBe(true);
    expect(line.split('\n')).toHaveLength(2);
    const back = JSON.parse(line);
    expect(back.loss_mask).toEqual(trace.lossMask);
    expect(back.response_logprobs).toEqual(trace.responseLogprobs);
    expect(toTrainRow(trace).group_id).toBeNull();
    expect(toTrainRow(trace, { groupId: 'g' }).group_id).toBe('g');
    expect('messages' in toTrainRow(trace)).toBe(false);
  });

  it('SFT row from a completion served with OpenAI chat messages', () => {
    const conv = sftConversation({
      requestServed: { messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name: 'f' } }] },
      requestReceived: null,
      response: {
        id: 'r', model: 'm', created: 0, finish_reason: 'tool_calls',
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        message: { role: 'assistant', content: null, reasoning: 'think', tool_calls: [{ id: 'x', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      },
    })!;
    expect(conv.messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: null, reasoning: 'think', tool_calls: [{ id: 'x', type: 'function', function: { name: 'f', arguments: '{}' } }] },
    ]);
    const row = toSftRow(trace, { ...conv, taskId: 't1' });
    expect(row).toMatchObject({ trace_id: 's1/pm/a', task_id: 't1', reward: 1, messages: conv.messages, tools: conv.tools });
    expect(sftConversation({ requestServed: { input_ids: [1] }, requestReceived: { contents: [] }, response: null })).toBeNull();
  });
});
