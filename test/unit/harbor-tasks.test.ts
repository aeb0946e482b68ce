// Harbor task folders (task.toml, instruction, broken folders), reward files, and the SWE-bench row mapping.
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { contextHash } from '../../src-main/rollouts/images/context-hash.js';
import { readHarborReward } from '../../src-main/rollouts/harbor/reward.js';
import { parseTaskToml } from '../../src-main/rollouts/harbor/task-toml.js';
import { DatasetError, loadDataset, parseDataset } from '../../src-main/rollouts/tasks.js';

const EXAMPLES = resolve(import.meta.dirname, '..', '..', 'assets', 'tasks');
const temps: string[] = [];
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), 'rollgate-harbor-'));
  temps.push(d);
  return d;
};
afterEach(() => { for (const d of temps.splice(0)) rmSync(d, { recursive: true, force: true }); });

function writeTree(root: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(root, rel, '..'), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
}

describe('task.toml', () => {
  it('reads timeouts, resources and the network policy, in both schema spellings', () => {
    const s = parseTaskToml([
      'version = "1.0"', '[metadata]', 'difficulty = "easy"', '[verifier]', 'timeout_sec = 90.5', 'env = { A = "1", N = 2 }',
      '[agent]', 'timeout_sec = 300', '[environment]', 'build_timeout_sec = 60', 'cpus = 2', 'memory = "4G"', 'allow_internet = false',
      'gpus = 0', 'custom_key = "ignored"',
    ].join('\n'));
    expect(s).toMatchObject({
      agentTimeoutMs: 300_000, verifierTimeoutMs: 90_500, buildTimeoutMs: 60_000, cpus: 2, memoryMb: 4096,
      allowInternet: false, verifierEnv: { A: '1', N: '2' }, metadata: { difficulty: 'easy' },
    });
    expect(parseTaskToml('[environment]\nmemory_mb = 512\n')).toMatchObject({ memoryMb: 512, allowInternet: true });
  });

  it('names the line of a syntax error and the field of a bad value', () => {
    expect(() => parseTaskToml('[agent]\ntimeout_sec = = 3\n')).toThrow(/task\.toml line 2/);
    expect(() => parseTaskToml('[agent]\ntimeout_sec = "soon"\n')).toThrow(/agent\.timeout_sec/);
    expect(() => parseTaskToml('[environment]\nmemory = "lots"\n')).toThrow(/environment\.memory: must be a size/);
  });
});

describe('Harbor task folders', () => {
  it('loads the shipped examples: instruction as the prompt, environment/ to build, tests and solution kept aside', () => {
    const ds = loadDataset(EXAMPLES);
    expect(ds.tasks.map((t) => t.id)).toEqual(['fix-greeting', 'make-test-pass']);
    const [greet, calc] = ds.tasks;
    expect(greet.prompt).toMatch(/^`greet\.sh` in \/app/);
    expect(greet.container).toMatchObject({ buildContext: join(EXAMPLES, 'fix-greeting', 'environment'), cpus: 1, memoryMb: 512, buildTimeoutMs: 300_000 });
    expect(greet.harbor).toMatchObject({ testsDir: join(EXAMPLES, 'fix-greeting', 'tests'), solutionDir: join(EXAMPLES, 'fix-greeting', 'solution'), agentTimeoutMs: 120_000, verifierTimeoutMs: 60_000, allowInternet: false });
    expect(calc.container?.memoryMb).toBe(512);
    expect(greet.invalid).toBeUndefined();
    // One task folder on its own is a dataset too.
    expect(loadDataset(join(EXAMPLES, 'make-test-pass')).tasks.map((t) => t.id)).toEqual(['make-test-pass']);
  });

  it('marks each broken folder with its reason and keeps the others', () => {
    const root = temp();
    cpSync(join(EXAMPLES, 'fix-greeting'), join(root, 'good'), { recursive: true });
    writeTree(root, {
      'no-instruction/task.toml': '[agent]\ntimeout_sec = 10\n', 'no-instruction/environment/Dockerfile': 'FROM x\n', 'no-instruction/tests/test.sh': 'true\n',
      'bad-toml/instruction.md': 'do it', 'bad-toml/task.toml': '[agent\n', 'bad-toml/environment/Dockerfile': 'FROM x\n', 'bad-toml/tests/test.sh': 'true\n',
      'no-env/instruction.md': 'do it', 'no-env/task.toml': '', 'no-env/tests/test.sh': 'true\n',
      'no-tests/instruction.md': 'do it', 'no-tests/task.toml': '[environment]\ndocker_image = "debian:bookworm-slim"\n',
      'not-a-task/notes.txt': 'just a folder',
    });
    const tasks = loadDataset(root).tasks;
    const reasons = Object.fromEntries(tasks.map((t) => [t.id, t.invalid ?? null]));
    expect(reasons).toEqual({
      'bad-toml': expect.stringMatching(/broken Harbor task bad-toml: task\.toml line 1/),
      good: null,
      'no-env': expect.stringMatching(/no environment\/Dockerfile and no \[environment\] docker_image/),
      'no-instruction': expect.stringMatching(/no instruction\.md/),
      'no-tests': expect.stringMatching(/no tests\/test\.sh/),
    });
    expect(tasks.find((t) => t.id === 'no-tests')?.container).toEqual({ image: 'debian:bookworm-slim' });
  });

  it('a folder holding no task folder is a dataset error', () => {
    const root = temp();
    writeTree(root, { 'a/readme.txt': 'x' });
    expect(() => loadDataset(root)).toThrow(DatasetError);
    expect(() => loadDataset(root)).toThrow(/no Harbor task folders/);
  });
});

