// What the gateway needs from the rest of the app (wired in app.ts).
import type { EventBus } from '../api/events.js';
import type { EnginePool } from '../engines/pool.js';
import type { OwnerRouting } from '../api/session-owner.js';
import type { Store } from '../store/index.js';
import type { SessionTurnCache } from './session-cache.js';

export interface GatewayDeps {
  store: Store;
  pool: EnginePool;
  events: EventBus;
  turns: SessionTurnCache;
  /** Agent calls one session may have in flight at once (default 64); more get a dialect-shaped 429. */
  maxConcurrentPerSession?: number;
  /** How long a streaming agent may leave its stream unread before the call is given up (default 300 s). */
  agentStallMs?: number;
  /** In a cluster: a session another node owns is served by its owner (absent: every session is ours). */
  routeToOwner?: OwnerRouting;
}
