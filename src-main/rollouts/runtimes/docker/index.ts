// `docker`: each run in a container through the Docker Engine API (dockerode honours DOCKER_HOST, so
// rootless Podman's Docker-compatible socket works too). No network (`none`), memory and pid limits, the
// run's folders mounted, the gateway socket mounted, Node and the agent mounted read-only at their host
// paths. The image comes from the task or the batch, else Rollgate's base image (base-image.ts), built
// locally without a registry. Checks run in a fresh container; with `workFromImage` (the image holds the
// work folder, e.g. Harbor) the agent's finished container is snapshotted; a check either reads that
// snapshot (taking the agent's diff) or starts from the task's image with only the work folder carried
// over (carry-work.ts), so nothing the agent planted elsewhere reaches the verifier.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import Docker from 'dockerode';
import { checkEnv } from '../check-env.js';
import { FORWARDER_PATH, IN, freshCheckDirs, prepareLayout, toolMounts } from '../layout.js';
import { SANDBOX_SYSTEM_PATH, nodeBinDir, nodeExecutable, writeFiles } from '../run-dirs.js';
import type { ProcessResult } from '../process.js';
import { DEFAULT_LIMITS, type Runtime, type Sandbox } from '../types.js';
import { ensureBaseImage } from './base-image.js';
import { CARRIED_TAR, exportWork, restoreWorkCommand } from './carry-work.js';
import { runContainer } from './container.js';

export { ensureBaseImage, BASE_IMAGE_REPO } from './base-image.js';
export { runContainer } from './container.js';

let client: Docker | null = null;
/** The Docker client (DOCKER_HOST, else the platform's default socket). */
export function dockerClient(): Docker {
  return (client ??= new Docker());
}

export async function dockerAvailable(): Promise<{ ok: true } | { ok: false; reason: string }> {
  const where = process.env.DOCKER_HOST ?? 'the default socket (/var/run/docker.sock)';
  try {
    await Promise.race([dockerClient().ping(), new Promise((_r, reject) => setTimeout(() => reject(new Error('no answer in 5 s')), 5000))]);
    return { ok: true };
  } catch (e) {
    return { ok: false, reason: `cannot reach Docker or Podman at ${where}: ${(e as Error).message} (start dockerd, or point DOCKER_HOST at Podman's socket)` };
  }
}

/**
 * Removes the containers of runs a previous Rollgate process left behind (a crash or kill -9 leaves
 * containers running: nothing ties them to the dead process). Containers are matched by their
 * `rollgate.run` label against the runs recorded as running; resolves to how many were removed.
 */
export async function removeRunContainers(runIds: string[]): Promise<number> {
  if (!runIds.length) return 0;
  const wanted = new Set(runIds);
  const docker = dockerClient();
  const listed = await Promise.race([
    docker.listContainers({ all: true, filters: { label: ['rollgate.run'] } }),
    new Promise<never>((_r, reject) => setTimeout(() => reject(new Error('Docker did not answer')), 5000)),
  ]);
  const ours = listed.filter((c) => wanted.has(c.Labels['rollgate.run']));
  await Promise.all(ours.map((c) => docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined)));
  return ours.length;
}

function failedCheck(spawnError: string): ProcessResult {
  return { pid: null, exitCode: null, signal: null, timedOut: false, cancelled: false, spawnError, stdout: '', stderr: '', stdoutTail: '', durationMs: 0 };
}

