import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  collectQwen3Deltas,
  createQwen3StreamParser,
  parseQwen3Output,
  promptEndsInThink,
} from '../../src-main/core/families/qwen3/output-parser.js';
import type { CanonicalDelta } from '../../src-main/core/types.js';

const ids = (i: number) => `chatcmpl-tool-${i}`;

describe('parseQwen3Output', () => {
  it('splits think, content and a tool call', () => {
    const text = '<think>\nNeed a tool.\n</think>\n\n<tool_call>\n{"name": "bash", "arguments": {"command": "wc -l < notes.txt"}}\n</tool_call>';
    const r = parseQwen3Output(text, { newToolCallId: ids });
    expect(r.reasoning).toBe('\nNeed a tool.\n');
    expect(r.content).toBe('\n\n');
    expect(r.toolCalls).toEqual([{ id: 'chatcmpl-tool-0', name: 'bash', arguments: '{"command": "wc -l < notes.txt"}' }]);
  });

  it('plain content has null reasoning and no tool calls', () => {
    expect(parseQwen3Output('2 + 2 = 4.')).toEqual({ reasoning: null, content: '2 + 2 = 4.', toolCalls: [] });
  });

  it('empty output gives null content', () => {
    expect(parseQwen3Output('')).toEqual({ reasoning: null, content: null, toolCalls: [] });
  });

  it('prompt ended in <think>: output with only </think> is reasoning then content', () => {
    const r = parseQwen3Output('I think 4.\n</think>\n\nIt is 4.');
    expect(r).toEqual({ reasoning: 'I think 4.\n', content: '\n\nIt is 4.', toolCalls: [] });
    expect(parseQwen3Output('I think 4.\n</think>\n\nIt is 4.', { thinkingOpen: true }).reasoning).toBe('I think 4.\n');
    expect(promptEndsInThink('<|im_start|>assistant\n<think>\n')).toBe(true);
    expect(promptEndsInThink('<|im_start|>assistant\n<think>\n\n</think>\n\n')).toBe(false);
  });

  it('several tool calls get sequential ids; text after the first call is dropped like hermes', () => {
    const text = 'Let me check.\n<tool_call>\n{"name": "a", "arguments": {}}\n</tool_call>\n<tool_call>\n{"name": "b", "arguments": {"x": [1, 2]}}\n</tool_call>\ntrailing';
    const r = parseQwen3Output(text, { newToolCallId: ids });
    expect(r.content).toBe('Let me check.\n');
    expect(r.toolCalls.map((t) => [t.id, t.name, t.arguments])).toEqual([
      ['chatcmpl-tool-0', 'a', '{}'],
      ['chatcmpl-tool-1', 'b', '{"x": [1, 2]}'],
    ]);
  });

  it('invalid tool JSON stays as content; an unclosed valid block still parses', () => {
    expect(parseQwen3Output('<tool_call>\nnot json\n</tool_call>').content).toBe('<tool_call>\nnot json\n</tool_call>');
    expect(parseQwen3Output('<tool_call>\n{"name": "a", "arguments": {"k": "v"}}').toolCalls[0]).toMatchObject({ name: 'a', arguments: '{"k": "v"}' });
  });
});

describe('createQwen3StreamParser', () => {
  it('never emits a partial <tool_call> tag as content', () => {
    const p = createQwen3StreamParser();
    const out: CanonicalDelta[] = [];
    for (const ch of 'ok <tool_call>\n{"name":"x","arguments":{}}\n</tool_call>') out.push(...p.push(ch));
    out.push(...p.end());
    const content = out.filter((d) => d.kind === 'content').map((d) => (d as { text: string }).text).join('');
    expect(content).toBe('ok ');
    expect(out.some((d) => d.kind === 'content' && d.text.includes('<'))).toBe(false);
    expect(out.filter((d) => d.kind === 'tool_call')).toEqual([{ kind: 'tool_call', index: 0, id: 'call_0', name: 'x', arguments: '{}' }]);
  });

  it('emits a tool call only once its block closes', () => {
    const p = createQwen3StreamParser();
    expect(p.push('<tool_call>\n{"name": "x", "arguments": {}}\n</tool_')).toEqual([]);
    expect(p.push('call>')).toHaveLength(1);
  });

  const piece = fc.constantFrom(
    '<think>', '</think>', '<tool_call>', '</tool_call>', '\n', ' ', '<', '</', 'tool', '<tool_', 'think>',
    'Hello', '2 + 2 = 4.', '{"name": "bash", "arguments": {"command": "ls"}}', '{"name": "calc", "arguments": {"e": "1+2"}}', 'héllo 中文 😀', '}',
  );
  const texts = fc.oneof(
    fc.array(piece, { maxLength: 14 }).map((a) => a.join('')),
    fc.tuple(fc.boolean(), fc.string({ maxLength: 40 }), fc.array(piece, { maxLength: 4 }), fc.string({ maxLength: 20 })).map(
      ([think, r, tools, c]) => `${think ? `<think>${r}</think>\n\n` : ''}${c}${tools.map((t) => `<tool_call>\n${t}\n</tool_call>`).join('\n')}`,
    ),
  );

  it('any chunking yields the same result as the non-streaming parser', () => {
    fc.assert(
      fc.property(texts, fc.array(fc.nat(), { maxLength: 12 }), fc.boolean(), (text, cuts, thinkingOpen) => {
        const bounds = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
        const p = createQwen3StreamParser({ thinkingOpen, newToolCallId: ids });
        const out: CanonicalDelta[] = [];
        let prev = 0;
        for (const b of [...bounds, text.length]) {
          out.push(...p.push(text.slice(prev, b)));
          prev = b;
        }
        out.push(...p.end());
        expect(collectQwen3Deltas(out)).toEqual(parseQwen3Output(text, { thinkingOpen, newToolCallId: ids }));
      }),
      { numRuns: 2000 },
    );
  });
});
