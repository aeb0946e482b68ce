// Rollgate's default container image, built on this machine without any registry: a root filesystem of a
// shell, coreutils-style tools and the shared libraries the host's Node needs (Node itself and the agents
// are mounted read-only at run time), packed with `tar` and loaded with `docker import`. Debian 12 and
// later merge /usr, so /bin, /lib and /lib64 are links into /usr here too.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, createReadStream, existsSync, lstatSync, mkdirSync, mkdtempSync, readlinkSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type Docker from 'dockerode';
import { nodeExecutable } from '../run-dirs.js';

const TOOLS = [
  'sh', 'bash', 'cat', 'ls', 'echo', 'mkdir', 'rmdir', 'rm', 'cp', 'mv', 'ln', 'sed', 'grep', 'awk', 'env', 'head', 'tail', 'wc',
  'sleep', 'test', 'true', 'false', 'chmod', 'touch', 'find', 'sort', 'uniq', 'tr', 'cut', 'xargs', 'dirname', 'basename', 'pwd',
  'id', 'printf', 'diff', 'cmp', 'tee', 'date', 'readlink', 'realpath', 'stat', 'mktemp', 'kill', 'which', 'expr', 'seq', 'du', 'od',
];

export const BASE_IMAGE_REPO = 'rollgate-base';

function which(name: string): string | null {
  for (const dir of ['/usr/local/bin', '/usr/bin', '/bin']) if (existsSync(join(dir, name))) return join(dir, name);
  return null;
}

/** Shared libraries an ELF file loads (ldd), the loader included. */
function libsOf(file: string): string[] {
  const r = spawnSync('ldd', [file], { encoding: 'utf8' });
  if (r.status !== 0) return [];
  return [...r.stdout.matchAll(/(\/\S+)/g)].map((m) => m[1]).filter((p) => existsSync(p));
}

/** The files of the image: tools, their libraries and Node's. */
export function baseImageFiles(): string[] {
  const bins = TOOLS.map(which).filter((p): p is string => !!p);
  const files = new Set<string>(bins);
  for (const f of [...bins, nodeExecutable()]) for (const lib of libsOf(realpathSync(f))) files.add(lib);
  return [...files].sort();
}

export function baseImageTag(files: string[]): string {
  return `${BASE_IMAGE_REPO}:${createHash('sha256').update(files.join('\n')).digest('hex').slice(0, 12)}`;
}

/** Copies `path` (its content, links followed) to where it lives under `root`, keeping the name it was asked by. */
function place(root: string, path: string): void {
  const target = join(root, realpathSync(dirname(path)), basename(path));
  mkdirSync(dirname(target), { recursive: true });
  if (!existsSync(target)) copyFileSync(realpathSync(path), target);
}

export function buildRootfs(root: string, files: string[]): void {
  for (const l of ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32']) {
    const host = `/${l}`;
    if (existsSync(host) && lstatSync(host).isSymbolicLink()) symlinkSync(readlinkSync(host), join(root, l));
  }
  for (const f of files) place(root, f);
  for (const d of ['tmp', 'work', 'home/agent', 'run/rollgate', 'proc', 'dev', 'sys', 'etc']) mkdirSync(join(root, d), { recursive: true });
  writeFileSync(join(root, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/sh\nagent:x:1000:1000:agent:/home/agent:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n');
  writeFileSync(join(root, 'etc/group'), 'root:x:0:\nagent:x:1000:\nnogroup:x:65534:\n');
  writeFileSync(join(root, 'etc/hosts'), '127.0.0.1 localhost\n::1 localhost\n');
}

let building: Promise<string> | null = null;

/** The base image's tag, importing it first when this daemon does not have it. */
export function ensureBaseImage(docker: Docker): Promise<string> {
  building ??= (async () => {
    const files = baseImageFiles();
    const tag = baseImageTag(files);
    try {
      await docker.getImage(tag).inspect();
      return tag;
    } catch { /* not there yet */ }
    const dir = mkdtempSync(join(tmpdir(), 'rollgate-base-'));
    try {
      const root = join(dir, 'rootfs');
      mkdirSync(root);
      buildRootfs(root, files);
      const tar = join(dir, 'rootfs.tar');
      const r = spawnSync('tar', ['-C', root, '--numeric-owner', '--owner=0', '--group=0', '-cf', tar, '.'], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`tar failed: ${r.stderr || r.error?.message}`);
      const [repo, version] = tag.split(':');
      const stream = await docker.importImage(createReadStream(tar), { repo, tag: version });
      await new Promise<void>((resolve, reject) => docker.modem.followProgress(stream, (err) => (err ? reject(err) : resolve())));
      return tag;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  })().catch((err: Error) => {
    building = null;
    throw new Error(`could not build the docker base image: ${err.message}`);
  });
  return building;
}
