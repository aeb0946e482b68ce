// Issue 18.2: nothing an agent can read carries a control credential. `rollgate serve` off loopback keeps
// its token in <data-dir>/control-token (mode 0600): never in its argv or environment (both readable
// through /proc), so no child inherits it; a token in ROLLGATE_CONTROL_TOKEN is refused, not used.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/paths.js';

const cleanup: Array<() => void> = [];
afterAll(() => { for (const c of cleanup.reverse()) c(); });

function serve(dataDir: string, env: NodeJS.ProcessEnv = process.env): { child: ChildProcess; url: Promise<string> } {
  const child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'src-main/cli.ts'), 'serve', '--host', '127.0.0.2', '--port', '0', '--no-sim', '--data-dir', dataDir], {
    cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env,
  });
  cleanup.push(() => { if (child.exitCode === null) child.kill('SIGKILL'); });
  let out = '';
  let err = '';
  const url = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /Rollgate listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.stderr!.on('data', (d) => { err += d; });
    child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
  return { child, url };
}

describe('control token', () => {
  it('lives in a 0600 file in the data folder, never in the argv or environment of Rollgate', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'rollgate-token-'));
    cleanup.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const env = { ...process.env };
    delete env.ROLLGATE_CONTROL_TOKEN;
    const { child, url } = serve(dataDir, env);
    const base = await url;
    const file = join(dataDir, 'control-token');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const token = readFileSync(file, 'utf8').trim();
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    // What any process of the same user (an unsandboxed agent) could read about the server:
    const environ = readFileSync(`/proc/${child.pid}/environ`, 'latin1');
    const cmdline = readFileSync(`/proc/${child.pid}/cmdline`, 'latin1');
    expect(environ).not.toContain(token);
    expect(cmdline).not.toContain(token);
    expect((await fetch(`${base}/api/engines`)).status).toBe(401);
    expect((await fetch(`${base}/api/engines`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    child.kill('SIGTERM');
  }, 60_000);

  it('refuses a token given in the environment', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'rollgate-token-env-'));
    cleanup.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const { url } = serve(dataDir, { ...process.env, ROLLGATE_CONTROL_TOKEN: 'x'.repeat(32) });
    await expect(url).rejects.toThrow(/ROLLGATE_CONTROL_TOKEN is not read.*control-token/s);
  }, 60_000);
});
