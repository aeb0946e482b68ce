// Evaluators: answer extraction and normalization, exact / regex / command / json, default selection, errors.
import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { answersMatch, evaluate, evaluatorFor, extractAnswer, lastLineNumber, normalizeAnswer, type EvaluateContext } from '../../src-main/rollouts/evaluators.js';
import { runShell } from '../../src-main/rollouts/runtimes/process.js';
import type { Task } from '../../src-main/rollouts/tasks.js';

const task = (over: Partial<Task> = {}): Task => ({ id: 't', prompt: 'p', ...over });
/** Checks run as host processes here (the local runtime's way); runtimes have their own tests. */
function ctx(over: Partial<EvaluateContext> & { env?: Record<string, string> } = {}): EvaluateContext {
  const { env = { PATH: process.env.PATH ?? '' }, ...rest } = over;
  const workDir = rest.workDir ?? mkdtempSync(join(tmpdir(), 'rollgate-eval-'));
  return {
    task: task({ expected: '42' }), finalOutput: '', workDir,
    runCheck: (command, timeoutMs) => runShell(command, { cwd: workDir, env, timeoutMs, maxOutputBytes: 64 * 1024 }),
    ...rest,
  };
}

describe('final answer', () => {
  it('takes X from the last "The answer is X" (the sim convention), else \\boxed{X}, else the last line', () => {
    expect(extractAnswer('I ran the tool.\n\nThe answer is 391.')).toBe('391.');
    expect(extractAnswer('the answer is 3. Wait, no. The final answer is: 4!\n')).toBe('4!');
    expect(extractAnswer('so \\boxed{12} it is')).toBe('12');
    expect(extractAnswer('thinking...\n\n  Paris  \n')).toBe('Paris');
    expect(extractAnswer('')).toBe('');
  });

  it('normalizes case, whitespace, quotes, emphasis and trailing punctuation', () => {
    expect(normalizeAnswer('  **Hello   World**. ')).toBe('hello world');
    expect(normalizeAnswer('"Paris"!')).toBe('paris');
    expect(normalizeAnswer('`x = 1`;')).toBe('x = 1');
    expect(normalizeAnswer('$42$')).toBe('42');
  });

  it('compares numbers numerically', () => {
    expect(answersMatch('42.0', '42')).toBe(true);
    expect(answersMatch('1,024', '1024')).toBe(true);
    expect(answersMatch('14.700000000001', '14.7')).toBe(true);
    expect(answersMatch('-27', '-27.')).toBe(true);
    expect(answersMatch('43', '42')).toBe(false);
    expect(answersMatch('Paris.', 'paris')).toBe(true);
    expect(answersMatch('Paris, France', 'paris')).toBe(false);
  });

  it('lastLineNumber reads a number alone on the last non-empty line', () => {
    expect(lastLineNumber('3 passed\n0.75\n\n')).toBe(0.75);
    expect(lastLineNumber('3 passed')).toBeNull();
    expect(lastLineNumber('')).toBeNull();
  });
});

describe('evaluatorFor', () => {
  it('check string → command; check object → itself; expected → exact; override wins; nothing → null', () => {
    expect(evaluatorFor(task({ check: 'node test.js', expected: '1' }))).toEqual({ type: 'command', command: 'node test.js' });
    expect(evaluatorFor(task({ check: { type: 'regex', pattern: 'x' } }))).toEqual({ type: 'regex', pattern: 'x' });
    expect(evaluatorFor(task({ expected: '1' }))).toEqual({ type: 'exact' });
    expect(evaluatorFor(task({ expected: '1' }), { type: 'regex', pattern: '1' })).toEqual({ type: 'regex', pattern: '1' });
    expect(evaluatorFor(task())).toBeNull();
  });
});

