// Runs `rollgate <args>` (tsx src-main/cli.ts) to completion in its own process and collects its output.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from './paths.js';

const TSX = join(REPO_ROOT, 'node_modules', '.bin', 'tsx');

export function runCli(args: string[], timeoutMs = 150_000, env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(TSX, [join(REPO_ROOT, 'src-main/cli.ts'), ...args], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}
