// Weight-sync pause (DESIGN §4): queue holds new engine calls until resume, reject and abort refuse them.
import { EngineError } from './types.js';

export type PauseMode = 'queue' | 'reject' | 'abort';

/** New calls refused while paused; the gateway answers 429 with Retry-After in the agent's dialect. */
export class EnginePausedError extends EngineError {
  constructor(readonly retryAfterSec = 5) {
    super('Engines are paused for a weight update; retry shortly.', 429);
    this.name = 'EnginePausedError';
  }
}

export class PauseGate {
  private current: PauseMode | null = null;
  private waiters = new Set<{ resolve(): void; reject(err: unknown): void }>();
  pausedAt: number | null = null;

  get mode(): PauseMode | null { return this.current; }
  get queued(): number { return this.waiters.size; }

  pause(mode: PauseMode): void {
    this.current = mode;
    this.pausedAt ??= Date.now();
    if (mode !== 'queue') for (const w of this.waiters) w.reject(new EnginePausedError());
    if (mode !== 'queue') this.waiters.clear();
  }

  resume(): void {
    this.current = null;
    this.pausedAt = null;
    for (const w of this.waiters) w.resolve();
    this.waiters.clear();
  }

  /** Resolves when a new engine call may start; waits while paused in queue mode. */
  admit(signal?: AbortSignal): Promise<void> {
    if (this.current === null) return Promise.resolve();
    if (this.current !== 'queue') return Promise.reject(new EnginePausedError());
    return new Promise<void>((resolve, reject) => {
      const waiter = {
        resolve: () => { signal?.removeEventListener('abort', onAbort); resolve(); },
        reject: (err: unknown) => { signal?.removeEventListener('abort', onAbort); reject(err); },
      };
      const onAbort = () => { this.waiters.delete(waiter); reject(signal!.reason ?? new Error('aborted')); };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.add(waiter);
    });
  }
}