export const dockerRuntime: Runtime = {
  name: 'docker',
  available: dockerAvailable,
  async prepare(spec) {
    const docker = dockerClient();
    const image = spec.image ?? await ensureBaseImage(docker);
    const layout = await prepareLayout(spec);
    const { host, paths } = layout;
    const limits = { ...DEFAULT_LIMITS, ...spec.limits };
    const mapped = toolMounts(spec.tools);
    const tools = [...mapped.mounts, ...(spec.toolsAtHostPath ?? []).map((p) => ({ host: p, sandbox: p }))].map((m) => `${m.host}:${m.sandbox}:ro`);
    const labels = { 'rollgate.run': spec.id };
    // The agent writes only to its mounts, unless its work folder lives in the image (Harbor environments).
    const readonlyRootfs = !spec.workFromImage;
    let snapshot: string | null = null;
    const sandbox: Sandbox = {
      runtime: 'docker',
      paths,
      host,
      baseUrl: `http://127.0.0.1:${layout.port}`,
      toolPath: (p) => mapped.map(p),
      writeHome: (files) => writeFiles(host.home, files),
      async launch(plan, opts) {
        const binds = [
          ...(spec.workFromImage ? [] : [`${host.work}:${paths.work}`]),
          `${host.home}:${paths.home}`, `${host.tmp}:${paths.tmp}`, `${host.socketDir}:${IN.socketDir}`,
          `${FORWARDER_PATH}:${IN.forwarder}:ro`, ...tools, ...(spec.mounts ?? []).map((m) => `${m.host}:${m.target}:ro`),
        ];
        const r = await runContainer(docker, {
          image, workdir: paths.work, binds, limits, labels, env: plan.env, keep: !!spec.workFromImage, readonlyRootfs, dropCapabilities: true,
          cmd: [mapped.map(nodeExecutable()), IN.forwarder, String(layout.port), IN.socket, '--', mapped.map(plan.file), ...plan.args.map(mapped.map)],
        }, opts);
        if (spec.workFromImage && r.container) {
          // Checks see the agent's filesystem through a snapshot; the container itself (and its processes) go now.
          try {
            const committed = await r.container.commit({ repo: 'rollgate-run', tag: spec.id.toLowerCase().replace(/[^a-z0-9_.-]/g, '-') }) as { Id: string };
            snapshot = committed.Id;
          } finally {
            await r.container.remove({ force: true }).catch(() => undefined);
          }
        }
        const { container: _c, ...result } = r;
        return result;
      },
      async check(check, opts) {
        const fresh = freshCheckDirs(host.root, check.agentOutput, spec.workFromImage ? undefined : { host: host.work, sandbox: paths.work });
        const carry = spec.workFromImage && check.carryWork ? check.carryWork : null;
        let command = check.command;
        const carried: string[] = [];
        if (carry) {
          if (!snapshot) return failedCheck('the agent\'s container left no snapshot to carry its work folder from');
          const tar = join(host.root, 'carried-work.tar');
          try {
            command = `${restoreWorkCommand(carry)}\n${command}`;
            await exportWork(docker, snapshot, carry, tar);
          } catch (e) {
            return failedCheck(`could not take the agent's work folder ${carry}: ${(e as Error).message}`);
          }
          carried.push(`${tar}:${CARRIED_TAR}:ro`);
        }
        const binds = [
          ...(spec.workFromImage ? [] : [`${host.work}:${paths.work}`]),
          `${fresh.home}:${paths.home}`, `${fresh.tmp}:${paths.tmp}`, `${fresh.output}:${IN.agentOutput}:ro`,
          ...(check.checkFiles ? [`${check.checkFiles}:${fresh.tests}:ro`] : []),
          ...(check.outputDir ? [`${check.outputDir.host}:${check.outputDir.sandbox}`] : []),
          ...carried, ...tools,
        ];
        const env = checkEnv({ home: paths.home, tmp: paths.tmp, output: IN.agentOutput, tests: check.checkFiles ? fresh.tests : undefined }, check.env, SANDBOX_SYSTEM_PATH, mapped.map(nodeBinDir()));
        const { container: _c, ...result } = await runContainer(docker, {
          image: check.fromImage || carry ? image : snapshot ?? image, workdir: paths.work, binds, limits, labels, env, cmd: ['/bin/sh', '-c', command], readonlyRootfs,
        }, opts);
        return result;
      },
      async dispose(keep) {
        await layout.closeGateway();
        if (snapshot) await docker.getImage(snapshot).remove({ force: true }).catch(() => undefined);
        if (!keep) rmSync(host.root, { recursive: true, force: true, maxRetries: 2 });
      },
    };
    return sandbox;
  },
};
