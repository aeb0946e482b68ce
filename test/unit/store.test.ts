import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
// SQLite-only parts of the store (the file, its pragmas and migrations, synchronous flushing). What both stores
// keep is in test/integration/store-contract.test.ts.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MIGRATIONS, migrate, openSqliteDatabase, type SqliteDatabase as Store } from '../../src-main/store/index.js';
import { newCompletion as completion, newSession as session } from '../helpers/stores.js';

let dir: string;
const open: Store[] = [];
function mk(): Store {
  const s = openSqliteDatabase({ dataDir: dir });
  open.push(s);
  return s;
}

beforeEach(() => {
  dir = join(mkdtempSync(join(tmpdir(), 'rollgate-store-')), 'nested', 'data');
});
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
  rmSync(join(dir, '..', '..'), { recursive: true, force: true });
});

describe('openSqliteDatabase', () => {
  it('creates the folder, uses WAL + synchronous=NORMAL + busy_timeout', () => {
    const s = mk();
    expect(s.path).toBe(join(dir, 'rollgate.sqlite'));
    expect(s.db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(s.db.pragma('synchronous', { simple: true })).toBe(1);
    expect(s.db.pragma('busy_timeout', { simple: true })).toBeGreaterThan(0);
  });

  it('migrations are versioned and idempotent (open twice, migrate again)', async () => {
    const a = mk();
    const versions = a.db.prepare('SELECT version FROM schema_migrations ORDER BY version').all();
    expect(versions).toEqual(MIGRATIONS.map((m) => ({ version: m.version })));
    expect(a.db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.at(-1)!.version);
    expect(migrate(a.db)).toEqual([]);
    const b = mk(); // second connection on the same file
    expect(b.db.prepare('SELECT COUNT(*) AS n FROM schema_migrations').get()).toEqual({ n: MIGRATIONS.length });
    await b.close();
    await a.close();
    const c = mk();
    expect(c.db.prepare('SELECT COUNT(*) AS n FROM schema_migrations').get()).toEqual({ n: MIGRATIONS.length });
  });

  it('upgrading a store that kept plaintext session keys drops them; lookups by key still work', async () => {
    const legacy = mk();
    await legacy.close();
    const db = new Database(join(dir, 'rollgate.sqlite'));
    db.exec('DROP TABLE sessions; DELETE FROM schema_migrations WHERE version = 4');
    db.exec(MIGRATIONS[0].sql.slice(0, MIGRATIONS[0].sql.indexOf('CREATE TABLE completions')));
    const key = randomBytes(16).toString('hex');
    const { createHash } = await import('node:crypto');
    db.prepare(`INSERT INTO sessions (id, key, key_hash, status, created_at) VALUES ('ses_old', ?, ?, 'finished', 1)`)
      .run(key, createHash('sha256').update(key).digest());
    db.close();
    const s = mk();
    expect((s.db.prepare('PRAGMA table_info(sessions)').all() as Array<{ name: string }>).map((c) => c.name)).not.toContain('key');
    expect(s.sessions.getByKey(key)?.id).toBe('ses_old');
    // Not on disk any more: neither in the database file's pages nor in the WAL.
    const { readdirSync, readFileSync } = await import('node:fs');
    const files = readdirSync(dir).filter((f) => f.startsWith('rollgate.sqlite'));
    for (const f of files) expect(readFileSync(join(dir, f)).indexOf(key), f).toBe(-1);
  });

  it('applies a newly appended migration once', () => {
    const s = mk();
    const extra = [...MIGRATIONS, { version: 999, name: 'extra', sql: 'CREATE TABLE extra_t (x INTEGER)' }];
    expect(migrate(s.db, extra)).toEqual([999]);
    expect(migrate(s.db, extra)).toEqual([]);
    expect(s.db.pragma('user_version', { simple: true })).toBe(999);
  });

  it('stores token arrays as BLOBs, not JSON', async () => {
    const s = mk();
    const sess = s.sessions.create(session());
    await s.writer.putCompletion(completion(sess.id, 0, 3));
    const row = s.db.prepare('SELECT typeof(prompt_ids) AS a, typeof(output_ids) AS b, typeof(output_logprobs) AS c, length(prompt_ids) AS n FROM completions').get();
    expect(row).toEqual({ a: 'blob', b: 'blob', c: 'blob', n: 12 });
  });
});

describe('single writer (SQLite: synchronous group commit)', () => {
  it('flushes immediately when the queue reaches maxBatch', async () => {
    const s = openSqliteDatabase({ dataDir: dir, maxBatch: 4 });
    open.push(s);
    const sess = s.sessions.create(session());
    const ps = [0, 1, 2, 3].map((i) => s.writer.putCompletion(completion(sess.id, i)));
    // synchronous flush at the 4th put: committed before any tick
    expect(s.completions.countBySession(sess.id)).toBe(4);
    await Promise.all(ps);
  });
});
