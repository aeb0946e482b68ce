// A base image made from this machine's own files, so container tests need no registry: the shell tools
// of a few Debian packages (and git, for SWE-bench-style rows) plus the shared libraries they load, laid
// out as Debian 12 does (merged /usr), imported with `docker import` through the Engine API. It is tagged
// as the image the shipped example tasks start FROM (debian:bookworm-slim) only when no such image is
// already there, so a real one pulled from a registry is never replaced.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, openSync, readSync, closeSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import Docker from 'dockerode';

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
      throw new Error(`the test base image needs the Debian package "${pkg}" on this machine (apt-get install ${pkg})`);
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
    const stage = join(dir, 'stage');
    for (const d of ['usr/bin', 'usr/sbin', 'usr/lib', 'usr/lib64', 'etc', 'root', 'tmp', 'var/tmp', 'app']) mkdirSync(join(stage, d), { recursive: true });
    for (const l of ['bin', 'sbin', 'lib', 'lib64']) symlinkSync(`usr/${l}`, join(stage, l));
    chmodSync(join(stage, 'tmp'), 0o1777);
    chmodSync(join(stage, 'var/tmp'), 0o1777);
    writeFileSync(join(stage, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n');
    writeFileSync(join(stage, 'etc/group'), 'root:x:0:\nnogroup:x:65534:\n');
    if (existsSync('/usr/bin/mawk')) symlinkSync('mawk', join(stage, 'usr/bin/awk'));
    const tar = join(dir, 'rootfs.tar');
    const list = join(dir, 'files.txt');
    writeFileSync(list, hostFiles().map((f) => f.slice(1)).join('\n'));
    execFileSync('tar', ['-cf', tar, '-C', stage, '.']);
    execFileSync('tar', ['-rf', tar, '-C', '/', '--no-recursion', '-T', list]);
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
