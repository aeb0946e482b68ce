import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CompletionRecord, NewSession } from '../../src-main/core/types.js';
import { MIGRATIONS, migrate, openSqliteDatabase, type SqliteDatabase as Store } from '../../src-main/store/index.js';

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

function session(over: Partial<NewSession> = {}): NewSession {
  return {
    id: randomUUID(),
    key: randomBytes(16).toString('hex'),
    engineId: 'sim-vllm',
    harness: 'builtin',
    taskId: 't1',
    batchId: null,
    metadata: { note: 'ü', n: 1 },
    status: 'active',
    reward: null,
    createdAt: Date.now(),
    finishedAt: null,
    ...over,
  };
}

function completion(sessionId: string, seq: number, n = 8, over: Partial<CompletionRecord> = {}): CompletionRecord {
  return {
    id: randomUUID(),
    sessionId,
    seq,
    dialect: 'openai-chat',
    engineId: 'sim-vllm',
    replica: 'http://127.0.0.1:1',
    policyVersion: 3,
    requestReceived: { model: 'm', messages: [{ role: 'user', content: 'hi' }] },
    requestServed: { model: 'm', logprobs: true },
    response: {
      id: 'r',
      model: 'm',
      created: 1,
      message: { role: 'assistant', content: 'ok', reasoning: null, tool_calls: [] },
      finish_reason: 'stop',
      usage: { prompt_tokens: n, completion_tokens: n, total_tokens: 2 * n },
    },
    finishReason: 'stop',
    usage: { prompt_tokens: n, completion_tokens: n, total_tokens: 2 * n },
    timings: { queueMs: 1, ttftMs: 2.5, totalMs: 10 },
    status: 'ok',
    error: null,
    retryOf: null,
    createdAt: Date.now(),
    promptIds: Int32Array.from({ length: n }, (_, i) => i + seq * 1000),
    outputIds: Int32Array.from({ length: n }, (_, i) => 151_000 + i),
    outputLogprobs: Float32Array.from({ length: n }, (_, i) => -i / 7),
    ...over,
  };
}

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

