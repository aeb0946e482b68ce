// Runs an agent CLI in a fresh work folder and HOME, with a hard timeout and a process-group kill.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export interface AgentRun { code: number | null; stdout: string; stderr: string; workDir: string; home: string; timedOut: boolean }

export async function runAgent(opts: {
  bin: string; args: string[]; env: Record<string, string>; files?: Record<string, string>; homeFiles?: Record<string, string>; timeoutMs?: number;
}): Promise<AgentRun> {
  const root = mkdtempSync(join(tmpdir(), 'rollgate-agent-'));
  const workDir = join(root, 'work');
  const home = join(root, 'home');
  for (const [rel, text] of Object.entries({ ...opts.files })) { mkdirSync(dirname(join(workDir, rel)), { recursive: true }); writeFileSync(join(workDir, rel), text); }
  mkdirSync(workDir, { recursive: true });
  for (const [rel, text] of Object.entries({ ...opts.homeFiles })) { mkdirSync(dirname(join(home, rel)), { recursive: true }); writeFileSync(join(home, rel), text); }
  mkdirSync(home, { recursive: true });
  const child = spawn(opts.bin, opts.args, {
    cwd: workDir,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '', HOME: home, TERM: 'dumb', CI: '1', NO_COLOR: '1', ...opts.env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => { stdout += d; });
  child.stderr.on('data', (d) => { stderr += d; });
  let timedOut = false;
  const killGroup = () => { try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* already gone */ } };
  const timer = setTimeout(() => { timedOut = true; killGroup(); }, opts.timeoutMs ?? 120_000);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(timer);
  killGroup();
  return { code, stdout, stderr, workDir, home, timedOut };
}
