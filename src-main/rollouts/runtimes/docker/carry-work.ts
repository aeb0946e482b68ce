// A Harbor verifier starts from the task's own image, never from the agent's container: only the work
// folder is carried over, as a tar the Docker daemon takes from the snapshot (no agent code makes it).
// So a replaced /bin/bash, a planted sitecustomize.py or .pth file, anything the agent changed outside
// its work folder, is simply not there when the verifier runs (DESIGN §7, issue 18.3).
import { createWriteStream } from 'node:fs';
import { posix } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type Docker from 'dockerode';

/** Where the carried tar is mounted in the verifier's container. */
export const CARRIED_TAR = '/run/rollgate/work.tar';

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** `workdir` without a trailing slash. */
export const workFolder = (workdir: string) => posix.normalize(workdir).replace(/(.)\/+$/, '$1');

/** Writes `workdir` of the snapshot image as a tar to `hostFile` (top entry: the folder's own name). */
export async function exportWork(docker: Docker, snapshot: string, workdir: string, hostFile: string): Promise<void> {
  const reader = await docker.createContainer({ Image: snapshot, Cmd: ['/bin/true'], NetworkDisabled: true, HostConfig: { NetworkMode: 'none' } });
  try {
    const stream = await reader.getArchive({ path: workFolder(workdir) });
    await pipeline(stream, createWriteStream(hostFile));
  } finally {
    await reader.remove({ force: true }).catch(() => undefined);
  }
}

/**
 * Shell lines that replace the image's `workdir` with the carried one before the check runs (the
 * image's own tar extracts it; exit 89 if it cannot). Files the agent deleted stay deleted.
 */
export function restoreWorkCommand(workdir: string): string {
  const dir = workFolder(workdir);
  if (dir === '/' || !posix.isAbsolute(dir)) throw new Error(`cannot carry the work folder ${workdir} into a fresh container: it must be an absolute folder other than /`);
  return [
    `rm -rf ${quote(dir)} && mkdir -p ${quote(posix.dirname(dir))} && tar -C ${quote(posix.dirname(dir))} -xf ${CARRIED_TAR}`,
    ` || { echo "could not restore the agent's work folder ${dir.replace(/["$`\\]/g, '')} in the verifier's container" >&2; exit 89; }`,
  ].join('');
}