describe('sessions repository', () => {
  it('create / get / getByKey (timing-safe) / update', () => {
    const s = mk();
    const created = session();
    s.sessions.create(created);
    const { key, ...rec } = created;
    expect(s.sessions.get(rec.id)).toEqual(rec);
    expect(s.sessions.getByKey(key)).toEqual(rec);
    const stored = s.db.prepare('SELECT * FROM sessions WHERE id = ?').get(rec.id) as Record<string, unknown>;
    expect(Object.keys(stored)).not.toContain('key');
    expect(JSON.stringify(stored)).not.toContain(key);
    expect(s.sessions.getByKey(key.slice(0, -1) + (key.endsWith('0') ? '1' : '0'))).toBeNull();
    expect(s.sessions.getByKey('')).toBeNull();
    expect(s.sessions.get('nope')).toBeNull();
    const upd = s.sessions.update(rec.id, { status: 'finished', reward: 0.5, finishedAt: 123, metadata: { a: [1] } });
    expect(upd).toEqual({ ...rec, status: 'finished', reward: 0.5, finishedAt: 123, metadata: { a: [1] } });
    // explicit null clears, absent keeps
    expect(s.sessions.update(rec.id, { reward: null })!.reward).toBeNull();
    expect(s.sessions.get(rec.id)!.status).toBe('finished');
    expect(s.sessions.update('nope', { status: 'failed' })).toBeNull();
  });

  it('rejects duplicate keys', () => {
    const s = mk();
    const a = session();
    s.sessions.create(a);
    expect(() => s.sessions.create(session({ key: a.key }))).toThrow();
  });

  it('list filters, pages, and carries completion counts and token totals', async () => {
    const s = mk();
    const a = s.sessions.create(session({ batchId: 'b1', createdAt: 1 }));
    const b = s.sessions.create(session({ batchId: 'b1', createdAt: 2, status: 'finished' }));
    const c = s.sessions.create(session({ batchId: 'b2', createdAt: 3 }));
    await Promise.all([0, 1, 2].map((i) => s.writer.putCompletion(completion(a.id, i, 5))));
    await s.writer.putCompletion(completion(b.id, 0, 2));
    const all = s.sessions.list();
    expect(all.map((r) => r.id)).toEqual([c.id, b.id, a.id]);
    const ra = all.find((r) => r.id === a.id)!;
    expect(ra).toMatchObject({ completionCount: 3, promptTokens: 15, outputTokens: 15, totalTokens: 30 });
    expect(all.find((r) => r.id === c.id)).toMatchObject({ completionCount: 0, totalTokens: 0 });
    expect(s.sessions.list({ batchId: 'b1' }).map((r) => r.id)).toEqual([b.id, a.id]);
    expect(s.sessions.list({ batchId: 'b1', status: 'active' }).map((r) => r.id)).toEqual([a.id]);
    expect(s.sessions.list({ limit: 1, offset: 1 }).map((r) => r.id)).toEqual([b.id]);
    expect(s.sessions.count({ batchId: 'b1' })).toBe(2);
    expect(s.sessions.getSummary(a.id)).toMatchObject({ completionCount: 3 });
  });

  it('markBatchSessionsInterrupted flips active batch sessions only', () => {
    const s = mk();
    const a = s.sessions.create(session({ batchId: 'b1' }));
    const b = s.sessions.create(session({ status: 'finished', finishedAt: 5, batchId: 'b1' }));
    const c = s.sessions.create(session({ batchId: 'b1' }));
    const manual = s.sessions.create(session());
    expect(s.sessions.markBatchSessionsInterrupted(99)).toBe(2);
    expect(s.sessions.get(a.id)).toMatchObject({ status: 'interrupted', finishedAt: 99 });
    expect(s.sessions.get(c.id)!.status).toBe('interrupted');
    expect(s.sessions.get(b.id)).toMatchObject({ status: 'finished', finishedAt: 5 });
    expect(s.sessions.get(manual.id)!.status).toBe('active');
    expect(s.sessions.markBatchSessionsInterrupted()).toBe(0);
  });
});

