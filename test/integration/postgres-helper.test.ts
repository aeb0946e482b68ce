// The private test Postgres (test/helpers/postgres.ts) really starts, serves fresh databases on loopback and
// leaves nothing behind.
import { existsSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, type PostgresServer } from '../helpers/postgres.js';

describe('test Postgres server', () => {
  let server: PostgresServer;
  beforeAll(async () => { server = await startPostgres(); });
  afterAll(async () => { await server?.stop(); });

  it('creates separate fresh databases reachable over 127.0.0.1', async () => {
    const a = await server.createDatabase();
    const b = await server.createDatabase();
    expect(a).not.toBe(b);
    expect(a).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/t_/);
    const client = new pg.Client({ connectionString: a });
    await client.connect();
    try {
      await client.query('CREATE TABLE x (v int)');
      await client.query('INSERT INTO x VALUES (42)');
      expect((await client.query('SELECT v FROM x')).rows).toEqual([{ v: 42 }]);
      expect((await client.query('SHOW listen_addresses')).rows[0].listen_addresses).toBe('127.0.0.1');
    } finally { await client.end(); }
    const other = new pg.Client({ connectionString: b });
    await other.connect();
    try {
      const tables = await other.query("SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'x'");
      expect(tables.rows[0].n).toBe(0);
    } finally { await other.end(); }
  });

  it('stop ends the server and removes its folder', async () => {
    const own = await startPostgres();
    const url = await own.createDatabase();
    expect(existsSync(own.dir)).toBe(true);
    await own.stop();
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
    await expect(client.connect()).rejects.toThrow();
    await client.end().catch(() => undefined);
    expect(existsSync(own.dir)).toBe(false);
    await own.stop();
  });
});
