// In-process event bus feeding `GET /api/events` (live UI updates).
import { EventEmitter } from 'node:events';

export type AppEvent =
  | { type: 'session'; id: string; status?: string }
  | { type: 'completion'; sessionId: string; id: string; status: string }
  | { type: 'engines'; paused?: boolean; policyVersion?: number }
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
  subscribe(fn: (ev: AppEvent) => void): () => void {
    this.emitter.on('event', fn);
    return () => this.emitter.off('event', fn);
  }
}
