// What only the Postgres store has (issue 15): migrations that several nodes may start at once, the owning node
// on its rows, a batch created in one transaction with its queued jobs (real pg-boss), and a URL whose
// password never shows. The Store interface itself is tested on both stores in store-contract.test.ts.
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreUnavailableError, type BatchRecord } from '../../src-main/store/index.js';
import { openPostgresStore, PG_MIGRATIONS, redactUrl, type PostgresStore } from '../../src-main/store/postgres/index.js';
import { startPostgres, type PostgresServer } from '../helpers/postgres.js';
import { newCompletion, newSession } from '../helpers/stores.js';

let server: PostgresServer;
const opened: PostgresStore[] = [];
const open = async (url: string, nodeId?: string) => {
  const s = await openPostgresStore({ url, nodeId });
  opened.push(s);
  return s;
};
const query = async (url: string, text: string) => {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try { return (await c.query(text)).rows; } finally { await c.end(); }
};

beforeAll(async () => { server = await startPostgres(); });
afterAll(async () => {
  for (const s of opened) await s.close();
  await server?.stop();
});

const batch = (id: string): BatchRecord => ({
  id, status: 'queued', spec: { n: 2 }, taskIds: ['t1'], error: null, callbackUrl: null, callback: null, createdAt: 1, startedAt: null, finishedAt: null,
});

describe('Postgres store', () => {
  it('three nodes opening a fresh database at once apply each migration once', async () => {
    const url = await server.createDatabase();
    const stores = await Promise.all(['n1', 'n2', 'n3'].map((n) => open(url, n)));
    expect(await query(url, 'SELECT version, name FROM schema_migrations ORDER BY version')).toEqual(PG_MIGRATIONS.map((m) => ({ version: m.version, name: m.name })));
    await open(url, 'n4'); // and again: nothing left to apply
    expect((await query(url, 'SELECT COUNT(*)::int AS n FROM schema_migrations'))[0]).toEqual({ n: PG_MIGRATIONS.length });
    expect(stores.map((s) => s.nodeId)).toEqual(['n1', 'n2', 'n3']);
  });

  it('stamps the owning node on the sessions and call intents it writes; token arrays are BYTEA', async () => {
    const url = await server.createDatabase();
    const a = await open(url, 'node-a');
    const anon = await open(url);
    const s1 = newSession();
    const s2 = newSession();
    await a.writer.putSession(s1);
    await anon.writer.putSession(s2);
    await a.writer.putIntent({ id: 'i1', sessionId: s1.id, seq: 0, dialect: 'openai-chat', engineId: 'e', createdAt: 1 });
    await a.writer.putCompletion(newCompletion(s1.id, 1, 3));
    expect(await query(url, `SELECT id, node_id FROM sessions ORDER BY node_id NULLS LAST`)).toEqual([{ id: s1.id, node_id: 'node-a' }, { id: s2.id, node_id: null }]);
    expect(await query(url, 'SELECT node_id FROM call_intents')).toEqual([{ node_id: 'node-a' }]);
    expect((await query(url, 'SELECT pg_typeof(prompt_ids)::text AS t, length(prompt_ids) AS n FROM completions'))[0]).toEqual({ t: 'bytea', n: 12 });
    // BIGINT comes back as a number from the store's pool only; pg's process-wide parsers are untouched.
    expect(pg.types.getTypeParser(20, 'text')('5')).toBe('5');
  });

  it('creates a batch and its pg-boss jobs in one transaction: both or neither', async () => {
    const url = await server.createDatabase();
    const s = await open(url);
    const boss = new PgBoss({ connectionString: url, schema: 'boss_t', max: 2 });
    boss.on('error', () => undefined);
    await boss.start();
    try {
      await boss.createQueue('tasks');
      await s.batches.createBatch(batch('b1'), async (tx) => {
        await boss.send('tasks', { batchId: 'b1', task: 't1' }, { db: tx });
        await tx.query('SELECT 1');
      });
      expect(await s.batches.get('b1')).toEqual(batch('b1'));
      const [job] = await boss.fetch<{ batchId: string }>('tasks');
      expect(job?.data).toEqual({ batchId: 'b1', task: 't1' });

      await expect(s.batches.createBatch(batch('b2'), async (tx) => {
        await boss.send('tasks', { batchId: 'b2', task: 't1' }, { db: tx });
        throw new Error('enqueue failed');
      })).rejects.toThrow('enqueue failed');
      expect(await s.batches.get('b2')).toBeNull();
      expect(await boss.fetch('tasks')).toEqual([]);
    } finally {
      await boss.stop({ graceful: false });
    }
  });

  it('a lock held elsewhere holds writes for a bounded time: rejected as unavailable past it, committed once it goes', async () => {
    const url = await server.createDatabase();
    const s = await openPostgresStore({ url, unavailableAfterMs: 400 });
    opened.push(s);
    const locker = new pg.Client({ connectionString: url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE completions IN ACCESS EXCLUSIVE MODE');
      const err = await s.writer.putCompletion(newCompletion('s', 0)).then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(StoreUnavailableError);
      let acked = false;
      const p = s.writer.putCompletion(newCompletion('s', 1)).then(() => { acked = true; });
      await new Promise((r) => setTimeout(r, 150));
      expect(acked).toBe(false);
      await locker.query('COMMIT');
      await p;
      expect((await s.completions.listBySession('s')).map((c) => c.seq)).toEqual([1]);
    } finally {
      await locker.end();
    }
  });

  it('never shows the password: location, and the error when the server cannot be reached', async () => {
    const url = (await server.createDatabase()).replace('postgres@', 'postgres:s3cret-pw@');
    const s = await open(url); // trust auth: the password is not needed, only carried
    expect(s.location).toBe(url.replace(':s3cret-pw', ''));
    expect(redactUrl('postgres://u:p@h:1/d?sslmode=require&password=x')).toBe('postgres://u@h:1/d?sslmode=require');
    const err = await openPostgresStore({ url: `postgres://postgres:s3cret-pw@127.0.0.1:1/nowhere`, unavailableAfterMs: 500 }).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(StoreUnavailableError);
    expect(String((err as Error).message)).toMatch(/postgres:\/\/postgres@127\.0\.0\.1:1\/nowhere/);
    expect(String((err as Error).message)).not.toContain('s3cret');
  });
});
