// The node registry (DESIGN §12): every node of a cluster has a row in `rollgate_nodes` and refreshes its
// heartbeat about once a second, with what it serves (engines) and how busy it is (load). A node whose
// heartbeat is older than `deadAfterMs` is dead: the first survivor to notice it (one at a time, under an
// advisory lock) runs recovery for it (its sessions, runs and calls; its queued work) and marks it `dead`.
// Times come from the database clock, so nodes with skewed clocks agree on who is late.
import type pg from 'pg';
import type { EnginePool } from '../engines/pool.js';
import { RECOVERY_LOCK } from './schema.js';

export interface NodeLoad {
  /** Sessions this node owns that are active. */
  activeSessions: number;
  /** Batch samples running here. */
  runningTasks: number;
  /** Engine calls in flight from this node. */
  inFlightCalls: number;
}

export interface NodeSnapshot {
  engines: Array<{ id: string; kind: string; model: string; replicas: number; healthy: number }>;
  load: NodeLoad;
  drained: boolean;
}

export type NodeStatus = 'live' | 'dead' | 'stopped';

/** What a node serves, and whether its calls have drained under a pause: the pool's share of a snapshot. */
export function poolSnapshot(pool: EnginePool): Pick<NodeSnapshot, 'engines' | 'drained'> {
  return {
    engines: pool.list().map((e) => ({
      id: e.config.id, kind: e.config.kind, model: e.config.model, replicas: e.replicas.length, healthy: e.replicas.filter((r) => r.healthy).length,
    })),
    drained: pool.gate.mode !== null && pool.inFlightCount === 0,
  };
}

export interface NodeInfo extends NodeSnapshot {
  id: string;
  advertiseUrl: string;
  startedAt: number;
  heartbeatAt: number;
  /** As recorded; a `live` node whose heartbeat is late counts as dead (`alive` false) before anyone marks it. */
  status: NodeStatus;
  alive: boolean;
  /** How long ago its last heartbeat was, by the database clock. */
  heartbeatAgeMs: number;
}

export interface NodeRegistryOptions {
  nodeId: string;
  advertiseUrl: string;
  heartbeatMs?: number;
  deadAfterMs?: number;
  /** What this node serves and how busy it is, read at each heartbeat. */
  snapshot: () => NodeSnapshot | Promise<NodeSnapshot>;
  /** Recovery for a dead node (idempotent: it may run again for the same node after a crash mid-way). */
  onDead: (nodeId: string) => Promise<void>;
  /**
   * This node was declared dead while it was in fact alive (stalled past the bound, or cut off from the
   * database): a survivor has already re-queued its samples and interrupted its sessions. Called once per
   * such finding, before this node's heartbeat marks it live again, so it can let go of that work.
   */
  onDeclaredDead?: () => void | Promise<void>;
}

export class NodeIdInUseError extends Error {
  constructor(id: string, url: string) {
    super(`node id ${id} is in use by a live node at ${url} (its heartbeat is fresh); give this node another --node-id`);
    this.name = 'NodeIdInUseError';
  }
}

const NOW_MS = `(extract(epoch from clock_timestamp()) * 1000)::bigint`;

interface NodeRow {
  id: string; advertise_url: string; started_at: string; heartbeat_at: string; status: NodeStatus;
  engines: NodeSnapshot['engines']; load: NodeLoad; drained: boolean; age_ms: string;
}

export class NodeRegistry {
  readonly heartbeatMs: number;
  readonly deadAfterMs: number;
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  private closed = false;
  /** Nodes this one recovered (node id → when), for the topology view and tests. */
  readonly recovered = new Map<string, number>();

  constructor(private readonly db: pg.Pool, private readonly opts: NodeRegistryOptions) {
    this.heartbeatMs = opts.heartbeatMs ?? 1000;
    this.deadAfterMs = opts.deadAfterMs ?? 5000;
  }

  get nodeId(): string { return this.opts.nodeId; }

  /**
   * Registers this node. A live node with the same id (fresh heartbeat) is refused; a stale row of the same
   * id (this node crashed and came back before anyone noticed) is recovered first.
   */
  async start(): Promise<void> {
    const { nodeId, advertiseUrl } = this.opts;
    const prior = (await this.db.query<NodeRow>(`SELECT *, ${NOW_MS} - heartbeat_at AS age_ms FROM rollgate_nodes WHERE id = $1`, [nodeId])).rows[0];
    if (prior && prior.status === 'live') {
      if (Number(prior.age_ms) < this.deadAfterMs) throw new NodeIdInUseError(nodeId, prior.advertise_url);
      await this.recoverUnderLock(nodeId, true);
    }
    const snap = await this.opts.snapshot();
    await this.db.query(
      `INSERT INTO rollgate_nodes (id, advertise_url, started_at, heartbeat_at, status, engines, load, drained)
       VALUES ($1, $2, ${NOW_MS}, ${NOW_MS}, 'live', $3, $4, $5)
       ON CONFLICT (id) DO UPDATE SET advertise_url = $2, started_at = ${NOW_MS}, heartbeat_at = ${NOW_MS}, status = 'live',
         engines = $3, load = $4, drained = $5`,
      [nodeId, advertiseUrl, JSON.stringify(snap.engines), JSON.stringify(snap.load), snap.drained],
    );
    this.timer = setInterval(() => { void this.tick(); }, this.heartbeatMs);
  }

