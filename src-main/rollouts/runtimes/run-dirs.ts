// Run folders and the environment a run starts from (every runtime).
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';

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

/** The PATH of a sandbox's own system (the host's PATH names folders a sandbox may not have). */
export const SANDBOX_SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The Node executable runs use (inside the desktop app: the shim above). */
export function nodeExecutable(): string {
  return join(nodeBinDir(), 'node');
}

/**
 * The environment every run starts from: no inherited secrets, node on PATH, a private HOME and TMPDIR.
 * `dirs` are the paths as the run sees them; `systemPath` is the host's PATH for local runs.
 */
export function baseEnv(
  dirs: Pick<RunDirs, 'home' | 'tmp'>, extraPath: string[] = [], systemPath = process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin', nodeDir = nodeBinDir(),
): Record<string, string> {
  const path = [...extraPath, nodeDir, systemPath]
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