describe('completions repository', () => {
  it('round-trips a CompletionRecord with 10k ids exactly', async () => {
    const s = mk();
    const sess = s.sessions.create(session());
    const rec = completion(sess.id, 0, 10_000, {
      outputLogprobs: Float32Array.from({ length: 10_000 }, (_, i) => Math.fround(-Math.random() * 20 - i * 1e-6)),
      promptIds: Int32Array.from({ length: 10_000 }, () => (Math.random() * 151_936) | 0),
    });
    await s.writer.putCompletion(rec);
    const back = s.completions.get(rec.id)!;
    expect(back.promptIds).toBeInstanceOf(Int32Array);
    expect(back.outputLogprobs).toBeInstanceOf(Float32Array);
    expect(back).toEqual(rec);
    expect(s.completions.listBySession(sess.id)).toEqual([rec]);
  });

  it('round-trips null response/usage, errors, retries and empty arrays', async () => {
    const s = mk();
    const sess = s.sessions.create(session());
    const rec = completion(sess.id, 0, 0, {
      status: 'error',
      error: 'engine died',
      response: null,
      usage: null,
      finishReason: null,
      timings: { queueMs: 0, ttftMs: null, totalMs: 3 },
      retryOf: 'x',
    });
    await s.writer.putCompletion(rec);
    expect(s.completions.get(rec.id)).toEqual(rec);
  });

  it('a second record under an acknowledged id is an error and leaves the first untouched', async () => {
    const s = mk();
    const sess = s.sessions.create(session());
    const rec = completion(sess.id, 0, 8);
    await s.writer.putCompletion(rec);
    const again = { ...rec, status: 'error' as const, error: 'late failure', response: null };
    await expect(s.writer.putCompletion(again)).rejects.toThrow(/UNIQUE|PRIMARY KEY/i);
    expect(s.completions.get(rec.id)).toEqual(rec);
  });

  it('rejects a record whose logprobs and ids differ in length (and nothing else)', async () => {
    const s = mk();
    const sess = s.sessions.create(session());
    const bad = completion(sess.id, 0, 4, { outputLogprobs: new Float32Array(3) });
    const good = completion(sess.id, 1, 4);
    const [r1, r2] = await Promise.allSettled([s.writer.putCompletion(bad), s.writer.putCompletion(good)]);
    expect(r1.status).toBe('rejected');
    expect(r2.status).toBe('fulfilled');
    expect(s.completions.countBySession(sess.id)).toBe(1);
  });

  it('listBySession orders by seq; countBySession; nextSeq sees queued writes; reserveSeq allocates', async () => {
    const s = mk();
    const sess = s.sessions.create(session());
    expect(s.completions.nextSeq(sess.id)).toBe(0);
    await s.writer.putCompletion(completion(sess.id, 1));
    await s.writer.putCompletion(completion(sess.id, 0));
    expect(s.completions.listBySession(sess.id).map((c) => c.seq)).toEqual([0, 1]);
    expect(s.completions.countBySession(sess.id)).toBe(2);
    expect(s.completions.nextSeq(sess.id)).toBe(2);
    const p = s.writer.putCompletion(completion(sess.id, 2));
    expect(s.completions.nextSeq(sess.id)).toBe(3); // queued, not committed yet
    await p;
    expect(s.completions.reserveSeq(sess.id)).toBe(3);
    expect(s.completions.reserveSeq(sess.id)).toBe(4);
    expect(s.completions.nextSeq(sess.id)).toBe(5);
  });

  it('findByBodyHash finds the committed or queued record with that hash', async () => {
    const s = mk();
    const sess = s.sessions.create(session());
    const a = completion(sess.id, 0);
    await s.writer.putCompletion(a, { bodyHash: 'h1' });
    expect(s.completions.findByBodyHash(sess.id, 'h1')!.id).toBe(a.id);
    expect(s.completions.findByBodyHash(sess.id, 'h2')).toBeNull();
    expect(s.completions.findByBodyHash('other', 'h1')).toBeNull();
    const b = completion(sess.id, 1);
    const p = s.writer.putCompletion(b, { bodyHash: 'h2' });
    expect(s.completions.findByBodyHash(sess.id, 'h2')!.id).toBe(b.id);
    await p;
  });

  it('iterateAll streams with filters and does not block the writer', async () => {
    const s = mk();
    const a = s.sessions.create(session({ batchId: 'B' }));
    const b = s.sessions.create(session({ batchId: 'C' }));
    for (let i = 0; i < 5; i++) await s.writer.putCompletion(completion(a.id, i, 4, { engineId: i % 2 ? 'sim-sglang' : 'sim-vllm' }));
    await s.writer.putCompletion(completion(b.id, 0));
    const it = s.completions.iterateAll({ batchId: 'B' });
    const first = it.next();
    expect(first.done).toBe(false);
    // the writer commits while the iterator holds its own read connection open
    await s.writer.putCompletion(completion(b.id, 1));
    const rest = [...it];
    expect([first.value, ...rest].map((c) => (c as CompletionRecord).seq)).toEqual([0, 1, 2, 3, 4]);
    expect([...s.completions.iterateAll({ batchId: 'B', engineId: 'sim-sglang' })].map((c) => c.seq)).toEqual([1, 3]);
    expect([...s.completions.iterateAll()].length).toBe(7);
    expect([...s.completions.iterateAll({ sessionId: b.id })].length).toBe(2);
    // breaking early releases the reader
    for (const c of s.completions.iterateAll()) {
      expect(c.id).toBeTruthy();
      break;
    }
  });
});

