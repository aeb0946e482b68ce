// A node of a Rollgate cluster (DESIGN §12), wired for app.ts: the registry (heartbeat, dead-node recovery),
// the control bus, weight-sync control for every node, the cross-node event relay, the sample queue, and
// who owns a session.
import pg from 'pg';
import type { EnginePool } from '../engines/pool.js';
import type { Store } from '../store/index.js';
import { ControlBus } from './bus.js';
import { ClusterEngineControl } from './control.js';
import { relayEvents, type LocalEvents } from './events.js';
import { NodeRegistry, poolSnapshot, type NodeInfo, type NodeLoad } from './nodes.js';
import { SampleQueue } from './queue.js';
import { ensureClusterSchema } from './schema.js';

export { localEngineControl, type EngineControl, type PauseResult } from './control.js';
export { forwardToOwner, FORWARDED_HEADER, OwnerUnavailableError, type ForwardedResponse } from './forward.js';
export { PAUSE_SETTING } from './control.js';
export type { NodeInfo, NodeLoad } from './nodes.js';
export type { SampleClaim, SampleJob, SqlExecutor } from './queue.js';
export { SampleQueue } from './queue.js';

export interface ClusterNodeOptions {
  /** The shared Postgres (the store's URL). */
  url: string;
  nodeId: string;
  /** Where other nodes and agents reach this node (session URLs point here). */
  advertiseUrl: string;
  store: Store;
  pool: EnginePool;
  events: LocalEvents<{ type: string }>;
  /** Batch samples running on this node now (the rollout manager's count). */
  runningTasks: () => number;
  heartbeatMs?: number;
  deadAfterMs?: number;
}

export interface ClusterNode {
  readonly nodeId: string;
  readonly advertiseUrl: string;
  readonly registry: NodeRegistry;
  readonly control: ClusterEngineControl;
  readonly queue: SampleQueue;
  readonly bus: ControlBus;
  /** The node that owns a session (null: no such session, or a session from before the cluster). */
  ownerOf(sessionId: string): Promise<NodeInfo | null>;
  nodes(): Promise<NodeInfo[]>;
  /** Called when this node finds it was declared dead while alive (its samples were re-queued elsewhere). */
  onDeclaredDead(fn: () => void): void;
  /** Called when recovering a dead node counted the last samples of a batch: the batch is complete. */
  onBatchDrained(fn: (batchId: string) => void): void;
  close(opts?: { markStopped?: boolean }): Promise<void>;
}

/** Sessions whose owner is remembered (a few MB at most; forgetting only costs a query). */
const MAX_REMEMBERED_OWNERS = 100_000;
const NODE_VIEW_MS = 1000;

export async function startClusterNode(opts: ClusterNodeOptions): Promise<ClusterNode> {
  const { store, pool, nodeId } = opts;
  const db = new pg.Pool({ connectionString: opts.url, max: 6, application_name: `rollgate-cluster-${nodeId}` });
  db.on('error', (err) => console.error(`rollgate: cluster connection: ${err.message}`));
  const closers: Array<() => Promise<unknown>> = [() => db.end()];
  const closeAll = async () => { for (const c of closers.reverse()) await c().catch(() => undefined); closers.length = 0; };
  try {
    await ensureClusterSchema(db);
    const bus = new ControlBus(opts.url, db, nodeId);
    await bus.start();
    closers.push(() => bus.close());
    const queue = await SampleQueue.open(opts.url, db, nodeId);
    closers.push(() => queue.close());

    const declaredDead = new Set<() => void>();
    const batchesDrained = new Set<(batchId: string) => void>();
    const owners = new Map<string, string | null>();
    const nodeViews = new Map<string, { info: NodeInfo; at: number }>();
    let activeSessions = 0;
    const load = async (): Promise<NodeLoad> => {
      activeSessions = Number((await db.query(`SELECT count(*)::int AS n FROM sessions WHERE node_id = $1 AND status = 'active'`, [nodeId]).catch(() => null))?.rows[0]?.n ?? activeSessions);
      return { activeSessions, runningTasks: opts.runningTasks(), inFlightCalls: pool.inFlightCount };
    };
    const registry = new NodeRegistry(db, {
      nodeId, advertiseUrl: opts.advertiseUrl, heartbeatMs: opts.heartbeatMs, deadAfterMs: opts.deadAfterMs,
      onDeclaredDead: () => { for (const fn of declaredDead) fn(); },
      snapshot: async () => ({ ...poolSnapshot(pool), load: await load() }),
      onDead: async (dead) => {
        // The queue first, so the dead node's samples start again elsewhere while the rest is swept.
        const { requeued, counted, drained } = await queue.recoverNode(dead);
        for (const batchId of drained) for (const fn of batchesDrained) fn(batchId);
        const sessions = await store.sessions.markBatchSessionsInterrupted({ nodeId: dead });
        const runs = await store.runs.markUnfinishedInterrupted({ nodeId: dead });
        const lost = await store.completions.recoverDanglingIntents({ nodeId: dead });
        console.warn(`rollgate: node ${dead} is dead (no heartbeat for ${registry.deadAfterMs / 1000} s): ${requeued} sample(s) queued again (${counted} it had ended counted), ${sessions} session(s) and ${runs} run(s) interrupted, ${lost.length} engine call(s) lost in the crash`);
        await bus.publish({ kind: 'events', events: [{ type: 'nodes', id: dead, status: 'dead' }] }).catch(() => undefined);
      },
    });
    await registry.start();
    closers.push(() => registry.close());
    const control = new ClusterEngineControl(pool, store.settings, bus, registry);
    await control.start();
    closers.push(async () => control.close());
    const stopRelay = relayEvents(bus, opts.events);
    closers.push(async () => stopRelay());

    return {
      nodeId, advertiseUrl: opts.advertiseUrl, registry, control, queue, bus,
      async ownerOf(sessionId) {
        // A session's owner never changes: remembered after the first look, and the common case — a call
        // reaching the node that owns it — costs no query at all.
        let owner = owners.get(sessionId);
        if (owner === undefined) {
          const r = await db.query<{ node_id: string | null }>('SELECT node_id FROM sessions WHERE id = $1', [sessionId]);
          owner = r.rows[0]?.node_id ?? null;
          if (!r.rows.length) return null;
          if (owners.size >= MAX_REMEMBERED_OWNERS) owners.clear();
          owners.set(sessionId, owner);
        }
        if (!owner) return null;
        // Node rows change once a heartbeat (1 s): a second-old view answers as well as a fresh query.
        const seen = nodeViews.get(owner);
        if (seen && Date.now() - seen.at < NODE_VIEW_MS) return seen.info;
        const info = await registry.get(owner);
        if (info) nodeViews.set(owner, { info, at: Date.now() });
        return info;
      },
      nodes: () => registry.list(),
      onDeclaredDead(fn) { declaredDead.add(fn); },
      onBatchDrained(fn) { batchesDrained.add(fn); },
      async close(closeOpts = {}) {
        // A clean stop leaves the row `stopped` (not dead); `markStopped: false` leaves it for a survivor to recover.
        if (closeOpts.markStopped === false) await registry.close({ markStopped: false });
        await closeAll();
      },
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
