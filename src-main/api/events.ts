// In-process event bus feeding `GET /api/events` (live UI updates).
import { EventEmitter } from 'node:events';

export type AppEvent =
  | { type: 'session'; id: string; status?: string }
  | { type: 'completion'; sessionId: string; id: string; status: string };

export class EventBus {
  private readonly emitter = new EventEmitter();
  constructor() { this.emitter.setMaxListeners(0); }
  emit(ev: AppEvent): void { this.emitter.emit('event', ev); }
  subscribe(fn: (ev: AppEvent) => void): () => void {
    this.emitter.on('event', fn);
    return () => this.emitter.off('event', fn);
  }
}
