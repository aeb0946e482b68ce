// Task images (DESIGN §7): a Harbor task's environment/ is built once through the Docker Engine API
// (`POST /build` via dockerode, so DOCKER_HOST and Podman's Docker-compatible socket work) and tagged
// `rollgate-env:<hash of its files and of the ids of its FROM images>`. The tag is the cache: a later batch, or another task with the same
// environment, finds the image and builds nothing. A prebuilt image named by a task (`image` in a JSONL
// row, `docker_image` in task.toml) is used when present locally, else pulled.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Docker from 'dockerode';
import { contextHash, listFiles } from './context-hash.js';

export const ENV_IMAGE_REPO = 'rollgate-env';
const LOG_TAIL_LINES = 30;

export interface ImageProgress {
  /** `build` while building, `pull` while pulling, `cached` when nothing had to be done. */
  phase: 'build' | 'pull' | 'cached';
  image: string;
  /** One line of the build/pull log. */
  message?: string;
}

export interface ImageResult {
  image: string;
  /** The image's WORKDIR ('' when it sets none). */
  workdir: string;
  /** True when the image was already there (nothing built or pulled). */
  cached: boolean;
  durationMs: number;
}

export interface ImageOptions {
  signal?: AbortSignal;
  /** Build time limit (Harbor `build_timeout_sec`). Default 10 minutes. */
  timeoutMs?: number;
  /** `none`: RUN steps get no network (a task that declares no internet needs none to build either). */
  network?: 'none' | 'default';
  onProgress?: (p: ImageProgress) => void;
}

/** A build or pull that failed; `log` holds the end of the daemon's output. */
export class ImageError extends Error {
  constructor(message: string, readonly log: string = '') {
    super(log ? `${message}\n${log}` : message);
    this.name = 'ImageError';
  }
}

