// `rollgate tasks check PATH` as a user runs it: a progress bar on stderr, a verdict per task on stdout,
// exit 0 when every task is sound, 1 when one is broken (with the reason), 2 on bad input.
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { ensureBaseImage } from '../helpers/base-image.js';

const EXAMPLES = join(REPO_ROOT, 'assets', 'tasks');
let dir: string;
beforeAll(async () => {
  await ensureBaseImage(new Docker());
  dir = mkdtempSync(join(tmpdir(), 'rollgate-cli-tasks-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('rollgate tasks check', () => {
  it('passes the shipped examples, with a progress bar', async () => {
    const r = await runCli(['tasks', 'check', 'assets/tasks', '--data-dir', join(dir, 'data1')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/checking 2 task\(s\) in assets\/tasks \(runtime docker\)/);
    expect(r.stderr).toMatch(/runs \(oracle \+ nop\)/);
    expect(r.stdout).toMatch(/^fix-greeting\s+1\s+0\s+ok$/m);
    expect(r.stdout).toMatch(/^make-test-pass\s+1\s+0\s+ok$/m);
    expect(r.stdout).toMatch(/2 of 2 tasks sound, 0 broken/);
  });

  it('names a broken task and why, and exits 1', async () => {
    const root = join(dir, 'tasks');
    cpSync(join(EXAMPLES, 'fix-greeting'), join(root, 'fix-greeting'), { recursive: true });
    cpSync(join(EXAMPLES, 'fix-greeting'), join(root, 'no-instruction'), { recursive: true });
    rmSync(join(root, 'no-instruction', 'instruction.md'));
    writeFileSync(join(root, 'notes.txt'), 'not a task');
    const r = await runCli(['tasks', 'check', root, '--data-dir', join(dir, 'data2'), '--no-progress']);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toMatch(/^no-instruction\s+-\s+-\s+BROKEN: oracle: broken Harbor task no-instruction: no instruction\.md/m);
    expect(r.stdout).toMatch(/1 of 2 tasks sound, 1 broken/);
  });

  it('bad input exits 2 with the reason', async () => {
    const r = await runCli(['tasks', 'check', join(dir, 'nowhere'), '--data-dir', join(dir, 'data3')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/file not found/);
  });
});
