// Paths on the command line are the user's (issue 19): `npm run rollgate -- …` starts in the package root
// and leaves the folder the user typed the command in as INIT_CWD; relative --dataset, --out, --topology
// and --data-dir resolve against it. A missing topology file is one line, not a stack or the help text.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { userPath } from '../../src-main/commands/options.js';
import { runCli } from '../helpers/cli.js';

const dirs: string[] = [];
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });
const tempDir = () => { const d = mkdtempSync(join(tmpdir(), 'rollgate-paths-')); dirs.push(d); return d; };

describe('paths the user typed', () => {
  it('resolve against INIT_CWD when npm set it, else the working folder', () => {
    expect(userPath('data/x.jsonl', { INIT_CWD: '/home/me/project' })).toBe('/home/me/project/data/x.jsonl');
    expect(userPath('/abs/x.jsonl', { INIT_CWD: '/home/me/project' })).toBe('/abs/x.jsonl');
    expect(userPath('x.jsonl', {})).toBe(join(process.cwd(), 'x.jsonl'));
  });

  it('eval reads a relative dataset and data folder, and export writes a relative --out, from the user\'s folder', async () => {
    const here = tempDir();
    writeFileSync(join(here, 'tasks.jsonl'), `${JSON.stringify({ id: 'add', prompt: 'What is 2+3? Use the calculator tool, then give the final answer as "The answer is <number>."', expected: '5' })}\n`);
    const env = { INIT_CWD: here };
    const ev = await runCli(['eval', '--dataset', 'tasks.jsonl', '--harness', 'builtin', '--data-dir', 'data', '--no-progress', '--skill', '1'], 150_000, env);
    expect(ev.code, ev.stderr).toBe(0);
    expect(ev.stdout).toMatch(/^add\s+1\/1/m);
    expect(existsSync(join(here, 'data'))).toBe(true);
    const ex = await runCli(['export', '--data-dir', 'data', '--out', 'rows.jsonl', '--preset', 'verifiers'], 60_000, env);
    expect(ex.code, ex.stderr).toBe(0);
    const rows = readFileSync(join(here, 'rows.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(rows.length).toBeGreaterThan(0);
    expect(rows[0]).toHaveProperty('completion_mask');
  }, 200_000);

  it('a missing topology file is a one-line error naming the file it looked for', async () => {
    const here = tempDir();
    for (const cmd of [['serve', '--port', '0'], ['eval', '--dataset', 'demo:calculator', '--harness', 'builtin']]) {
      const r = await runCli([...cmd, '--topology', 'engines.yaml', '--data-dir', here], 60_000, { INIT_CWD: here });
      expect(r.code, cmd[0]).not.toBe(0);
      const lines = r.stderr.trim().split('\n');
      expect(lines, r.stderr).toHaveLength(1);
      expect(lines[0]).toContain(`topology file not found: ${join(here, 'engines.yaml')}`);
    }
  }, 120_000);
});
