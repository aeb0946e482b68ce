// Delta storage (issue 14, store/README.md): rows stored against a parent read back exactly as written;
// a schema-5 store (written by the previous version, test/fixtures/store-v5) converts with no loss.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CompletionRecord, NewSession } from '../../src-main/core/types.js';
import { openSqliteDatabase, type SqliteDatabase as Store } from '../../src-main/store/index.js';
import { REPO_ROOT } from '../helpers/paths.js';

const FIXTURES = join(REPO_ROOT, 'test', 'fixtures');

let dir: string;
const open: Store[] = [];
const mk = () => {
  const s = openSqliteDatabase({ dataDir: dir });
  open.push(s);
  return s;
};
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'rollgate-deltas-'));
});
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
  rmSync(dir, { recursive: true, force: true });
});

const b64 = (a: Int32Array | Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('base64');
/** A record as JSON would carry it, token arrays as their bytes: equal here = byte-identical. */
const plain = (c: CompletionRecord) => JSON.parse(JSON.stringify({ ...c, promptIds: b64(c.promptIds), outputIds: b64(c.outputIds), outputLogprobs: b64(c.outputLogprobs) }));

let seed = 99;
const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff), seed);
const ids = (n: number) => Int32Array.from({ length: n }, () => rnd() % 151_000);
const cat = (...a: Int32Array[]) => { const r = new Int32Array(a.reduce((n, x) => n + x.length, 0)); let o = 0; for (const x of a) { r.set(x, o); o += x.length; } return r; };
const text = (n: number) => Array.from({ length: n }, () => `tok${rnd() % 900}`).join(' ');

function session(id: string): NewSession {
  return { id, key: `${id}-k`, engineId: 'sim-vllm', harness: null, taskId: null, batchId: null, metadata: {}, status: 'active', reward: null, createdAt: 1, finishedAt: null };
}

function rec(sessionId: string, seq: number, promptIds: Int32Array, outputIds: Int32Array, requestReceived: unknown, requestServed: unknown, over: Partial<CompletionRecord> = {}): CompletionRecord {
  return {
    id: `${sessionId}-${seq}`, sessionId, seq, dialect: 'openai-chat', engineId: 'sim-vllm', replica: 'r', policyVersion: 0,
    requestReceived, requestServed,
    response: { id: 'x', model: 'm', created: 1, message: { role: 'assistant', content: text(400), reasoning: null, tool_calls: [] }, finish_reason: 'stop', usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } },
    finishReason: 'stop', usage: null, timings: { queueMs: 0, ttftMs: null, totalMs: 1 }, status: 'ok', error: null, retryOf: null, createdAt: seq,
    promptIds, outputIds, outputLogprobs: Float32Array.from(outputIds, (x) => -x / 1e6), ...over,
  };
}

/** An agent session: each turn's request is the previous one plus the assistant turn and a tool result. */
function agentSession(sid: string, turns: number): CompletionRecord[] {
  const out: CompletionRecord[] = [];
  const tools = [{ type: 'function', function: { name: 'bash', description: text(200) } }];
  const messages: Array<Record<string, unknown>> = [{ role: 'system', content: text(300) }, { role: 'user', content: 'go', extra: undefined }];
  let prompt = ids(500);
  for (let t = 0; t < turns; t++) {
    const output = ids(30);
    out.push(rec(sid, t, prompt, output, { model: 'm', messages: structuredClone(messages), tools, stream: undefined, temperature: t === 3 ? 0.5 : 1 },
      { model: 'm', prompt: Array.from(prompt), max_tokens: 100 }));
    messages.push({ role: 'assistant', content: `step ${t}` }, { role: 'tool', content: text(300) });
    prompt = cat(prompt, output, ids(200));
  }
  return out;
}