/** The images a Dockerfile starts FROM (build stages it names itself left out). */
export function fromImages(dockerfile: string): string[] {
  const stages = new Set<string>();
  const out: string[] = [];
  for (const m of dockerfile.matchAll(/^\s*FROM\s+(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?/gim)) {
    if (!stages.has(m[1].toLowerCase()) && m[1] !== 'scratch') out.push(m[1]);
    if (m[2]) stages.add(m[2].toLowerCase());
  }
  return out;
}

/**
 * The tag a build context gets: its files plus the ids of the images it starts FROM, so the same
 * environment on a changed base image (re-imported, pulled anew) is built again rather than reused.
 */
export function envImageTag(contextDir: string, baseIds: string[] = []): string {
  const h = createHash('sha256').update(contextHash(contextDir)).update(`\0${baseIds.join('\0')}`).digest('hex');
  return `${ENV_IMAGE_REPO}:${h.slice(0, 32)}`;
}

interface StreamEvent { stream?: string; status?: string; progress?: string; error?: string; errorDetail?: { message?: string } }

export class ImageBuilder {
  /** Builds and pulls under way, by image: concurrent samples of one task wait for the same one. */
  private readonly pending = new Map<string, Promise<ImageResult>>();
  /** What this builder did (the build-cache measurement reads these). */
  readonly stats = { built: 0, pulled: 0, cached: 0 };

  constructor(readonly docker: Docker = new Docker()) {}

  /** The local ids of the images `contextDir`'s Dockerfile starts FROM (`name@absent` for one not pulled yet). */
  async baseIds(contextDir: string): Promise<string[]> {
    const names = fromImages(readFileSync(join(contextDir, 'Dockerfile'), 'utf8'));
    return Promise.all(names.map(async (n) => {
      try {
        return (await this.docker.getImage(n).inspect()).Id;
      } catch {
        return `${n}@absent`;
      }
    }));
  }

  /** The tag `contextDir` builds to now (see envImageTag). */
  async tagFor(contextDir: string): Promise<string> {
    return envImageTag(contextDir, await this.baseIds(contextDir));
  }

  /** The image's WORKDIR when it exists on the daemon, else null. */
  async workdirOf(image: string): Promise<string | null> {
    try {
      return (await this.docker.getImage(image).inspect()).Config?.WorkingDir ?? '';
    } catch (e) {
      if ((e as { statusCode?: number }).statusCode === 404) return null;
      throw new ImageError(`cannot reach the Docker daemon (${process.env.DOCKER_HOST ?? 'default socket'}): ${(e as Error).message}`);
    }
  }

  /** Builds `contextDir` (a folder holding a Dockerfile) unless an image of the same content exists. */
  ensureBuilt(contextDir: string, opts: ImageOptions = {}): Promise<ImageResult> {
    if (!existsSync(join(contextDir, 'Dockerfile'))) return Promise.reject(new ImageError(`no Dockerfile in ${contextDir}`));
    return this.once(`build:${contextDir}`, async () => {
      const tag = await this.tagFor(contextDir);
      const started = Date.now();
      const have = await this.workdirOf(tag);
      if (have !== null) {
        this.stats.cached++;
        opts.onProgress?.({ phase: 'cached', image: tag });
        return { image: tag, workdir: have, cached: true, durationMs: Date.now() - started };
      }
      const timeout = AbortSignal.timeout(opts.timeoutMs ?? 600_000);
      const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
      let stream: NodeJS.ReadableStream;
      try {
        stream = await this.docker.buildImage({ context: contextDir, src: listFiles(contextDir) }, {
          t: tag, forcerm: true, labels: { 'io.rollgate.context': contextDir }, abortSignal: signal,
          ...(opts.network === 'none' ? { networkmode: 'none' } : {}),
        });
      } catch (e) {
        throw new ImageError(`docker build could not start: ${(e as Error).message}`);
      }
      await this.follow(stream, tag, 'build', signal, opts, timeout, opts.timeoutMs ?? 600_000);
      const workdir = await this.workdirOf(tag);
      if (workdir === null) throw new ImageError(`docker build finished without producing ${tag}`);
      this.stats.built++;
      return { image: tag, workdir, cached: false, durationMs: Date.now() - started };
    });
  }

  /** A prebuilt image: used when present locally, else pulled from its registry. */
  ensurePresent(image: string, opts: ImageOptions = {}): Promise<ImageResult> {
    return this.once(image, async () => {
      const started = Date.now();
      const have = await this.workdirOf(image);
      if (have !== null) {
        this.stats.cached++;
        opts.onProgress?.({ phase: 'cached', image });
        return { image, workdir: have, cached: true, durationMs: Date.now() - started };
      }
      const timeout = AbortSignal.timeout(opts.timeoutMs ?? 1_800_000);
      const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
      let stream: NodeJS.ReadableStream;
      try {
        stream = await this.docker.pull(image, { abortSignal: signal });
      } catch (e) {
        throw new ImageError(`image ${image} is not on this machine and could not be pulled: ${(e as Error).message}`);
      }
      await this.follow(stream, image, 'pull', signal, opts, timeout, opts.timeoutMs ?? 1_800_000);
      const workdir = await this.workdirOf(image);
      if (workdir === null) throw new ImageError(`pulling ${image} finished without the image`);
      this.stats.pulled++;
      return { image, workdir, cached: false, durationMs: Date.now() - started };
    });
  }

  private once(key: string, work: () => Promise<ImageResult>): Promise<ImageResult> {
    const running = this.pending.get(key);
    if (running) return running;
    const p = work().finally(() => this.pending.delete(key));
    this.pending.set(key, p);
    return p;
  }

  /** Reads the daemon's JSON progress stream to its end; rejects with the log's tail on an error event. */
  private follow(stream: NodeJS.ReadableStream, image: string, phase: 'build' | 'pull', signal: AbortSignal, opts: ImageOptions, timeout: AbortSignal, timeoutMs: number): Promise<void> {
    const tail: string[] = [];
    let failure: string | null = null;
    const what = phase === 'build' ? 'docker build' : `pulling ${image}`;
    return new Promise<void>((resolveDone, reject) => {
      const onAbort = () => {
        (stream as unknown as { destroy?: () => void }).destroy?.();
        reject(new ImageError(timeout.aborted ? `${what} timed out after ${Math.round(timeoutMs / 1000)} s` : `${what} cancelled`, tail.join('\n')));
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      this.docker.modem.followProgress(stream, (err: Error | null) => {
        signal.removeEventListener('abort', onAbort);
        if (signal.aborted) return;
        // The daemon reports a failed step as an `error` event in an otherwise normal stream.
        if (err || failure) reject(new ImageError(`${what} failed: ${failure ?? err!.message}`, tail.join('\n')));
        else resolveDone();
      }, (ev: StreamEvent) => {
        if (ev.error) failure ??= (ev.errorDetail?.message ?? ev.error).trim();
        // The daemon colours a step's stderr; the log is kept as plain text.
        const line = (ev.stream ?? [ev.status, ev.progress].filter(Boolean).join(' ')).replace(/\x1b\[[0-9;]*m/g, '').trimEnd();
        if (line) {
          for (const l of line.split('\n')) tail.push(l);
          tail.splice(0, Math.max(0, tail.length - LOG_TAIL_LINES));
          opts.onProgress?.({ phase, image, message: line.split('\n').pop() });
        }
      });
    });
  }
}
