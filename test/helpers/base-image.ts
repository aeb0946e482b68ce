// A base image made from this machine's own files, so container tests need no registry: the programs of a
// few Debian packages (and git, for SWE-bench-style rows) plus the shared libraries they load, laid out by
// the docker runtime's own rootfs builder (merged /usr as on Debian 12), imported with `docker import`. It is tagged
// as the image the shipped example tasks start FROM (debian:bookworm-slim) only when no such image is
// already there, so a real one pulled from a registry is never replaced.
import { execFileSync } from 'node:child_process';
import { chmodSync, closeSync, existsSync, lstatSync, mkdirSync, mkdtempSync, openSync, readSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import Docker from 'dockerode';
import { buildRootfs } from '../../src-main/rollouts/runtimes/docker/base-image.js';

export const BASE_IMAGE = 'debian:bookworm-slim';
// All of libc6, libstdc++6 and libgcc-s1 are in the real bookworm-slim too (apt needs them); a mounted Node needs them.
const PACKAGES = ['dash', 'bash', 'coreutils', 'grep', 'sed', 'diffutils', 'findutils', 'mawk', 'tar', 'gzip', 'patch', 'git', 'libc6', 'libstdc++6', 'libgcc-s1'];
const KEEP = /^\/usr\/(bin|sbin|lib|lib64|libexec)\/|^\/usr\/share\/git-core\//;

/** A host path with its directories resolved (/bin/sh → /usr/bin/sh on merged /usr), or null when absent. */
function canonical(path: string): string | null {
  try {
    return join(realpathSync(dirname(path)), path.slice(path.lastIndexOf('/') + 1));
  } catch {
    return null;
  }
}

function isElf(path: string): boolean {
  const fd = openSync(path, 'r');
  try {
    const b = Buffer.alloc(4);
    readSync(fd, b, 0, 4, 0);
    return b.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]));
  } finally {
    closeSync(fd);
  }
}

/** Every file to copy from the host: the packages' programs and the libraries they need. */
function hostFiles(): string[] {
  const files = new Set<string>();
  const add = (p: string) => {
    const c = canonical(p);
    if (!c || !KEEP.test(c)) return;
    let st;
    try { st = lstatSync(c); } catch { return; }
    if (st.isDirectory()) return;
    files.add(c);
    if (st.isSymbolicLink()) add(realpathSync(c));
  };
  for (const pkg of PACKAGES) {
    let list: string;
    try {
      list = execFileSync('dpkg', ['-L', pkg], { encoding: 'utf8' });
    } catch {
      if (process.getuid?.() !== 0) throw new Error(`the test base image needs the Debian package "${pkg}" on this machine (apt-get install ${pkg})`);
      execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', pkg], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
      list = execFileSync('dpkg', ['-L', pkg], { encoding: 'utf8' });
    }
    for (const line of list.split('\n')) if (line.startsWith('/')) add(line.trim());
  }
  for (const f of [...files]) {
    if (!lstatSync(f).isFile() || !isElf(f)) continue;
    let out = '';
    try { out = execFileSync('ldd', [f], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }); } catch { continue; }
    for (const m of out.matchAll(/(\/[^\s)]+)/g)) add(m[1]);
  }
  return [...files].sort();
}

async function follow(docker: Docker, stream: NodeJS.ReadableStream): Promise<void> {
  await new Promise<void>((res, rej) => docker.modem.followProgress(stream, (err: Error | null) => (err ? rej(err) : res())));
}

/** Makes sure BASE_IMAGE exists on the daemon; imports the host-made one when it does not. */
export async function ensureBaseImage(docker: Docker = new Docker()): Promise<string> {
  try {
    await docker.getImage(BASE_IMAGE).inspect();
    return BASE_IMAGE;
  } catch (e) {
    if ((e as { statusCode?: number }).statusCode !== 404) throw e;
  }
  const dir = mkdtempSync(join(tmpdir(), 'rollgate-rootfs-'));
  try {
    const root = join(dir, 'rootfs');
    mkdirSync(root);
    buildRootfs(root, hostFiles());
    for (const d of ['root', 'var/tmp', 'app']) mkdirSync(join(root, d), { recursive: true });
    chmodSync(join(root, 'tmp'), 0o1777);
    if (existsSync('/usr/bin/mawk')) symlinkSync('mawk', join(root, 'usr/bin/awk'));
    const tar = join(dir, 'rootfs.tar');
    execFileSync('tar', ['-C', root, '--numeric-owner', '--owner=0', '--group=0', '-cf', tar, '.']);
    const [repo, tag] = BASE_IMAGE.split(':');
    await follow(docker, await docker.importImage(tar, {
      repo, tag,
      changes: ['ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'CMD ["bash"]'],
    } as object));
    return BASE_IMAGE;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
