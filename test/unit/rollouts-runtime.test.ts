// Local runtime: exit codes, bounded capture, timeout and cancel kill the whole process group (daemons
// included, checked by pid), work folder + HOME preparation, a clean env.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BoundedCapture, runProcess, runShell } from '../../src-main/rollouts/runtimes/process.js';
import { baseEnv, prepareRunDirs } from '../../src-main/rollouts/runtimes/run-dirs.js';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8')); // a zombie is dead
  } catch {
    return false;
  }
}

async function until(cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}

const dir = () => mkdtempSync(join(tmpdir(), 'rollgate-rt-'));
const env = () => ({ PATH: process.env.PATH ?? '/usr/bin:/bin' });

describe('BoundedCapture', () => {
  it('keeps everything that fits, else head + marker + tail', () => {
    const small = new BoundedCapture(100);
    small.push(Buffer.from('hello '));
    small.push(Buffer.from('world'));
    expect(small.text()).toBe('hello world');
    const big = new BoundedCapture(20);
    for (let i = 0; i < 10; i++) big.push(Buffer.from(`${i}${i}${i}${i}${i}`));
    expect(big.total).toBe(50);
    expect(big.text()).toBe('0000011111\n…[30 bytes omitted]…\n8888899999');
    expect(big.lastText()).toBe('8888899999');
  });
});

describe('runProcess', () => {
  it('captures stdout/stderr and the exit code', async () => {
    const r = await runShell('echo out; echo err >&2; exit 7', { cwd: dir(), env: env(), timeoutMs: 5000 });
    expect(r).toMatchObject({ exitCode: 7, stdout: 'out\n', stderr: 'err\n', timedOut: false, cancelled: false, spawnError: null });
  });

  it('reports a program that cannot start', async () => {
    const r = await runProcess({ file: '/nonexistent/agent', args: [], cwd: dir(), env: env(), timeoutMs: 5000 });
    expect(r.spawnError).toMatch(/ENOENT/);
  });

  it('kills the whole group on timeout, daemons included', async () => {
    const cwd = dir();
    const started = Date.now();
    const r = await runShell('sleep 300 & echo $! > daemon.pid; sleep 300', { cwd, env: env(), timeoutMs: 500 });
    expect(r.timedOut).toBe(true);
    expect(Date.now() - started).toBeLessThan(4000);
    const daemon = Number(readFileSync(join(cwd, 'daemon.pid'), 'utf8'));
    await until(() => !alive(daemon));
    expect(alive(r.pid!)).toBe(false);
  });

  it('kills daemons a finished agent left behind', async () => {
    const cwd = dir();
    const r = await runShell('(sleep 300 >/dev/null 2>&1 &) ; echo $$ > leader.pid; sleep 300 >/dev/null 2>&1 & echo $! > daemon.pid; echo done', { cwd, env: env(), timeoutMs: 5000 });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('done\n');
    const daemon = Number(readFileSync(join(cwd, 'daemon.pid'), 'utf8'));
    await until(() => !alive(daemon));
  });

  it('cancels through an AbortSignal', async () => {
    const cwd = dir();
    const ac = new AbortController();
    const p = runShell('sleep 300 & echo $! > daemon.pid; wait', { cwd, env: env(), timeoutMs: 60_000, signal: ac.signal });
    await until(() => existsSync(join(cwd, 'daemon.pid')) && readFileSync(join(cwd, 'daemon.pid'), 'utf8').trim() !== '');
    ac.abort();
    const r = await p;
    expect(r.cancelled).toBe(true);
    await until(() => !alive(Number(readFileSync(join(cwd, 'daemon.pid'), 'utf8'))));
  });

  it('keeps long output bounded', async () => {
    const r = await runShell('i=0; while [ $i -lt 3000 ]; do echo "line $i"; i=$((i+1)); done', { cwd: dir(), env: env(), timeoutMs: 10_000, maxOutputBytes: 1000 });
    expect(r.stdout.length).toBeLessThan(1100);
    expect(r.stdout).toMatch(/bytes omitted/);
    expect(r.stdoutTail.trim().split('\n').pop()).toBe('line 2999');
  });
});

describe('run folders and env', () => {
  it('writes task files into work/ and harness files into home/, refusing escapes', () => {
    const root = join(dir(), 'run');
    const d = prepareRunDirs(root, { 'a.txt': 'A', 'src/b.js': 'B' }, { '.qwen/settings.json': '{}' });
    expect(readFileSync(join(d.work, 'src/b.js'), 'utf8')).toBe('B');
    expect(readFileSync(join(d.home, '.qwen/settings.json'), 'utf8')).toBe('{}');
    expect(() => prepareRunDirs(root, { '../x': 'no' }, {})).toThrow(/escapes/);
  });

  it('starts from a clean env: own HOME/TMPDIR, node on PATH, no inherited secrets', () => {
    process.env.ROLLGATE_TEST_SECRET = 'x';
    const e = baseEnv({ home: '/h', tmp: '/t' });
    delete process.env.ROLLGATE_TEST_SECRET;
    expect(e.HOME).toBe('/h');
    expect(e.TMPDIR).toBe('/t');
    expect(e.XDG_CONFIG_HOME).toBe('/h/.config');
    expect(e.PATH.split(':')).toContain(process.execPath.replace(/\/node$/, ''));
    expect(e.ROLLGATE_TEST_SECRET).toBeUndefined();
  });
});
