// Before any check runs, the agent's work folder may hold no symlink that leads out of it: a link like
// `answer.txt -> <tests>/expected.txt` would make the check grade the expected answer against itself.
// Every runtime calls this on the host copy of the work folder (docker's snapshot checks have no host copy;
// there the tests' unguessable mount path is the defence).
import { lstatSync, readdirSync, readlinkSync, realpathSync, rmSync } from 'node:fs';
import { isAbsolute, join, posix, relative, resolve } from 'node:path';

function inside(base: string, path: string): boolean {
  const rel = relative(base, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * Whether `link` (on the host, under `hostWork`) stays inside the work folder as the run sees it
 * (`sandboxWork`): an absolute target must name the run's own work path; a relative one must stay inside
 * lexically and, followed through the other links on the host, still land inside.
 */
function staysInside(link: string, hostWork: string, sandboxWork: string): boolean {
  const target = readlinkSync(link);
  if (isAbsolute(target)) return inside(sandboxWork, posix.normalize(target));
  const lexical = resolve(link, '..', target);
  if (!inside(hostWork, lexical)) return false;
  try {
    return inside(realpathSync.native(hostWork), realpathSync.native(link)); // native: the kernel follows `link/..` as it will
  } catch {
    return true; // dangling: it leads nowhere
  }
}

/** Removes every symlink under `hostWork` that leads outside it; returns their paths relative to it. */
export function removeEscapingLinks(hostWork: string, sandboxWork = hostWork): string[] {
  const removed: string[] = [];
  let root: string;
  try {
    if (!lstatSync(hostWork).isDirectory()) return removed;
    root = resolve(hostWork);
  } catch {
    return removed;
  }
  const stack = [root];
  while (stack.length) {
    const dir = stack.pop()!;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isSymbolicLink()) {
        if (!staysInside(path, root, sandboxWork)) {
          rmSync(path, { force: true });
          removed.push(relative(root, path));
        }
      } else if (e.isDirectory()) stack.push(path);
    }
  }
  return removed;
}
