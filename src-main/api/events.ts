// In-process event bus feeding `GET /api/events` (live UI updates).
import { EventEmitter } from 'node:events';

export type AppEvent =
  | { type: 'session'; id: string; status?: string }
  | { type: 'completion'; sessionId: string; id: string; status: string }
  | { type: 'engines'; paused?: boolean; policyVersion?: number }
  /** Re-scoring progress for a request that named a `progressId`: sessions read, traces scored so far. */
  | { type: 'rescore'; id: string; sessions: number; sessionsRead: number; tracesDone: number; tokens: number; done: boolean }
  /** Rollout batch progress (rollouts/manager.ts): counts after each sample; `phase` for install/callback steps. */
  | {
    type: 'batch'; id: string; status: string;
    total?: number; done?: number; running?: number; queued?: number; finished?: number; failed?: number; interrupted?: number;
    meanReward?: number | null; phase?: string; message?: string;
  };

export class EventBus {
  private readonly emitter = new EventEmitter();
  constructor() { this.emitter.setMaxListeners(0); }
  emit(ev: AppEvent): void { this.emitter.emit('event', ev); }
  /** A listener that throws is cut off from that event only; emitters (the gateway) never see it. */
  subscribe(fn: (ev: AppEvent) => void): () => void {
    const safe = (ev: AppEvent) => {
      try { fn(ev); } catch (err) { console.error(`rollgate: event listener failed: ${(err as Error).message}`); }
    };
    this.emitter.on('event', safe);
    return () => this.emitter.off('event', safe);
  }
}
