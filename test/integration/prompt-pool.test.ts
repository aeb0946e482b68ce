// Token-mode prompts built in the worker pool are the ids the main thread would build, for a fresh
// render and for a turn that reuses the previous sampled ids (issue 13).
import { afterAll, describe, expect, it } from 'vitest';
import type { CanonicalRequest } from '../../src-main/core/types.js';
import { buildPromptOffThread, closePromptPool } from '../../src-main/engines/prompt-pool.js';
import { loadTokenFormat } from '../../src-main/engines/token-format.js';
import { buildTokenPrompt, reusableTurns } from '../../src-main/engines/token-prompt.js';

afterAll(() => closePromptPool());

describe('prompt worker pool', () => {
  for (const family of ['qwen3', 'gpt-oss'] as const) {
    it(`${family}: same ids as the main thread, fresh and reusing sampled ids`, async () => {
      const fmt = await loadTokenFormat({ family });
      const tools = [{ type: 'function' as const, function: { name: 'calculator', parameters: { type: 'object', properties: { expression: { type: 'string' } } } } }];
      const first: CanonicalRequest = { model: 'm', stream: false, tools, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'What is 6*7?' }] };
      const fresh = await buildPromptOffThread(fmt, { family }, first, []);
      expect(Array.from(fresh.promptIds)).toEqual(Array.from(buildTokenPrompt(fmt, first, []).promptIds));

      const sampled = fmt.family.formatTurn({ reasoning: 'use it', toolCalls: [{ name: 'calculator', arguments: { expression: '6*7' } }] }, fmt.family.readPrompt(fmt.tok.decode(fresh.promptIds)));
      const outputIds = Int32Array.from([...fmt.tok.encode(sampled.text), fmt.tok.singleTokenId(sampled.end)!]);
      const next: CanonicalRequest = {
        ...first,
        messages: [...first.messages,
          { role: 'assistant', content: null, reasoning: 'use it', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'calculator', arguments: '{"expression":"6*7"}' } }] },
          { role: 'tool', tool_call_id: 'c1', content: '42' }],
      };
      const history = [{ request: first, capture: { promptIds: fresh.promptIds, outputIds } }];
      const reused = await buildPromptOffThread(fmt, { family }, next, history);
      expect(reused.reusedIds).toBe(fresh.promptIds.length + outputIds.length);
      expect(Array.from(reused.promptIds)).toEqual(Array.from(buildTokenPrompt(fmt, next, reusableTurns(fmt, next, history)).promptIds));
    }, 60_000);
  }
});
