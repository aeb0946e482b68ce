// One container run through the Docker Engine API (dockerode; DOCKER_HOST, so Podman's Docker-compatible
// socket works too), shaped like a host process run: bounded stdout/stderr capture, a timeout and
// cancellation that kill the container, so every process the agent started goes with it.
import { Writable } from 'node:stream';
import type Docker from 'dockerode';
import { BoundedCapture, DEFAULT_MAX_OUTPUT, type ProcessResult } from '../process.js';
import { DEFAULT_DOCKER_CPUS, type RunOptions, type SandboxLimits } from '../types.js';

export interface ContainerSpec {
  image: string;
  cmd: string[];
  env: Record<string, string>;
  workdir: string;
  /** `host:container[:ro]`. */
  binds: string[];
  limits: SandboxLimits;
  labels: Record<string, string>;
  /** Keep the stopped container (the caller snapshots and removes it). */
  keep?: boolean;
  /** The image's own filesystem is read-only (everything writable is a mount). */
  readonlyRootfs: boolean;
  /** No Linux capabilities at all (the agent's containers: as root it still owns root's files, nothing more). */
  dropCapabilities?: boolean;
}

const sink = (capture: BoundedCapture) => new Writable({ write(chunk: Buffer, _enc, cb) { capture.push(chunk); cb(); } });

export async function runContainer(docker: Docker, spec: ContainerSpec, opts: RunOptions): Promise<ProcessResult & { container: Docker.Container | null }> {
  const started = Date.now();
  const out = new BoundedCapture(opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT);
  const err = new BoundedCapture(opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT);
  const result = (fields: Partial<ProcessResult>, container: Docker.Container | null = null) => ({
    pid: null, exitCode: null, signal: null, timedOut: false, cancelled: false, spawnError: null,
    stdout: out.text(), stderr: err.text(), stdoutTail: out.lastText(), durationMs: Date.now() - started, ...fields, container,
  });
  if (opts.signal?.aborted) return result({ cancelled: true });
  const mb = 1024 * 1024;
  let container: Docker.Container;
  try {
    container = await docker.createContainer({
      Image: spec.image, Cmd: spec.cmd, WorkingDir: spec.workdir, Labels: spec.labels,
      Env: Object.entries(spec.env).map(([k, v]) => `${k}=${v}`),
      User: `${process.getuid?.() ?? 0}:${process.getgid?.() ?? 0}`,
      NetworkDisabled: true, AttachStdout: true, AttachStderr: true, Tty: false, OpenStdin: false,
      HostConfig: {
        NetworkMode: 'none', Binds: spec.binds,
        Memory: spec.limits.memoryMb * mb, MemorySwap: spec.limits.memoryMb * mb, PidsLimit: spec.limits.processes,
        NanoCpus: Math.round((spec.limits.cpus ?? DEFAULT_DOCKER_CPUS) * 1e9),
        Ulimits: [{ Name: 'fsize', Soft: spec.limits.fileSizeMb * mb, Hard: spec.limits.fileSizeMb * mb }, { Name: 'core', Soft: 0, Hard: 0 }],
        SecurityOpt: ['no-new-privileges'], ReadonlyRootfs: spec.readonlyRootfs, ...(spec.dropCapabilities ? { CapDrop: ['ALL'] } : {}),
      },
    });
  } catch (e) {
    return result({ spawnError: `container could not be created: ${(e as Error).message}` });
  }
  let timedOut = false;
  let cancelled = false;
  const kill = () => { container.kill().catch(() => undefined); };
  const onAbort = () => { cancelled = true; kill(); };
  let timer: NodeJS.Timeout | null = null;
  try {
    const stream = await container.attach({ stream: true, stdout: true, stderr: true });
    const drained = new Promise<void>((resolve) => { stream.on('end', resolve); stream.on('close', resolve); stream.on('error', () => resolve()); });
    container.modem.demuxStream(stream, sink(out), sink(err));
    try {
      await container.start();
    } catch (e) {
      return result({ spawnError: `container could not start: ${(e as Error).message}` }, container);
    }
    opts.onStart?.({ pid: null, containerId: container.id });
    timer = setTimeout(() => { timedOut = true; kill(); }, opts.timeoutMs);
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    if (opts.signal?.aborted) onAbort();
    const waited = await container.wait() as { StatusCode: number };
    await Promise.race([drained, new Promise((r) => setTimeout(r, 2000))]);
    const code = waited.StatusCode;
    const killed = timedOut || cancelled;
    return result({ exitCode: killed ? null : code, signal: killed ? 'SIGKILL' : null, timedOut, cancelled }, container);
  } catch (e) {
    return result({ spawnError: (e as Error).message, timedOut, cancelled }, container);
  } finally {
    if (timer) clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
    if (!spec.keep) await container.remove({ force: true }).catch(() => undefined);
  }
}