describe('environment content hash', () => {
  it('depends on paths, contents and executable bits, not on where the folder is', () => {
    const a = temp();
    const b = temp();
    writeTree(a, { Dockerfile: 'FROM x\n', 'src/app.sh': 'echo 1\n' });
    writeTree(b, { Dockerfile: 'FROM x\n', 'src/app.sh': 'echo 1\n' });
    expect(contextHash(a)).toBe(contextHash(b));
    writeFileSync(join(b, 'src/app.sh'), 'echo 2\n');
    expect(contextHash(a)).not.toBe(contextHash(b));
    writeFileSync(join(b, 'src/app.sh'), 'echo 1\n');
    expect(contextHash(a)).toBe(contextHash(b));
    writeTree(b, { 'src/new.txt': '' });
    expect(contextHash(a)).not.toBe(contextHash(b));
  });
});

describe('reward files', () => {
  it('reward.txt wins; reward.json gives "reward" or its only number; anything else is a clear error', () => {
    const d = temp();
    expect(readHarborReward(d).error).toMatch(/wrote no reward/);
    writeFileSync(join(d, 'reward.json'), '{"reward": 0.5, "hidden": 1}');
    expect(readHarborReward(d)).toEqual({ reward: 0.5, rewards: { reward: 0.5, hidden: 1 } });
    writeFileSync(join(d, 'reward.txt'), ' 1\n');
    expect(readHarborReward(d)).toEqual({ reward: 1, rewards: { reward: 1 } });
    writeFileSync(join(d, 'reward.txt'), 'passed');
    expect(readHarborReward(d).error).toMatch(/reward\.txt does not hold a number/);
    rmSync(join(d, 'reward.txt'));
    writeFileSync(join(d, 'reward.json'), '{"accuracy": 0.25}');
    expect(readHarborReward(d).reward).toBe(0.25);
    writeFileSync(join(d, 'reward.json'), '{"a": 1, "b": 0}');
    expect(readHarborReward(d).error).toMatch(/several values \(a, b\) and no "reward"/);
    writeFileSync(join(d, 'reward.json'), '{oops');
    expect(readHarborReward(d).error).toMatch(/not JSON/);
  });
});

describe('SWE-bench-style rows', () => {
  const row = {
    instance_id: 'acme__calc-12', repo: 'acme/calc', base_commit: 'abc1234', problem_statement: 'add() subtracts',
    image: 'acme-calc:12', FAIL_TO_PASS: '["tests/test_calc.py::test_add"]', PASS_TO_PASS: ['tests/test_calc.py::test_sub'],
    patch: 'diff --git a/x b/x', test_patch: 'diff --git a/t b/t', hints_text: '', created_at: '2024-01-01', version: 1.2,
  };

  it('maps to a task through the documented mapping (JSON-encoded test lists accepted)', () => {
    const [t] = parseDataset(JSON.stringify(row), 'swe.jsonl');
    expect(t).toMatchObject({
      id: 'acme__calc-12', prompt: 'add() subtracts', container: { image: 'acme-calc:12', workdir: '/testbed' },
      metadata: { instance_id: 'acme__calc-12', repo: 'acme/calc', base_commit: 'abc1234', version: '1.2' },
      swebench: {
        testCommand: 'python -m pytest -rA', failToPass: ['tests/test_calc.py::test_add'], passToPass: ['tests/test_calc.py::test_sub'],
        goldPatch: row.patch, testPatch: row.test_patch, baseCommit: 'abc1234',
      },
    });
    // Nothing of the check reaches the prompt.
    expect(t.prompt).not.toMatch(/test_add|diff/);
  });

  it('reports a row without an image or with a bad test list by line and field', () => {
    const bad = { ...row, image: undefined, FAIL_TO_PASS: 'not json' };
    try {
      parseDataset(`\n${JSON.stringify(bad)}`, 'swe.jsonl');
      throw new Error('expected a DatasetError');
    } catch (e) {
      expect((e as DatasetError).problems).toEqual([
        expect.stringMatching(/^line 2: image: /),
        expect.stringMatching(/^line 2: FAIL_TO_PASS: must be a list of test names/),
      ]);
    }
  });

  it('plain rows may name an image and a workdir', () => {
    const [t] = parseDataset('{"id":"a","prompt":"p","image":"img:1","workdir":"/src"}', 'x.jsonl');
    expect(t.container).toEqual({ image: 'img:1', workdir: '/src' });
  });
});