  /** One heartbeat, then a look for dead nodes. Overlapping ticks are skipped. */
  tick(): Promise<void> {
    if (this.ticking || this.closed) return this.ticking ?? Promise.resolve();
    this.ticking = (async () => {
      try {
        await this.beat();
        await this.sweep();
      } catch (err) {
        if (!this.closed) console.error(`rollgate: cluster heartbeat failed: ${(err as Error).message}`);
      } finally {
        this.ticking = null;
      }
    })();
    return this.ticking;
  }

  /** Writes this node's heartbeat and snapshot now (also when `drained` changes, so pause waiters see it). */
  async beat(): Promise<void> {
    const snap = await this.opts.snapshot();
    const r = await this.db.query<{ was: NodeStatus }>(
      // The self-join reads the row as it was before this update: was this node declared dead meanwhile?
      `UPDATE rollgate_nodes n SET heartbeat_at = ${NOW_MS}, engines = $2, load = $3, drained = $4, status = 'live'
       FROM rollgate_nodes old WHERE n.id = $1 AND old.id = n.id RETURNING old.status AS was`,
      [this.opts.nodeId, JSON.stringify(snap.engines), JSON.stringify(snap.load), snap.drained],
    );
    if (r.rows[0]?.was === 'dead') {
      console.warn(`rollgate: this node (${this.opts.nodeId}) had been declared dead by another node (no heartbeat for ${this.deadAfterMs / 1000} s); its samples run elsewhere now, it goes on with new work`);
      await this.opts.onDeclaredDead?.();
    }
  }

  /** Finds live nodes with a late heartbeat and recovers them, one survivor at a time. */
  async sweep(): Promise<string[]> {
    const late = await this.db.query<{ id: string }>(
      `SELECT id FROM rollgate_nodes WHERE status = 'live' AND id <> $1 AND heartbeat_at < ${NOW_MS} - $2`,
      [this.opts.nodeId, this.deadAfterMs],
    );
    const done: string[] = [];
    for (const { id } of late.rows) if (await this.recoverUnderLock(id, false)) done.push(id);
    return done;
  }

  /**
   * Recovers one node if it is still late (or `force`: this node's own stale row at start) while holding the
   * recovery lock; another survivor holding it means someone else is on it, so this one skips.
   */
  private async recoverUnderLock(id: string, force: boolean): Promise<boolean> {
    const client = await this.db.connect();
    try {
      const got = (await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [RECOVERY_LOCK])).rows[0]?.ok;
      if (!got) return false;
      try {
        const still = await client.query(
          `SELECT 1 FROM rollgate_nodes WHERE id = $1 AND status = 'live' AND ($3 OR heartbeat_at < ${NOW_MS} - $2)`,
          [id, this.deadAfterMs, force],
        );
        if (!still.rowCount) return false;
        // Recovery first, then the mark: a survivor that dies half-way leaves the node `live`, and the next one redoes it.
        await this.opts.onDead(id);
        await client.query(`UPDATE rollgate_nodes SET status = 'dead', drained = false WHERE id = $1`, [id]);
        this.recovered.set(id, Date.now());
        return true;
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [RECOVERY_LOCK]);
      }
    } finally {
      client.release();
    }
  }

  async list(): Promise<NodeInfo[]> {
    const rows = await this.db.query<NodeRow>(`SELECT *, ${NOW_MS} - heartbeat_at AS age_ms FROM rollgate_nodes ORDER BY id`);
    return rows.rows.map((r) => nodeInfo(r, this.deadAfterMs));
  }

  async get(id: string): Promise<NodeInfo | null> {
    const r = (await this.db.query<NodeRow>(`SELECT *, ${NOW_MS} - heartbeat_at AS age_ms FROM rollgate_nodes WHERE id = $1`, [id])).rows[0];
    return r ? nodeInfo(r, this.deadAfterMs) : null;
  }

  /** Stops heartbeating; a clean stop marks the node `stopped` (a crash leaves it `live` until a survivor notices). */
  async close(opts: { markStopped?: boolean } = {}): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await this.ticking;
    if (opts.markStopped !== false) {
      await this.db.query(`UPDATE rollgate_nodes SET status = 'stopped', drained = false WHERE id = $1`, [this.opts.nodeId]).catch(() => undefined);
    }
  }
}

function nodeInfo(r: NodeRow, deadAfterMs: number): NodeInfo {
  const age = Number(r.age_ms);
  return {
    id: r.id, advertiseUrl: r.advertise_url, startedAt: Number(r.started_at), heartbeatAt: Number(r.heartbeat_at),
    status: r.status, alive: r.status === 'live' && age < deadAfterMs, heartbeatAgeMs: age,
    engines: r.engines, load: r.load, drained: r.drained,
  };
}
