// The control bus (DESIGN §12): Postgres LISTEN/NOTIFY on one channel. A dedicated connection listens and
// reconnects after errors (subscribers hear `reconnected` and re-read stored state they may have missed);
// sends go through the shared pool. Payloads are small JSON (Postgres caps them at 8000 bytes): ids and
// kinds, never records; readers fetch details from the store.
import pg from 'pg';

export const CHANNEL = 'rollgate_cluster';
/** Postgres refuses NOTIFY payloads of 8000 bytes or more. */
export const MAX_PAYLOAD_BYTES = 7900;

export type BusMessage = { kind: string; from?: string } & Record<string, unknown>;
type Listener = (msg: BusMessage & { from: string }) => void;

export class ControlBus {
  private client: pg.Client | null = null;
  private readonly listeners = new Set<Listener>();
  private readonly reconnectListeners = new Set<() => void>();
  private closed = false;
  private retryTimer: NodeJS.Timeout | null = null;

  constructor(private readonly url: string, private readonly db: pg.Pool, readonly nodeId: string) {}

  async start(): Promise<void> {
    await this.connect();
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url, application_name: `rollgate-bus-${this.nodeId}`, keepAlive: true });
    client.on('notification', (n) => {
      if (n.channel !== CHANNEL || !n.payload) return;
      let msg: BusMessage & { from: string };
      try { msg = JSON.parse(n.payload); } catch { return; }
      for (const l of this.listeners) {
        try { l(msg); } catch (err) { console.error(`rollgate: cluster bus listener failed: ${(err as Error).message}`); }
      }
    });
    const lost = () => {
      if (this.client !== client) return;
      this.client = null;
      client.end().catch(() => undefined);
      this.scheduleReconnect(250);
    };
    client.on('error', lost);
    client.on('end', lost);
    await client.connect();
    await client.query(`LISTEN ${CHANNEL}`);
    this.client = client;
  }

  private scheduleReconnect(delayMs: number): void {
    if (this.closed || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (this.closed) return;
      this.connect().then(() => {
        for (const l of this.reconnectListeners) l();
      }, (err: Error) => {
        console.error(`rollgate: cluster bus reconnect failed (${err.message}); retrying`);
        this.scheduleReconnect(Math.min(delayMs * 2, 5000));
      });
    }, delayMs);
  }

  /** Sends to every node, this one included. Throws for a payload Postgres would refuse. */
  async publish(msg: BusMessage): Promise<void> {
    const payload = JSON.stringify({ ...msg, from: this.nodeId });
    if (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES) throw new Error(`cluster bus message ${msg.kind} is ${Buffer.byteLength(payload)} bytes (limit ${MAX_PAYLOAD_BYTES})`);
    await this.db.query('SELECT pg_notify($1, $2)', [CHANNEL, payload]);
  }

  subscribe(fn: Listener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Called after the listening connection came back: notifications sent meanwhile were missed. */
  onReconnect(fn: () => void): () => void {
    this.reconnectListeners.add(fn);
    return () => this.reconnectListeners.delete(fn);
  }

  get connected(): boolean { return this.client !== null; }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const c = this.client;
    this.client = null;
    await c?.end().catch(() => undefined);
  }
}
