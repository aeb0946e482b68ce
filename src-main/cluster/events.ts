// Live UI events from every node (DESIGN §12): each node sends its own events over the bus, in small batches
// (one NOTIFY per ~50 ms, each under the payload cap), and re-emits the other nodes' events on its own
// event bus, so any node's SSE stream (`GET /api/events`) shows the whole cluster. Events carry ids and
// kinds only; readers fetch the details from the shared store.
import { MAX_PAYLOAD_BYTES, type ControlBus } from './bus.js';

/** The part of the app's event bus this needs (api/events.ts's EventBus has it). */
export interface LocalEvents<E extends { type: string }> {
  emit(ev: E): void;
  subscribe(fn: (ev: E) => void): () => void;
}

const FLUSH_MS = 50;

export function relayEvents<E extends { type: string }>(bus: ControlBus, events: LocalEvents<E>): () => void {
  const fromOthers = new WeakSet<object>();
  let pending: E[] = [];
  let timer: NodeJS.Timeout | null = null;
  const flush = () => {
    timer = null;
    const batch = pending;
    pending = [];
    // Split so every NOTIFY stays under Postgres's cap (an event too large alone is dropped: it is a hint, the store has the data).
    let chunk: E[] = [];
    let size = 64;
    const send = () => { if (chunk.length) void bus.publish({ kind: 'events', events: chunk }).catch(() => undefined); chunk = []; size = 64; };
    for (const ev of batch) {
      const n = Buffer.byteLength(JSON.stringify(ev)) + 1;
      if (n + 64 > MAX_PAYLOAD_BYTES) continue;
      if (size + n > MAX_PAYLOAD_BYTES) send();
      chunk.push(ev);
      size += n;
    }
    send();
  };
  const unsubscribeLocal = events.subscribe((ev) => {
    if (fromOthers.has(ev)) return;
    pending.push(ev);
    timer ??= setTimeout(flush, FLUSH_MS);
  });
  const unsubscribeBus = bus.subscribe((msg) => {
    if (msg.kind !== 'events' || msg.from === bus.nodeId || !Array.isArray(msg.events)) return;
    for (const ev of msg.events as E[]) {
      if (!ev || typeof ev !== 'object' || typeof ev.type !== 'string') continue;
      fromOthers.add(ev);
      events.emit(ev);
    }
  });
  return () => {
    unsubscribeLocal();
    unsubscribeBus();
    if (timer) { clearTimeout(timer); flush(); }
  };
}
