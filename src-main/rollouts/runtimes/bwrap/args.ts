// The bubblewrap command line for one sandbox (pure: tested without running it). Read-only system
// (/usr, the few /etc files tools need and the /bin-style links of a merged-/usr system), the tools read-only at their host paths,
// the run's folders writable at fixed paths, no namespaces shared with the host (no network at all:
// only a loopback of its own), every capability dropped, and resource limits applied by `prlimit`
// before anything of the agent runs. `--die-with-parent` + the PID namespace: when bwrap is killed,
// every process inside goes with it, daemons included.
import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import type { SandboxLimits } from '../types.js';

export interface BwrapMount { host: string; sandbox: string; mode: 'ro' | 'rw' }

const SYSTEM_DIRS = ['/usr'];
const SYSTEM_LINKS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
/**
 * Only what the loader, name lookups, TLS, Python, git and the agent CLIs read from /etc: never all of it
 * (the agent is root in its sandbox and would read /etc/shadow, SSH host keys, /etc/ssl/private, npmrc tokens).
 */
export const ETC_ENTRIES = [
  'ld.so.cache', 'ld.so.conf', 'ld.so.conf.d', 'passwd', 'group', 'hosts', 'host.conf', 'nsswitch.conf', 'resolv.conf', 'gai.conf',
  'services', 'protocols', 'ssl/certs', 'ssl/openssl.cnf', 'ca-certificates', 'ca-certificates.conf', 'localtime', 'timezone',
  'alternatives', 'os-release', 'debian_version', 'mime.types', 'magic', 'inputrc', 'terminfo', 'gitconfig',
  'python3', 'python3.11', 'python3.12', 'python3.13',
].map((e) => `/etc/${e}`);

/** `--ro-bind`s and `--symlink`s for the host's system folders and /etc files (as they exist on this machine). */
export function systemArgs(exists = existsSync, lstat = lstatSync, readlink = readlinkSync): string[] {
  const args: string[] = [];
  for (const d of SYSTEM_DIRS) if (exists(d)) args.push('--ro-bind', d, d);
  for (const l of [...SYSTEM_LINKS, ...ETC_ENTRIES]) {
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
  // The root is bwrap's own tmpfs (it holds /etc's few files): read-only once every mount point exists.
  args.push('--remount-ro', '/');
  args.push('--chdir', opts.cwd, '--', ...limitArgs(opts.limits), ...opts.command);
  return args;
}
