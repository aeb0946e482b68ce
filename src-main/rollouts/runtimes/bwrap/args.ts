// The bubblewrap command line for one sandbox (pure: tested without running it). Read-only system
// (/usr, /etc and the /bin-style links of a merged-/usr system), the tools read-only at their host paths,
// the run's folders writable at fixed paths, no namespaces shared with the host (no network at all:
// only a loopback of its own), every capability dropped, and resource limits applied by `prlimit`
// before anything of the agent runs. `--die-with-parent` + the PID namespace: when bwrap is killed,
// every process inside goes with it, daemons included.
import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import type { SandboxLimits } from '../types.js';

export interface BwrapMount { host: string; sandbox: string; mode: 'ro' | 'rw' }

const SYSTEM_DIRS = ['/usr', '/etc'];
const SYSTEM_LINKS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/** `--ro-bind`s and `--symlink`s for the host's system folders (as they exist on this machine). */
export function systemArgs(exists = existsSync, lstat = lstatSync, readlink = readlinkSync): string[] {
  const args: string[] = [];
  for (const d of SYSTEM_DIRS) if (exists(d)) args.push('--ro-bind', d, d);
  for (const l of SYSTEM_LINKS) {
    if (!exists(l)) continue;
    if (lstat(l).isSymbolicLink()) args.push('--symlink', readlink(l) as string, l);
    else args.push('--ro-bind', l, l);
  }
  return args;
}

export function limitArgs(l: SandboxLimits): string[] {
  const mb = 1024 * 1024;
  return ['prlimit', `--nproc=${l.processes}`, `--data=${l.memoryMb * mb}`, `--fsize=${l.fileSizeMb * mb}`, `--cpu=${l.cpuSeconds}`, `--core=0`, '--'];
}

export function bwrapArgs(opts: { mounts: BwrapMount[]; cwd: string; limits: SandboxLimits; command: string[]; system?: string[] }): string[] {
  const args = [
    '--unshare-all', '--die-with-parent', '--new-session', '--cap-drop', 'ALL',
    ...(opts.system ?? systemArgs()),
    '--proc', '/proc', '--dev', '/dev', '--tmpfs', '/run', '--tmpfs', '/tmp',
  ];
  for (const m of opts.mounts) args.push(m.mode === 'ro' ? '--ro-bind' : '--bind', m.host, m.sandbox);
  args.push('--chdir', opts.cwd, '--', ...limitArgs(opts.limits), ...opts.command);
  return args;
}