describe('evaluate', () => {
  it('exact: 1 on a match, 0 otherwise, with what it compared', async () => {
    expect(await evaluate({ type: 'exact' }, ctx({ finalOutput: 'Here.\n\nThe answer is 42.' }))).toMatchObject({ type: 'exact', reward: 1, output: 'answer: "42."; expected: "42"' });
    expect((await evaluate({ type: 'exact' }, ctx({ finalOutput: 'The answer is 41.' }))).reward).toBe(0);
    expect((await evaluate({ type: 'exact', value: 'yes' }, ctx({ finalOutput: 'YES' }))).reward).toBe(1);
    expect(await evaluate({ type: 'exact' }, ctx({ task: task(), finalOutput: 'x' }))).toMatchObject({ reward: 0, error: expect.stringMatching(/without an expected value/) });
  });

  it('regex on the whole final output', async () => {
    expect((await evaluate({ type: 'regex', pattern: '^the answer is 4\\d', flags: 'im' }, ctx({ finalOutput: 'x\nThe answer is 42.' }))).reward).toBe(1);
    expect((await evaluate({ type: 'regex', pattern: 'nope' }, ctx({ finalOutput: 'x' }))).reward).toBe(0);
    expect(await evaluate({ type: 'regex', pattern: '(' }, ctx())).toMatchObject({ reward: 0, error: expect.stringMatching(/invalid regex/) });
  });

  it('command: exit code → 1/0, or a number printed alone on the last line, run in the work folder', async () => {
    const c = ctx();
    writeFileSync(join(c.workDir, 'ok.txt'), 'fine');
    expect(await evaluate({ type: 'command', command: 'test -f ok.txt' }, c)).toMatchObject({ reward: 1 });
    expect(await evaluate({ type: 'command', command: 'echo failing >&2; exit 3' }, c)).toMatchObject({ reward: 0, output: expect.stringContaining('exit 3') });
    expect(await evaluate({ type: 'command', command: 'echo "2 of 4 passed"; echo 0.5' }, c)).toMatchObject({ reward: 0.5 });
    expect(await evaluate({ type: 'command', command: 'echo 0.5', reward: 'exit' }, c)).toMatchObject({ reward: 1 });
    expect(await evaluate({ type: 'command', command: 'echo none', reward: 'stdout' }, c)).toMatchObject({ reward: 0, error: expect.stringMatching(/no number/) });
    // a number that is part of a sentence does not count: exit code decides
    expect(await evaluate({ type: 'command', command: 'echo "3 tests passed"' }, c)).toMatchObject({ reward: 1 });
  });

  it('command: a check that cannot start or times out is an error (reward 0), with its output kept', async () => {
    const c = ctx({ env: { PATH: '/nonexistent' } });
    const notFound = await evaluate({ type: 'command', command: 'no-such-check-xyz' }, c);
    expect(notFound.reward).toBe(0); // sh itself reports 127: an ordinary failing check
    expect(notFound.output).toMatch(/exit 127/);
    const slow = await evaluate({ type: 'command', command: 'echo started; sleep 20', timeoutMs: 300 }, ctx());
    expect(slow).toMatchObject({ reward: 0, error: expect.stringMatching(/timed out/), output: expect.stringContaining('started') });
    const bad = await evaluate({ type: 'command', command: 'true' }, ctx({ workDir: '/nonexistent/dir' }));
    expect(bad).toMatchObject({ reward: 0, error: expect.stringMatching(/could not start/) });
  });

  it('json: reads the reward file its check command wrote (number, {reward}, {key}, boolean)', async () => {
    const c = ctx();
    const writes = (path: string, text: string) => `printf '%s' '${text}' > ${path}`;
    expect(await evaluate({ type: 'json', command: writes('reward.json', '{"reward": 0.25, "detail": "x"}') }, c)).toMatchObject({ reward: 0.25 });
    expect(await evaluate({ type: 'json', path: 'r.json', key: 'score', command: writes('r.json', '{"score": true}') }, c)).toMatchObject({ reward: 1 });
    expect(await evaluate({ type: 'json', path: 'out.json', command: 'echo 0.75 > out.json' }, c)).toMatchObject({ reward: 0.75 });
    expect(await evaluate({ type: 'json', path: 'missing.json', command: 'true' }, c)).toMatchObject({ reward: 0, error: 'no reward file missing.json' });
    expect(await evaluate({ type: 'json', path: 'bad.json', command: writes('bad.json', '{not json') }, c)).toMatchObject({ reward: 0, error: expect.stringMatching(/not JSON/) });
    const tr = '{"reward": 0.5, "traceRewards": {"chatcmpl-0123456789abcdef01234567": 1, "t2": null, "bad": "x"}}';
    expect(await evaluate({ type: 'json', path: 'tr.json', command: writes('tr.json', tr) }, c)).toEqual(expect.objectContaining({ reward: 0.5, traceRewards: { 'chatcmpl-0123456789abcdef01234567': 1, t2: null } }));
    expect(await evaluate({ type: 'json', path: 'str.json', command: writes('str.json', '{"reward": "high"}') }, c)).toMatchObject({ reward: 0, error: 'reward file has no numeric "reward"' });
  });

  it('json: a reward file the agent left does not count, and links out of the work folder are refused', async () => {
    const c = ctx();
    writeFileSync(join(c.workDir, 'reward.json'), '{"reward": 1}');
    expect(await evaluate({ type: 'json', command: 'true' }, c)).toMatchObject({ reward: 0, error: 'no reward file reward.json' });
    symlinkSync(tmpdir(), join(c.workDir, 'out'));
    expect(await evaluate({ type: 'json', path: 'out/reward.json', command: 'true' }, c)).toMatchObject({ reward: 0, error: expect.stringMatching(/leaves the work folder/) });
  });

  it('no evaluator: reward null', async () => {
    expect(await evaluate(null, ctx())).toMatchObject({ type: 'none', reward: null });
  });
});
