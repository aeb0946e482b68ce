// The content hash of a build context (a Harbor task's environment/ folder): what the image cache is keyed
// by. Two folders with the same files (paths, contents, executable bits, symlink targets) hash the same,
// wherever they live and whatever their timestamps; any change to any of those gives a new hash.
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/** Files in `dir`, recursively, as sorted POSIX relative paths (also the build context sent to the daemon). */
export function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(relative(dir, p).split(sep).join('/'));
    }
  };
  walk(dir);
  return out.sort();
}

/** sha256 (hex) over every entry's path, kind, executable bit and content. */
export function contextHash(dir: string): string {
  const h = createHash('sha256');
  for (const rel of listFiles(dir)) {
    const abs = join(dir, ...rel.split('/'));
    const st = lstatSync(abs);
    // NUL-separated records: a path can hold no NUL, so no two different trees give the same stream.
    if (st.isSymbolicLink()) h.update(`L\0${rel}\0${readlinkSync(abs)}\0`);
    else if (st.isFile()) {
      const data = readFileSync(abs);
      h.update(`F\0${rel}\0${st.mode & 0o111 ? 'x' : '-'}\0${data.length}\0`);
      h.update(data);
    }
  }
  return h.digest('hex');
}
