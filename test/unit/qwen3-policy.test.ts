// The sim's seeded policy, read from rendered Qwen3 prompts (engines/sim/policy.ts).
import { beforeAll, describe, expect, it } from 'vitest';
import { parseQwen3Output } from '../../src-main/core/families/qwen3/output-parser.js';
import type { ChatMessage, FunctionTool } from '../../src-main/core/types.js';
import { decide } from '../../src-main/engines/sim/policy.js';
import { loadTokenizer, type ChatTokenizer } from '../../src-main/engines/tokenizer/index.js';

let tok: ChatTokenizer;
beforeAll(async () => {
  tok = await loadTokenizer();
});

const tool = (name: string, props: Record<string, unknown>, required: string[], description = ''): FunctionTool => ({
  type: 'function', function: { name, description, parameters: { type: 'object', properties: props, required } },
});
const str = { type: 'string' };

function run(messages: ChatMessage[], tools?: FunctionTool[], opts: { thinking?: boolean; skill?: number; variant?: number } = {}) {
  const prompt = tok.renderChat(messages, { tools, chatTemplateKwargs: opts.thinking === false ? { enable_thinking: false } : undefined });
  const d = decide({ promptText: prompt, seed: 7, variant: opts.variant ?? 0, skill: opts.skill ?? 1 });
  return { ...d, parsed: parseQwen3Output(d.text, { thinkingOpen: false }) };
}

