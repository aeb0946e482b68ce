// Installs a pinned agent CLI on demand into `<dataDir>/agents/<pkg>-<version>/` (never a project
// dependency), once per version, with progress reported as it goes. Concurrent callers share one install.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentPackage } from './harnesses/index.js';

export interface InstallProgress {
  package: string;
  version: string;
  phase: 'cached' | 'installing' | 'done' | 'failed';
  message: string;
  elapsedMs: number;
}

export function agentInstallDir(agentsDir: string, agent: AgentPackage): string {
  return join(agentsDir, `${agent.package.replace(/[@/]/g, '_')}-${agent.version}`);
}

/** The installed executable, or null when this version is not installed in `agentsDir`. */
export function installedAgentBin(agentsDir: string, agent: AgentPackage): string | null {
  const dir = agentInstallDir(agentsDir, agent);
  const bin = join(dir, 'node_modules', '.bin', agent.bin);
  const pkg = join(dir, 'node_modules', ...agent.package.split('/'), 'package.json');
  if (!existsSync(bin) || !existsSync(pkg)) return null;
  try {
    return (JSON.parse(readFileSync(pkg, 'utf8')) as { version?: string }).version === agent.version ? bin : null;
  } catch {
    return null;
  }
}

const inFlight = new Map<string, Promise<string>>();

export function installAgent(
  agentsDir: string,
  agent: AgentPackage,
  onProgress: (p: InstallProgress) => void = () => undefined,
  opts: { timeoutMs?: number; npm?: string } = {},
): Promise<string> {
  const started = Date.now();
  const report = (phase: InstallProgress['phase'], message: string) =>
    onProgress({ package: agent.package, version: agent.version, phase, message, elapsedMs: Date.now() - started });
  const ready = installedAgentBin(agentsDir, agent);
  if (ready) {
    report('cached', `${agent.package}@${agent.version} already installed`);
    return Promise.resolve(ready);
  }
  const dir = agentInstallDir(agentsDir, agent);
  const pending = inFlight.get(dir);
  if (pending) return pending;
  const p = new Promise<string>((resolvePromise, reject) => {
    mkdirSync(dir, { recursive: true });
    report('installing', `installing ${agent.package}@${agent.version} into ${dir}`);
    const child = spawn(opts.npm ?? 'npm', ['install', '--no-audit', '--no-fund', '--no-save', '--loglevel', 'http', '--prefix', dir, `${agent.package}@${agent.version}`], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ELECTRON_SKIP_BINARY_DOWNLOAD: '1', npm_config_update_notifier: 'false' },
    });
    let tail = '';
    let fetched = 0;
    const onLine = (line: string) => {
      const t = line.trim();
      if (!t) return;
      tail = `${tail}\n${t}`.slice(-4000);
      if (/\bfetch\b|GET 200/.test(t)) fetched++;
      else report('installing', t.slice(0, 300));
    };
    for (const stream of [child.stdout, child.stderr]) {
      let buf = '';
      stream.on('data', (d: Buffer) => {
        buf += d.toString('utf8');
        let nl;
        while ((nl = buf.indexOf('\n')) >= 0) { onLine(buf.slice(0, nl)); buf = buf.slice(nl + 1); }
      });
    }
    const ticker = setInterval(() => report('installing', `installing ${agent.package}@${agent.version}: ${fetched} packages fetched, ${Math.round((Date.now() - started) / 1000)} s`), 2000);
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 900_000);
    let finished = false;
    const done = (err: Error | null) => {
      if (finished) return;
      finished = true;
      clearInterval(ticker);
      clearTimeout(timer);
      const bin = installedAgentBin(agentsDir, agent);
      if (!err && bin) {
        report('done', `installed ${agent.package}@${agent.version} in ${Math.round((Date.now() - started) / 1000)} s`);
        resolvePromise(bin);
        return;
      }
      const msg = err?.message ?? `npm install finished but ${agent.bin} is missing`;
      report('failed', msg);
      rmSync(dir, { recursive: true, force: true });
      reject(new Error(`could not install ${agent.package}@${agent.version}: ${msg}${tail ? `\n${tail.split('\n').slice(-15).join('\n')}` : ''}`));
    };
    child.on('error', (e) => done(e));
    child.on('close', (code, sig) => done(code === 0 ? null : new Error(`npm install exited with ${code ?? sig}`)));
  }).finally(() => inFlight.delete(dir));
  inFlight.set(dir, p);
  return p;
}