describe('delta storage', () => {
  it('stores a growing session as parent + suffix, and every read path returns exactly what was written', async () => {
    const s = mk();
    s.sessions.create(session('s1'));
    const recs = agentSession('s1', 12);
    // a retry (same prompt), an error with no ids, a sub-agent sharing only the system prompt, a compaction
    recs.push(rec('s1', 12, recs[11]!.promptIds, ids(20), recs[11]!.requestReceived, recs[11]!.requestServed, { id: 's1-retry', retryOf: 's1-11' }));
    recs.push(rec('s1', 13, new Int32Array(0), new Int32Array(0), recs[11]!.requestReceived, null, { id: 's1-err', status: 'error', error: 'boom', response: null, outputLogprobs: new Float32Array(0) }));
    recs.push(rec('s1', 14, cat(recs[0]!.promptIds.subarray(0, 300), ids(40)), ids(10), { model: 'm', messages: [{ role: 'user', content: 'sub' }] }, null, { id: 's1-sub' }));
    recs.push(rec('s1', 15, cat(recs[5]!.promptIds, ids(50)), ids(10), { model: 'm', messages: [{ role: 'user', content: 'summary' }] }, null, { id: 's1-compact' }));
    for (const r of recs) await s.writer.putCompletion(r, { bodyHash: `h${r.id}` });

    const want = recs.map(plain);
    expect(s.completions.listBySession('s1').map(plain)).toEqual(want);
    expect([...s.completions.iterateAll({ sessionId: 's1' })].map(plain)).toEqual(want);
    expect([...s.completions.iterateAll({ engineId: 'sim-vllm' })].map(plain)).toEqual(want);
    for (const r of recs) expect(plain(s.completions.get(r.id)!)).toEqual(plain(r));
    expect(plain(s.completions.findByBodyHash('s1', 'hs1-7')!)).toEqual(plain(recs[7]!));

    const rows = s.db.prepare('SELECT id, parent_id, prompt_base, n_prompt, length(prompt_ids) AS bytes FROM completions ORDER BY seq').all() as Array<{ id: string; parent_id: string | null; prompt_base: number; n_prompt: number; bytes: number }>;
    expect(rows[0]!.parent_id).toBeNull();
    for (let t = 1; t < 12; t++) {
      expect(rows[t]!.parent_id).toBe(`s1-${t - 1}`);
      expect(rows[t]!.bytes).toBe(4 * 200); // only the interstitial ids after the parent's tip
    }
    expect(rows.find((r) => r.id === 's1-retry')).toMatchObject({ parent_id: 's1-11', prompt_base: recs[11]!.promptIds.length, bytes: 0 });
    expect(rows.find((r) => r.id === 's1-compact')).toMatchObject({ parent_id: expect.any(String), prompt_base: recs[5]!.promptIds.length });
  });

  it('a new process finds the parent of its first write from the database', async () => {
    const recs = agentSession('s2', 4);
    const a = mk();
    a.sessions.create(session('s2'));
    for (const r of recs.slice(0, 2)) await a.writer.putCompletion(r);
    await a.close();
    const b = mk();
    for (const r of recs.slice(2)) await b.writer.putCompletion(r);
    expect(b.db.prepare("SELECT parent_id FROM completions WHERE id = 's2-2'").pluck().get()).toBe('s2-1');
    expect(b.completions.listBySession('s2').map(plain)).toEqual(recs.map(plain));
  });

  it('a row whose parent failed to commit is written in full', async () => {
    const s = mk();
    s.sessions.create(session('s3'));
    const recs = agentSession('s3', 3);
    s.db.exec(`CREATE TRIGGER fail_parent BEFORE INSERT ON completions WHEN NEW.id = 's3-1' BEGIN SELECT RAISE(ABORT, 'injected'); END`);
    const results = await Promise.allSettled(recs.map((r) => s.writer.putCompletion(r)));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const row = s.db.prepare("SELECT parent_id, prompt_base FROM completions WHERE id = 's3-2'").get();
    expect(row).toEqual({ parent_id: null, prompt_base: 0 });
    expect(s.completions.listBySession('s3').map(plain)).toEqual([recs[0]!, recs[2]!].map(plain));
  });
});

describe('migration to delta storage (schema 5 → 7)', () => {
  it('opens a store written by schema 5, converts it, and every completion reads back byte-identical', async () => {
    cpSync(join(FIXTURES, 'store-v5', 'rollgate.sqlite'), join(dir, 'rollgate.sqlite'));
    const expected = (await import('../fixtures/store-v5/expected.json', { with: { type: 'json' } })).default as Array<Record<string, unknown>>;
    const s = mk();
    expect(s.db.pragma('user_version', { simple: true })).toBeGreaterThanOrEqual(7);
    const bySession = new Map<string, unknown[]>();
    for (const e of expected) bySession.set(e.sessionId as string, [...(bySession.get(e.sessionId as string) ?? []), e]);
    for (const [sid, want] of bySession) {
      expect(s.completions.listBySession(sid).map(plain)).toEqual(want);
      for (const w of want as Array<{ id: string }>) expect(plain(s.completions.get(w.id)!)).toEqual(w);
    }
    expect([...s.completions.iterateAll()].map(plain)).toEqual([...bySession.keys()].sort().flatMap((k) => bySession.get(k)!));
    const converted = s.db.prepare('SELECT COUNT(*) FROM completions WHERE parent_id IS NOT NULL').pluck().get() as number;
    expect(converted).toBeGreaterThan(expected.length / 2);
    // the stored prompt ids are now mostly suffixes
    const stored = s.db.prepare('SELECT SUM(length(prompt_ids)) FROM completions').pluck().get() as number;
    const full = s.db.prepare('SELECT SUM(4 * n_prompt) FROM completions').pluck().get() as number;
    expect(stored).toBeLessThan(full / 3);
  });
});
