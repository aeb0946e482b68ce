// Host processes for every runtime: a child in its own process group with bounded stdout/stderr capture,
// a timeout, cancellation, and a kill of the whole group when the process ends, times out or is cancelled.
// Sandboxed runtimes run bwrap / the docker client through this; their PID namespace or container then
// takes everything the agent started with it (a `setsid` daemon escapes a process group, not those).
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Keeps the first and the last `limit/2` bytes of a stream, and how many bytes were dropped between. */
export class BoundedCapture {
  private head: Buffer[] = [];
  private headLen = 0;
  private tail: Buffer[] = [];
  private tailLen = 0;
  private dropped = 0;
  total = 0;
  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    const half = Math.floor(this.limit / 2);
    if (this.headLen < half) {
      const take = chunk.subarray(0, half - this.headLen);
      this.head.push(take);
      this.headLen += take.length;
      chunk = chunk.subarray(take.length);
    }
    if (!chunk.length) return;
    this.tail.push(chunk);
    this.tailLen += chunk.length;
    while (this.tailLen > this.limit - half && this.tail.length) {
      const over = this.tailLen - (this.limit - half);
      const first = this.tail[0];
      if (first.length <= over) {
        this.tail.shift();
        this.tailLen -= first.length;
        this.dropped += first.length;
      } else {
        this.tail[0] = first.subarray(over);
        this.tailLen -= over;
        this.dropped += over;
      }
    }
  }

  /** The whole text when it fit, else head + a marker + tail. */
  text(): string {
    const head = Buffer.concat(this.head).toString('utf8');
    const tail = Buffer.concat(this.tail).toString('utf8');
    return this.dropped ? `${head}\n…[${this.dropped} bytes omitted]…\n${tail}` : head + tail;
  }

  /** The last part of the stream (for final-answer extraction): tail, or everything when nothing was dropped. */
  lastText(): string {
    return this.dropped ? Buffer.concat(this.tail).toString('utf8') : this.text();
  }
}

export interface ProcessSpec {
  /** Executable (a path or a name on PATH). */
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Bytes kept per stream (head + tail). Default 256 KiB. */
  maxOutputBytes?: number;
  onSpawn?: (pid: number) => void;
  onStdout?: (chunk: Buffer) => void;
}

export interface ProcessResult {
  pid: number | null;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  cancelled: boolean;
  /** Set when the process could not be started (ENOENT, EACCES…). */
  spawnError: string | null;
  stdout: string;
  stderr: string;
  /** The end of stdout (all of it when it fit in the capture). */
  stdoutTail: string;
  durationMs: number;
}

/** SIGKILLs a whole process group; quiet when it is already gone. */
export function killGroup(pid: number | null | undefined, sig: NodeJS.Signals = 'SIGKILL'): boolean {
  if (!pid) return false;
  try {
    process.kill(-pid, sig);
    return true;
  } catch {
    return false;
  }
}

export const DEFAULT_MAX_OUTPUT = 256 * 1024;
const CLOSE_GRACE_MS = 2000;

export function runProcess(spec: ProcessSpec): Promise<ProcessResult> {
  const started = Date.now();
  const out = new BoundedCapture(spec.maxOutputBytes ?? DEFAULT_MAX_OUTPUT);
  const err = new BoundedCapture(spec.maxOutputBytes ?? DEFAULT_MAX_OUTPUT);
  return new Promise<ProcessResult>((resolveResult) => {
    let timedOut = false;
    let cancelled = false;
    let spawnError: string | null = null;
    let exitCode: number | null = null;
    let exitSignal: string | null = null;
    let settled = false;
    let timer: NodeJS.Timeout | null = null;
    let grace: NodeJS.Timeout | null = null;

    if (spec.signal?.aborted) {
      resolveResult({ pid: null, exitCode: null, signal: null, timedOut: false, cancelled: true, spawnError: null, stdout: '', stderr: '', stdoutTail: '', durationMs: 0 });
      return;
    }

    const child = spawn(spec.file, spec.args, { cwd: spec.cwd, env: spec.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const pid = child.pid ?? null;
    const finish = () => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      if (grace) clearTimeout(grace);
      spec.signal?.removeEventListener('abort', onAbort);
      killGroup(pid);
      resolveResult({
        pid, exitCode, signal: exitSignal, timedOut, cancelled, spawnError,
        stdout: out.text(), stderr: err.text(), stdoutTail: out.lastText(), durationMs: Date.now() - started,
      });
    };
    const onAbort = () => { cancelled = true; killGroup(pid); };

    child.stdout.on('data', (d: Buffer) => { out.push(d); spec.onStdout?.(d); });
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.on('error', (e) => {
      spawnError = e.message;
      finish();
    });
    child.on('exit', (code, sig) => {
      exitCode = code;
      exitSignal = sig;
      // The leader is gone: kill what it left in its group, then wait (briefly) for the pipes to drain.
      killGroup(pid);
      grace = setTimeout(() => { child.stdout.destroy(); child.stderr.destroy(); finish(); }, CLOSE_GRACE_MS);
    });
    child.on('close', () => finish());
    if (pid) {
      spec.onSpawn?.(pid);
      timer = setTimeout(() => { timedOut = true; killGroup(pid); }, spec.timeoutMs);
      spec.signal?.addEventListener('abort', onAbort, { once: true });
    }
  });
}

/** Runs a shell command line (`/bin/sh -c`) with runProcess. */
export function runShell(command: string, spec: Omit<ProcessSpec, 'file' | 'args'>): Promise<ProcessResult> {
  return runProcess({ ...spec, file: '/bin/sh', args: ['-c', command] });
}

/**
 * The pids of processes that belong to these runs: their environment holds ROLLGATE_RUN_ID=<token>, so a
 * reused pid is never mistaken for ours. Linux only (/proc); elsewhere none are found.
 */
export function runProcesses(tokens: string[]): number[] {
  if (!tokens.length || process.platform !== 'linux') return [];
  const wanted = new Set(tokens.map((t) => `ROLLGATE_RUN_ID=${t}`));
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return [];
  }
  return pids.map(Number).filter((pid) => {
    if (pid === process.pid) return false;
    try {
      return readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').some((kv) => wanted.has(kv));
    } catch {
      return false;
    }
  });
}

/** Kills the process groups of agents a previous Rollgate process left running (runs recorded as running). */
export function killLeftoverProcesses(tokens: string[]): number {
  const pgidOf = (pid: number | 'self') => {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
  };
  let own = -1;
  try { own = pgidOf('self'); } catch { /* keep -1 */ }
  let killed = 0;
  for (const pid of runProcesses(tokens)) {
    try {
      const pgid = pgidOf(pid);
      if (pgid > 1 && pgid !== own && killGroup(pgid)) killed++;
      else { process.kill(pid, 'SIGKILL'); killed++; }
    } catch { /* gone */ }
  }
  return killed;
}
