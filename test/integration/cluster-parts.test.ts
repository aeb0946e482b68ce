// The cluster layer's parts against a real Postgres (test/helpers/postgres.ts): node registry heartbeats and
// dead-node recovery, the LISTEN/NOTIFY bus, and the sample queue's count-once ledger.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ControlBus } from '../../src-main/cluster/bus.js';
import { NodeIdInUseError, NodeRegistry, type NodeSnapshot } from '../../src-main/cluster/nodes.js';
import { SampleQueue, type SampleClaim, type SampleJob } from '../../src-main/cluster/queue.js';
import { ensureClusterSchema } from '../../src-main/cluster/schema.js';
import { newSession } from '../../src-main/api/sessions.js';
import { openPostgresStore, type PostgresStore } from '../../src-main/store/postgres/index.js';
import { startPostgres, type PostgresServer } from '../helpers/postgres.js';

const snap = (): NodeSnapshot => ({ engines: [], load: { activeSessions: 0, runningTasks: 0, inFlightCalls: 0 }, drained: false });
const until = async (cond: () => boolean | Promise<boolean>, ms = 20_000) => {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
};

describe('cluster parts on Postgres', () => {
  let server: PostgresServer;
  let url: string;
  let db: pg.Pool;
  beforeAll(async () => {
    server = await startPostgres();
    url = await server.createDatabase();
    db = new pg.Pool({ connectionString: url, max: 10 });
    await ensureClusterSchema(db);
    await ensureClusterSchema(db); // idempotent
  });
  afterAll(async () => {
    await db?.end();
    await server?.stop();
  });

  it('a node that stops heartbeating is recovered once, by one survivor, and its id can come back', async () => {
    const recovered: Array<[string, string]> = [];
    const reg = (id: string) => new NodeRegistry(db, {
      nodeId: id, advertiseUrl: `http://127.0.0.1/${id}`, heartbeatMs: 100, deadAfterMs: 600, snapshot: snap,
      onDead: async (dead) => { recovered.push([id, dead]); },
    });
    const a = reg('a'); const b = reg('b'); const c = reg('c');
    await Promise.all([a.start(), b.start(), c.start()]);
    await expect(reg('a').start()).rejects.toThrow(NodeIdInUseError);
    expect((await a.list()).map((n) => [n.id, n.alive])).toEqual([['a', true], ['b', true], ['c', true]]);
    await c.close({ markStopped: false }); // like kill -9: the row stays `live`, the heartbeat stops
    await until(async () => (await a.get('c'))?.status === 'dead');
    await new Promise((r) => setTimeout(r, 400));
    expect(recovered.filter(([, dead]) => dead === 'c')).toHaveLength(1);
    const again = reg('c');
    await again.start();
    expect((await a.get('c'))?.status).toBe('live');
    await again.close({ markStopped: false });
    await until(async () => (await a.get('c'))?.status === 'dead');
    // A clean stop is not a death.
    await b.close();
    await new Promise((r) => setTimeout(r, 900));
    expect((await a.get('b'))?.status).toBe('stopped');
    expect(recovered.filter(([, dead]) => dead === 'b')).toHaveLength(0);
    await a.close();
  });

  it('a node declared dead while alive finds out at its next heartbeat, lets go of its work, and is live again', async () => {
    let fenced = 0;
    const n = new NodeRegistry(db, { nodeId: 'fenced', advertiseUrl: 'http://127.0.0.1/f', heartbeatMs: 60_000, snapshot: snap, onDead: async () => undefined, onDeclaredDead: () => { fenced++; } });
    await n.start();
    await n.beat();
    expect(fenced).toBe(0);
    await db.query(`UPDATE rollgate_nodes SET status = 'dead' WHERE id = 'fenced'`); // what a survivor does after recovering it
    await n.beat();
    expect(fenced).toBe(1);
    expect((await n.get('fenced'))?.status).toBe('live');
    await n.beat();
    expect(fenced).toBe(1);
    await n.close();
  });

  it('the bus delivers to every node and survives a dropped connection', async () => {
    const b1 = new ControlBus(url, db, 'n1');
    const b2 = new ControlBus(url, db, 'n2');
    await Promise.all([b1.start(), b2.start()]);
    const got: string[] = [];
    b2.subscribe((m) => got.push(`${m.from}:${m.kind}`));
    let reconnected = 0;
    b2.onReconnect(() => reconnected++);
    await b1.publish({ kind: 'ping' });
    await until(() => got.includes('n1:ping'));
    // The server ends the listening connection: the bus reconnects and hears later messages.
    await db.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'rollgate-bus-n2'`);
    await until(() => reconnected > 0 && b2.connected);
    await b1.publish({ kind: 'again' });
    await until(() => got.includes('n1:again'));
    await expect(b1.publish({ kind: 'big', blob: 'x'.repeat(9000) })).rejects.toThrow(/limit/);
    await Promise.all([b1.close(), b2.close()]);
  });

  it('queued samples run once each; a dead node\'s samples move to a live one and count once', async () => {
    // The store's own tables (sessions): recovery looks at the dead node's sessions.
    const store: PostgresStore = await openPostgresStore({ url, nodeId: 'w1' });
    const q1 = await SampleQueue.open(url, db, 'w1');
    const q2 = await SampleQueue.open(url, db, 'w2');
    try {
      const jobs: SampleJob[] = Array.from({ length: 6 }, (_, i) => ({ batchId: 'bat_q', taskId: `t${i % 3}`, sampleIndex: Math.floor(i / 3), task: { id: `t${i % 3}` }, run: {} }));
      await q1.enqueue(jobs, { expireInSeconds: 600 });
      const ran: string[] = [];
      let completedBy: string | null = null;
      const stuck: SampleClaim[] = [];
      // w1 takes samples and never finishes them (a node that hangs, then is declared dead).
      await q1.work(2, async (_job, claim) => { stuck.push(claim); await new Promise(() => undefined); });
      await until(() => stuck.length === 2);
      await q2.work(2, async (job, claim) => {
        const r = await q2.finish(claim);
        ran.push(`${job.taskId}/${job.sampleIndex}`);
        if (r.counted && r.remaining === 0) completedBy = 'w2';
      });
      await until(() => ran.length === 4);
      expect(await q2.counts('bat_q')).toEqual({ done: 4, running: 2 });
      // w1 ended one of its two samples (its session finished) but died before counting it: that one counts
      // as w1's attempt; the other runs again on w2.
      const ended = newSession({ batchId: 'bat_q', taskId: stuck[0]!.taskId, status: 'finished', finishedAt: Date.now() });
      await store.writer.putSession(ended);
      await q1.setSession(stuck[0]!, ended.id);
      expect(await q2.recoverNode('w1')).toEqual({ requeued: 1, counted: 1, drained: [] });
      await until(() => completedBy !== null);
      expect(ran).toHaveLength(5);
      expect(ran).not.toContain(`${stuck[0]!.taskId}/${stuck[0]!.sampleIndex}`);
      expect(new Set([...ran, `${stuck[0]!.taskId}/${stuck[0]!.sampleIndex}`]).size).toBe(6);
      // The hung attempt cannot count any more.
      expect(await q1.finish(stuck[1]!)).toEqual({ counted: false, superseded: true, remaining: 0 });
      // The attempt a survivor counted as w1's own is not superseded: it stays w1's.
      expect(await q1.finish(stuck[0]!)).toEqual({ counted: false, superseded: false, remaining: 0 });
      expect(await q2.counts('bat_q')).toEqual({ done: 6 });
      // A batch whose last samples count during recovery is reported drained (someone must complete it).
      const done = newSession({ batchId: 'bat_d', taskId: 'only', status: 'failed', finishedAt: Date.now() });
      await store.writer.putSession(done);
      await db.query(`INSERT INTO rollgate_batch_samples (batch_id, task_id, sample_index, status, node_id, attempt, session_id) VALUES ('bat_d', 'only', 0, 'running', 'w1', 1, $1)`, [done.id]);
      expect(await q2.recoverNode('w1')).toEqual({ requeued: 0, counted: 1, drained: ['bat_d'] });
    } finally {
      await q1.close(200);
      await q2.close(200);
      await store.close();
    }
  });
});
