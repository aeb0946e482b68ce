// The image each container task of a batch starts from: built (Harbor environment/) or found/pulled
// (a named image), once per task per batch however many samples it has; the builder's own cache makes a
// later batch build nothing. A task whose image cannot be had fails alone, with the daemon's reason.
import type { ContainerSpec } from '../tasks.js';
import type { ImageBuilder, ImageProgress } from './builder.js';

export interface TaskImage {
  image: string;
  /** Where the agent works: the task's `workdir`, else the image's WORKDIR, else `/`. */
  workdir: string;
  /** Whether this batch had to build or pull it. */
  cached: boolean;
  durationMs: number;
}

export class TaskImages {
  private readonly byTask = new Map<string, Promise<TaskImage>>();

  constructor(
    private readonly builder: ImageBuilder,
    private readonly signal: AbortSignal,
    private readonly onProgress: (taskId: string, p: ImageProgress) => void = () => undefined,
  ) {}

  forTask(taskId: string, container: ContainerSpec): Promise<TaskImage> {
    let p = this.byTask.get(taskId);
    if (!p) {
      p = this.resolve(taskId, container);
      this.byTask.set(taskId, p);
    }
    return p;
  }

  private async resolve(taskId: string, c: ContainerSpec): Promise<TaskImage> {
    const opts = {
      signal: this.signal, onProgress: (p: ImageProgress) => this.onProgress(taskId, p),
      ...(c.buildTimeoutMs ? { timeoutMs: c.buildTimeoutMs } : {}), ...(c.buildNetwork ? { network: c.buildNetwork } : {}),
    };
    const r = c.buildContext ? await this.builder.ensureBuilt(c.buildContext, opts)
      : c.image ? await this.builder.ensurePresent(c.image, opts)
      : null;
    if (!r) throw new Error(`task ${taskId} names no image and no environment to build`);
    return { image: r.image, workdir: c.workdir || r.workdir || '/', cached: r.cached, durationMs: r.durationMs };
  }
}