describe('sim policy', () => {
  it('greets on "hi" without calling tools, thinking first by default', () => {
    const r = run([{ role: 'user', content: 'hi' }], [tool('Bash', { command: str }, ['command'])]);
    expect(r.kind).toBe('greeting');
    expect(r.parsed.toolCalls).toEqual([]);
    expect(r.parsed.reasoning).toBeTruthy();
    expect(r.parsed.content).toMatch(/hello|hi|hey/i);
  });

  it('enable_thinking=false: no think block', () => {
    const r = run([{ role: 'user', content: 'hi' }], undefined, { thinking: false });
    expect(r.text).not.toContain('<think>');
    expect(r.parsed.reasoning).toBeNull();
  });

  const shells: Array<[string, string, string[]]> = [
    ['Bash', 'command', ['command']], ['bash', 'command', ['command']], ['exec_command', 'cmd', ['cmd']],
    ['run_shell_command', 'command', ['command']], ['shell', 'command', ['command']], ['run', 'command', ['command']],
    ['terminal', 'cmd', ['cmd']],
  ];
  for (const [name, prop, required] of shells) {
    it(`calls the shell tool by whatever name it has: ${name}.${prop}`, () => {
      const tools = [tool('get_goal', {}, []), tool(name, { [prop]: str, timeout: { type: 'number' } }, required, 'Runs a shell command')];
      const r = run([{ role: 'user', content: 'How many lines are in notes.txt?' }], tools);
      expect(r.kind).toBe('tool_call');
      expect(r.parsed.toolCalls).toHaveLength(1);
      expect(r.parsed.toolCalls[0].name).toBe(name);
      expect(JSON.parse(r.parsed.toolCalls[0].arguments)).toEqual({ [prop]: 'wc -l < notes.txt' });
    });
  }

  it('a list of command lines gets the command as its one entry; an argv array gets bash -lc', () => {
    const list = tool('run_commands', { commands: { type: 'array', items: str } }, ['commands'], 'Run shell commands');
    const argv = tool('shell', { command: { type: 'array', items: str } }, ['command'], 'Runs a shell command');
    const args = (t: FunctionTool) => JSON.parse(run([{ role: 'user', content: 'How many lines are in notes.txt?' }], [t]).parsed.toolCalls[0].arguments);
    expect(args(list)).toEqual({ commands: ['wc -l < notes.txt'] });
    expect(args(argv)).toEqual({ command: ['bash', '-lc', 'wc -l < notes.txt'] });
  });

  it('derives commands from the task', () => {
    const tools = [tool('Bash', { command: str }, ['command'])];
    const cmd = (task: string) => JSON.parse(run([{ role: 'user', content: task }], tools).parsed.toolCalls[0]?.arguments ?? '{}').command;
    expect(cmd('What does data/config.json contain?')).toBe('cat data/config.json');
    expect(cmd('Show README.md')).toBe('cat README.md');
    expect(cmd('List the files in this folder')).toBe('ls');
    expect(cmd('How many words are in essay.txt?')).toBe('wc -w < essay.txt');
  });

  it('uses a calculator tool with the expression from the prompt', () => {
    const r = run([{ role: 'user', content: 'What is 12 * (3 + 4)?' }], [tool('calculator', { expression: str }, ['expression'])]);
    expect(r.parsed.toolCalls[0]).toMatchObject({ name: 'calculator', arguments: '{"expression": "12 * (3 + 4)"}' });
  });

  it('uses a read-file tool when there is no shell', () => {
    const r = run([{ role: 'user', content: 'What does notes.txt contain?' }], [tool('read_file', { file_path: str }, ['file_path'])]);
    expect(JSON.parse(r.parsed.toolCalls[0].arguments)).toEqual({ file_path: 'notes.txt' });
  });

  it('answers from a tool result with a final "The answer is" line, whatever the agent framing', () => {
    const base: ChatMessage[] = [
      { role: 'user', content: 'How many lines are in notes.txt?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'exec_command', arguments: '{"cmd":"wc -l < notes.txt"}' } }] },
    ];
    const tools = [tool('exec_command', { cmd: str }, ['cmd'])];
    for (const result of ['42\n', 'Chunk ID: 1\nProcess exited with code 0\nOutput:\n42\n', '{"output": "42\\n"}', '[{"query":"wc -l < notes.txt","result":"42\\n","success":true}]', 'Command: wc -l < notes.txt\nDirectory: (root)\nOutput: 42\nError: (none)\nExit Code: 0\n']) {
      const r = run([...base, { role: 'tool', tool_call_id: 'c1', content: result }], tools);
      expect(r.kind).toBe('answer_from_tool');
      expect(r.parsed.toolCalls).toEqual([]);
      expect(r.parsed.content?.trim().split('\n').at(-1)).toBe('The answer is 42.');
    }
  });

  it('answers arithmetic directly without tools', () => {
    const r = run([{ role: 'user', content: 'What is 2+2?' }]);
    expect(r.parsed.content?.trim().split('\n').at(-1)).toBe('The answer is 4.');
  });

  it('skill < 1 makes some samples slightly wrong, deterministically', () => {
    const answers = Array.from({ length: 40 }, (_, v) => run([{ role: 'user', content: 'What is 6*7?' }], undefined, { skill: 0.5, variant: v }).parsed.content?.split('\n').at(-1));
    const right = answers.filter((a) => a === 'The answer is 42.').length;
    expect(right).toBeGreaterThan(5);
    expect(right).toBeLessThan(35);
    expect(answers.every((a) => /^The answer is (41|42|43)\.$/.test(a ?? ''))).toBe(true);
    const again = Array.from({ length: 40 }, (_, v) => run([{ role: 'user', content: 'What is 6*7?' }], undefined, { skill: 0.5, variant: v }).parsed.content?.split('\n').at(-1));
    expect(again).toEqual(answers);
  });

  it('emits schema-valid JSON when the prompt asks for a schema', () => {
    const schema = { type: 'object', properties: { complexity_reasoning: { type: 'string' }, complexity_score: { type: 'integer', minimum: 1, maximum: 100 } }, required: ['complexity_reasoning', 'complexity_score'] };
    const r = run([{ role: 'system', content: `Respond with JSON matching this schema: ${JSON.stringify(schema)}` }, { role: 'user', content: 'say hi' }], undefined, { thinking: false });
    const v = JSON.parse(r.text);
    expect(typeof v.complexity_reasoning).toBe('string');
    expect(Number.isInteger(v.complexity_score) && v.complexity_score >= 1 && v.complexity_score <= 100).toBe(true);
  });
});