describe('single writer', () => {
  it('group-commits 1000 concurrent putCompletion in far fewer than 1000 transactions', async () => {
    const s = mk();
    const sess = s.sessions.create(session());
    const t0 = s.writer.stats.transactions;
    const recs = Array.from({ length: 1000 }, (_, i) => completion(sess.id, i, 16));
    await Promise.all(recs.map((r) => s.writer.putCompletion(r)));
    const txns = s.writer.stats.transactions - t0;
    expect(txns).toBeGreaterThan(0);
    expect(txns).toBeLessThanOrEqual(10);
    expect(s.completions.countBySession(sess.id)).toBe(1000);
    expect(s.writer.pending).toBe(0);
    const some = s.completions.get(recs[777].id)!;
    expect(some.outputIds).toEqual(recs[777].outputIds);
  });

  it('resolves only after the commit (visible to another connection)', async () => {
    const s = mk();
    const sess = s.sessions.create(session());
    const rec = completion(sess.id, 0);
    const other = new Database(s.path, { readonly: true });
    try {
      const p = s.writer.putCompletion(rec);
      expect(other.prepare('SELECT COUNT(*) AS n FROM completions').get()).toEqual({ n: 0 });
      await p;
      expect(other.prepare('SELECT COUNT(*) AS n FROM completions').get()).toEqual({ n: 1 });
    } finally {
      other.close();
    }
  });

  it('a failing write rejects only itself; the rest of the group commits', async () => {
    const s = mk();
    const dup = session();
    s.sessions.create(dup);
    const fresh = session();
    const c1 = completion(fresh.id, 0);
    const results = await Promise.allSettled([
      s.writer.putSession(fresh),
      s.writer.putSession(session({ key: dup.key })), // duplicate key → constraint error
      s.writer.putCompletion(c1),
      s.writer.updateSession('missing', { status: 'finished' }),
      s.writer.updateSession(fresh.id, { status: 'finished', reward: 1 }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected', 'fulfilled']);
    expect(s.sessions.get(fresh.id)).toMatchObject({ status: 'finished', reward: 1 });
    expect(s.completions.get(c1.id)).not.toBeNull();
    expect(s.writer.stats.failed).toBe(2);
  });

  it('flushes immediately when the queue reaches maxBatch', async () => {
    const s = openSqliteDatabase({ dataDir: dir, maxBatch: 4 });
    open.push(s);
    const sess = s.sessions.create(session());
    const ps = [0, 1, 2, 3].map((i) => s.writer.putCompletion(completion(sess.id, i)));
    // synchronous flush at the 4th put: committed before any tick
    expect(s.completions.countBySession(sess.id)).toBe(4);
    await Promise.all(ps);
  });

  it('flush() commits now; close() flushes; a reopened store has everything', async () => {
    const s = mk();
    const sess = session();
    void s.writer.putSession(sess);
    const recs = Array.from({ length: 50 }, (_, i) => completion(sess.id, i, 100));
    const ps = recs.map((r) => s.writer.putCompletion(r));
    await s.writer.flush();
    expect(s.completions.countBySession(sess.id)).toBe(50);
    const late = completion(sess.id, 50);
    const lp = s.writer.putCompletion(late);
    void s.writer.updateSession(sess.id, { status: 'finished', reward: 0.25, finishedAt: 7 });
    await s.close();
    await lp;
    await Promise.all(ps);
    await expect(s.writer.putCompletion(completion(sess.id, 99))).rejects.toThrow(/closed/);
    await s.close(); // idempotent

    const r = mk();
    const { key: _key, ...stored } = sess;
    expect(r.sessions.get(sess.id)).toEqual({ ...stored, status: 'finished', reward: 0.25, finishedAt: 7 });
    const back = r.completions.listBySession(sess.id);
    expect(back.length).toBe(51);
    expect(back[10]).toEqual(recs[10]);
    expect(back[50]).toEqual(late);
  });
});
