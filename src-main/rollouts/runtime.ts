// Local runtime (DESIGN §7): a child process in its own process group, in a fresh work folder with its
// own HOME, bounded stdout/stderr capture, a timeout, cancellation, and a kill of the whole group when
// the process ends, times out or is cancelled (agents leave daemons behind: MCP servers, LSPs, shells).
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';

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

export interface RunDirs { root: string; work: string; home: string; tmp: string }

/** Writes `files` under `base`; every path must stay inside it. */
export function writeFiles(base: string, files: Record<string, string> | undefined, mode?: Record<string, number>): void {
  const root = resolve(base);
  for (const [rel, text] of Object.entries(files ?? {})) {
    const path = resolve(root, rel);
    if (path !== root && !path.startsWith(root + sep)) throw new Error(`file path escapes the folder: ${rel}`);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    const m = mode?.[rel];
    if (m !== undefined) chmodSync(path, m);
  }
}

/** A fresh run folder: `work/` with the task's files, `home/` with the harness's config, `tmp/`. */
export function prepareRunDirs(root: string, files: Record<string, string> | undefined, homeFiles: Record<string, string> | undefined): RunDirs {
  rmSync(root, { recursive: true, force: true });
  const dirs = { root, work: join(root, 'work'), home: join(root, 'home'), tmp: join(root, 'tmp') };
  for (const d of [dirs.work, dirs.home, dirs.tmp]) mkdirSync(d, { recursive: true });
  writeFiles(dirs.work, files);
  writeFiles(dirs.home, homeFiles);
  return dirs;
}

/**
 * A folder holding a `node` that runs this process's runtime. Under plain Node that is the folder of
 * process.execPath; inside Electron, process.execPath is the app, so a tiny `node` shim runs it with
 * ELECTRON_RUN_AS_NODE=1 (agents' `#!/usr/bin/env node` and the builtin agent then work in the desktop app).
 */
let shimDir: string | null = null;
export function nodeBinDir(): string {
  if (!process.versions.electron) return dirname(process.execPath);
  if (shimDir) return shimDir;
  const dir = join(tmpdir(), `rollgate-node-shim-${process.getuid?.() ?? 'u'}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'node'), `#!/bin/sh\nELECTRON_RUN_AS_NODE=1 exec ${JSON.stringify(process.execPath)} "$@"\n`);
  chmodSync(join(dir, 'node'), 0o755);
  shimDir = dir;
  return dir;
}

/** The environment every run starts from: no inherited secrets, node on PATH, a private HOME and TMPDIR. */
export function baseEnv(dirs: Pick<RunDirs, 'home' | 'tmp'>, extraPath: string[] = []): Record<string, string> {
  const path = [...extraPath, nodeBinDir(), process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin']
    .filter((p, i, all) => p && all.indexOf(p) === i).join(':');
  const env: Record<string, string> = {
    PATH: path, HOME: dirs.home, TMPDIR: dirs.tmp, TERM: 'dumb', CI: '1', NO_COLOR: '1', FORCE_COLOR: '0',
    LANG: process.env.LANG ?? 'C.UTF-8', NO_PROXY: '127.0.0.1,localhost,::1', no_proxy: '127.0.0.1,localhost,::1',
    XDG_CONFIG_HOME: join(dirs.home, '.config'), XDG_DATA_HOME: join(dirs.home, '.local', 'share'),
    XDG_CACHE_HOME: join(dirs.home, '.cache'), XDG_STATE_HOME: join(dirs.home, '.local', 'state'),
  };
  for (const k of ['TZ', 'LC_ALL', 'SHELL']) if (process.env[k]) env[k] = process.env[k]!;
  return env;
}
