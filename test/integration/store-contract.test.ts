// The Store interface (src-main/store/types.ts) as both stores keep it (issue 15): every method, run once on
// SQLite and once on a real Postgres (test/helpers/stores.ts). SQLite-only details (pragmas, its migrations, the
// schema-5 fixture) stay in test/unit/store*.test.ts; Postgres-only ones are in store-postgres.test.ts.
import { describe, expect, it } from 'vitest';
import type { CompletionRecord } from '../../src-main/core/types.js';
import { StoreUnavailableError, type BatchRecord, type RescoreRecord, type RescoreTraceRecord, type SessionRunRecord, type Store } from '../../src-main/store/index.js';
import { forEachStore, newCompletion as completion, newSession as session, plain, type StoreFixture } from '../helpers/stores.js';

const toArray = async <T>(it: AsyncIterable<T>): Promise<T[]> => {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
};

const countCompletions = async (fx: StoreFixture): Promise<number> =>
  Number((await fx.sql<{ n: number | string }>('SELECT COUNT(*) AS n FROM completions'))[0]!.n);

forEachStore((fx) => {
  describe('sessions', () => {
    it('put / get / getByKey (timing-safe) / updateSession; only the key hash is stored', async () => {
      const s = await fx.open();
      const created = session();
      await s.writer.putSession(created);
      const { key, ...rec } = created;
      expect(await s.sessions.get(rec.id)).toEqual(rec);
      expect(await s.sessions.getByKey(key)).toEqual(rec);
      const stored = (await fx.sql(`SELECT * FROM sessions WHERE id = '${rec.id}'`))[0]!;
      expect(Object.keys(stored)).not.toContain('key');
      expect(JSON.stringify(stored)).not.toContain(key);
      expect(await s.sessions.getByKey(key.slice(0, -1) + (key.endsWith('0') ? '1' : '0'))).toBeNull();
      expect(await s.sessions.getByKey('')).toBeNull();
      expect(await s.sessions.get('nope')).toBeNull();
      await s.writer.updateSession(rec.id, { status: 'finished', reward: 0.5, finishedAt: 123, metadata: { a: [1] } });
      expect(await s.sessions.get(rec.id)).toEqual({ ...rec, status: 'finished', reward: 0.5, finishedAt: 123, metadata: { a: [1] } });
      await s.writer.updateSession(rec.id, { reward: null }); // explicit null clears, absent keeps
      expect(await s.sessions.get(rec.id)).toMatchObject({ reward: null, status: 'finished' });
      await expect(s.writer.updateSession('nope', { status: 'failed' })).rejects.toThrow(/unknown session/);
    });

    it('rejects a duplicate key', async () => {
      const s = await fx.open();
      const a = session();
      await s.writer.putSession(a);
      await expect(s.writer.putSession(session({ key: a.key }))).rejects.toThrow(/unique/i);
    });

    it('list filters, pages, and carries completion counts, token totals and custody', async () => {
      const s = await fx.open();
      const [a, b, c] = [session({ batchId: 'b1', createdAt: 1 }), session({ batchId: 'b1', createdAt: 2, status: 'finished' }), session({ batchId: 'b2', createdAt: 3 })];
      await Promise.all([a, b, c].map((x) => s.writer.putSession(x)));
      await Promise.all([0, 1, 2].map((i) => s.writer.putCompletion(completion(a.id, i, 5, i === 2 ? { status: 'incomplete', incompleteReason: 'missing-ids' } : {}))));
      await s.writer.putCompletion(completion(b.id, 0, 2));
      const all = await s.sessions.list();
      expect(all.map((r) => r.id)).toEqual([c.id, b.id, a.id]);
      expect(all.find((r) => r.id === a.id)).toMatchObject({ completionCount: 3, promptTokens: 15, outputTokens: 15, totalTokens: 30, custody: 'incomplete', incompleteCount: 1 });
      expect(all.find((r) => r.id === c.id)).toMatchObject({ completionCount: 0, totalTokens: 0, custody: 'complete', incompleteCount: 0 });
      expect((await s.sessions.list({ batchId: 'b1' })).map((r) => r.id)).toEqual([b.id, a.id]);
      expect((await s.sessions.list({ batchId: 'b1', status: 'active' })).map((r) => r.id)).toEqual([a.id]);
      expect((await s.sessions.list({ limit: 1, offset: 1 })).map((r) => r.id)).toEqual([b.id]);
      expect(await s.sessions.count()).toBe(3);
      expect(await s.sessions.count({ batchId: 'b1' })).toBe(2);
      expect(await s.sessions.count({ status: 'finished' })).toBe(1);
      expect(await s.sessions.getSummary(a.id)).toMatchObject({ id: a.id, completionCount: 3, metadata: { note: 'ü', n: 1 } });
      expect(await s.sessions.getSummary('nope')).toBeNull();
      expect(await s.completions.incompleteCalls(a.id)).toEqual([{ completionId: expect.any(String), reason: 'missing-ids', error: null }]);
    });

    it('modify: applies a patch, carries a refusal back unchanged, null for an unknown id; sees queued writes', async () => {
      const s = await fx.open();
      const a = session();
      void s.writer.putSession(a); // not awaited: modify commits queued writes first
      const done = await s.sessions.modify(a.id, (cur) => (cur.status === 'active' ? { patch: { status: 'finished', reward: 1, finishedAt: 9 } } : { refuse: cur.status }));
      expect(done).toEqual({ record: expect.objectContaining({ id: a.id, status: 'finished', reward: 1, finishedAt: 9 }) });
      const again = await s.sessions.modify(a.id, (cur) => (cur.status === 'active' ? { patch: { status: 'failed' } } : { refuse: `already ${cur.status}` }));
      expect(again).toEqual({ refused: 'already finished' });
      expect(await s.sessions.get(a.id)).toMatchObject({ status: 'finished', reward: 1 });
      expect(await s.sessions.modify('nope', () => ({ patch: { status: 'failed' } }))).toBeNull();
    });

    it('concurrent modifies of one session never lose an update', async () => {
      const s = await fx.open();
      const a = session({ metadata: { n: 0 } });
      await s.writer.putSession(a);
      const bump = () => s.sessions.modify(a.id, (cur) => ({ patch: { metadata: { n: (cur.metadata.n as number) + 1 } } }));
      await Promise.all(Array.from({ length: 20 }, bump));
      expect((await s.sessions.get(a.id))!.metadata).toEqual({ n: 20 });
    });

    it('markBatchSessionsInterrupted flips active batch sessions only (a node id narrows it to that node on Postgres)', async () => {
      const s = await fx.open({ nodeId: 'A' });
      const other = await fx.reopen({ nodeId: 'B' });
      const a = session({ batchId: 'b1' });
      const finished = session({ status: 'finished', finishedAt: 5, batchId: 'b1' });
      const manual = session();
      const onB = session({ batchId: 'b1' });
      await Promise.all([a, finished, manual].map((x) => s.writer.putSession(x)));
      await other.writer.putSession(onB);
      const scoped = await s.sessions.markBatchSessionsInterrupted({ now: 99, nodeId: 'A' });
      // SQLite: one process owns the file, a node id narrows nothing.
      expect(scoped).toBe(fx.kind === 'postgres' ? 1 : 2);
      expect(await s.sessions.get(a.id)).toMatchObject({ status: 'interrupted', finishedAt: 99 });
      expect(await s.sessions.get(finished.id)).toMatchObject({ status: 'finished', finishedAt: 5 });
      expect((await s.sessions.get(manual.id))!.status).toBe('active');
      expect((await s.sessions.get(onB.id))!.status).toBe(fx.kind === 'postgres' ? 'active' : 'interrupted');
      expect(await s.sessions.markBatchSessionsInterrupted()).toBe(fx.kind === 'postgres' ? 1 : 0);
      expect(await s.sessions.markBatchSessionsInterrupted()).toBe(0);
    });
  });

  describe('completions', () => {
    it('round-trips a record with 10k ids exactly, and one with nulls, an error and no ids', async () => {
      const s = await fx.open();
      const sess = session();
      await s.writer.putSession(sess);
      const big = completion(sess.id, 0, 10_000, {
        outputLogprobs: Float32Array.from({ length: 10_000 }, (_, i) => Math.fround(-Math.random() * 20 - i * 1e-6)),
        promptIds: Int32Array.from({ length: 10_000 }, () => (Math.random() * 151_936) | 0),
      });
      const empty = completion(sess.id, 1, 0, { status: 'error', error: 'engine died', response: null, usage: null, finishReason: null, timings: { queueMs: 0, ttftMs: null, totalMs: 3 }, retryOf: 'x' });
      await Promise.all([s.writer.putCompletion(big), s.writer.putCompletion(empty)]);
      const back = (await s.completions.get(big.id))!;
      expect(back.promptIds).toBeInstanceOf(Int32Array);
      expect(back.outputLogprobs).toBeInstanceOf(Float32Array);
      expect(back).toEqual(big);
      expect(await s.completions.get(empty.id)).toEqual(empty);
      expect(await s.completions.listBySession(sess.id)).toEqual([big, empty]);
      expect(await s.completions.get('nope')).toBeNull();
    });

    it('a second record under an acknowledged id is an error and leaves the first untouched', async () => {
      const s = await fx.open();
      const rec = completion('s', 0, 8);
      await s.writer.putCompletion(rec);
      await expect(s.writer.putCompletion({ ...rec, status: 'error', error: 'late failure', response: null })).rejects.toThrow(/UNIQUE|PRIMARY KEY/i);
      expect(await s.completions.get(rec.id)).toEqual(rec);
    });

    it('rejects a record whose logprobs and ids differ in length (and nothing else)', async () => {
      const s = await fx.open();
      const [r1, r2] = await Promise.allSettled([
        s.writer.putCompletion(completion('s', 0, 4, { outputLogprobs: new Float32Array(3) })),
        s.writer.putCompletion(completion('s', 1, 4)),
      ]);
      expect([r1.status, r2.status]).toEqual(['rejected', 'fulfilled']);
      expect(await s.completions.countBySession('s')).toBe(1);
    });

    it('listBySession orders by seq; reserveSeq never hands a seq out twice and follows committed and queued writes', async () => {
      const s = await fx.open();
      expect(await s.completions.reserveSeq('fresh')).toBe(0);
      await s.writer.putCompletion(completion('s', 1));
      await s.writer.putCompletion(completion('s', 0));
      expect((await s.completions.listBySession('s')).map((c) => c.seq)).toEqual([0, 1]);
      expect(await s.completions.countBySession('s')).toBe(2);
      const p = s.writer.putCompletion(completion('q', 4));
      expect(await s.completions.reserveSeq('q')).toBe(5); // queued, not committed yet
      await p;
      expect(await s.completions.reserveSeq('s')).toBe(2);
      expect(await s.completions.reserveSeq('s')).toBe(3);
      const many = await Promise.all(Array.from({ length: 10 }, () => s.completions.reserveSeq('c')));
      expect([...many].sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      const restarted = await fx.reopen();
      expect(await restarted.completions.reserveSeq('s')).toBe(2); // committed MAX(seq) + 1
    });

    it('findByBodyHash finds the latest committed or queued record with that hash', async () => {
      const s = await fx.open();
      const a = completion('s', 0);
      await s.writer.putCompletion(a, { bodyHash: 'h1' });
      expect((await s.completions.findByBodyHash('s', 'h1'))!.id).toBe(a.id);
      expect(await s.completions.findByBodyHash('s', 'h2')).toBeNull();
      expect(await s.completions.findByBodyHash('other', 'h1')).toBeNull();
      const b = completion('s', 1);
      const p = s.writer.putCompletion(b, { bodyHash: 'h2' });
      expect((await s.completions.findByBodyHash('s', 'h2'))!.id).toBe(b.id);
      await p;
      const c = completion('s', 2);
      await s.writer.putCompletion(c, { bodyHash: 'h1' });
      expect(plain((await s.completions.findByBodyHash('s', 'h1'))!)).toEqual(plain(c));
    });

    it('iterateAll streams by session then seq, with filters, while the writer commits; breaking early releases it', async () => {
      const s = await fx.open();
      const a = session({ id: 'ses_b', batchId: 'B' });
      const b = session({ id: 'ses_a', batchId: 'C' });
      await Promise.all([s.writer.putSession(a), s.writer.putSession(b)]);
      for (let i = 4; i >= 0; i--) await s.writer.putCompletion(completion(a.id, i, 4, { engineId: i % 2 ? 'sim-sglang' : 'sim-vllm' }));
      await s.writer.putCompletion(completion(b.id, 0));
      const it = s.completions.iterateAll({ batchId: 'B' })[Symbol.asyncIterator]();
      const first = await it.next();
      expect(first.done).toBe(false);
      await s.writer.putCompletion(completion(b.id, 1)); // commits while the export is open
      const rest: CompletionRecord[] = [];
      for (let r = await it.next(); !r.done; r = await it.next()) rest.push(r.value);
      expect([first.value as CompletionRecord, ...rest].map((c) => c.seq)).toEqual([0, 1, 2, 3, 4]);
      expect((await toArray(s.completions.iterateAll({ batchId: 'B', engineId: 'sim-sglang' }))).map((c) => c.seq)).toEqual([1, 3]);
      expect((await toArray(s.completions.iterateAll())).map((c) => `${c.sessionId}:${c.seq}`))
        .toEqual(['ses_a:0', 'ses_a:1', 'ses_b:0', 'ses_b:1', 'ses_b:2', 'ses_b:3', 'ses_b:4']);
      expect((await toArray(s.completions.iterateAll({ sessionId: b.id }))).length).toBe(2);
      for (let round = 0; round < 15; round++) {
        for await (const c of s.completions.iterateAll()) {
          expect(c.id).toBeTruthy();
          break;
        }
      }
      expect(await s.completions.countBySession(a.id)).toBe(5); // connections went back: the store still answers
    });
  });

  describe('delta storage', () => {
    let seed = 99;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff), seed);
    const ids = (n: number) => Int32Array.from({ length: n }, () => rnd() % 151_000);
    const cat = (...a: Int32Array[]) => { const r = new Int32Array(a.reduce((n, x) => n + x.length, 0)); let o = 0; for (const x of a) { r.set(x, o); o += x.length; } return r; };
    const text = (n: number) => Array.from({ length: n }, () => `tok${rnd() % 900}`).join(' ');
    const rec = (sid: string, seq: number, promptIds: Int32Array, outputIds: Int32Array, requestReceived: unknown, requestServed: unknown, over: Partial<CompletionRecord> = {}): CompletionRecord => ({
      ...completion(sid, seq, 0), id: `${sid}-${seq}`, requestReceived, requestServed, createdAt: seq, usage: null,
      response: { id: 'x', model: 'm', created: 1, message: { role: 'assistant', content: text(400), reasoning: null, tool_calls: [] }, finish_reason: 'stop', usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } },
      promptIds, outputIds, outputLogprobs: Float32Array.from(outputIds, (x) => -x / 1e6), ...over,
    });
    /** Each turn's request is the previous one plus the assistant turn and a tool result. */
    const agentSession = (sid: string, turns: number): CompletionRecord[] => {
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
    };

    it('stores a growing session as parent + suffix; every read path returns exactly what was written', async () => {
      const s = await fx.open();
      const recs = agentSession('s1', 12);
      recs.push(rec('s1', 12, recs[11]!.promptIds, ids(20), recs[11]!.requestReceived, recs[11]!.requestServed, { id: 's1-retry', retryOf: 's1-11' }));
      recs.push(rec('s1', 13, new Int32Array(0), new Int32Array(0), recs[11]!.requestReceived, null, { id: 's1-err', status: 'error', error: 'boom', response: null, outputLogprobs: new Float32Array(0) }));
      recs.push(rec('s1', 14, cat(recs[0]!.promptIds.subarray(0, 300), ids(40)), ids(10), { model: 'm', messages: [{ role: 'user', content: 'sub' }] }, null, { id: 's1-sub' }));
      recs.push(rec('s1', 15, cat(recs[5]!.promptIds, ids(50)), ids(10), { model: 'm', messages: [{ role: 'user', content: 'summary' }] }, null, { id: 's1-compact' }));
      // half one by one (a group each), half at once (one group: parents in the same statement)
      for (const r of recs.slice(0, 8)) await s.writer.putCompletion(r, { bodyHash: `h${r.id}` });
      await Promise.all(recs.slice(8).map((r) => s.writer.putCompletion(r, { bodyHash: `h${r.id}` })));

      const want = recs.map(plain);
      expect((await s.completions.listBySession('s1')).map(plain)).toEqual(want);
      expect((await toArray(s.completions.iterateAll({ sessionId: 's1' }))).map(plain)).toEqual(want);
      expect((await toArray(s.completions.iterateAll({ engineId: 'sim-vllm' }))).map(plain)).toEqual(want);
      for (const r of recs) expect(plain((await s.completions.get(r.id))!)).toEqual(plain(r));
      expect(plain((await s.completions.findByBodyHash('s1', 'hs1-7'))!)).toEqual(plain(recs[7]!));

      const rows = await fx.sql<{ id: string; parent_id: string | null; prompt_base: number; bytes: number | string }>(
        'SELECT id, parent_id, prompt_base, length(prompt_ids) AS bytes FROM completions ORDER BY seq');
      expect(rows[0]!.parent_id).toBeNull();
      for (let t = 1; t < 12; t++) {
        expect(rows[t]!.parent_id).toBe(`s1-${t - 1}`);
        expect(Number(rows[t]!.bytes)).toBe(4 * 200); // only the ids after the parent's tip
      }
      expect(rows.find((r) => r.id === 's1-retry')).toMatchObject({ parent_id: 's1-11', prompt_base: recs[11]!.promptIds.length });
      expect(rows.find((r) => r.id === 's1-compact')).toMatchObject({ parent_id: expect.any(String), prompt_base: recs[5]!.promptIds.length });
    });

    it('a filtered export decodes a row whose parent it left out', async () => {
      const s = await fx.open();
      const recs = agentSession('s4', 3).map((r, i) => ({ ...r, engineId: i === 1 ? 'other' : 'sim-vllm' }));
      for (const r of recs) await s.writer.putCompletion(r);
      expect((await toArray(s.completions.iterateAll({ engineId: 'sim-vllm' }))).map(plain)).toEqual([recs[0]!, recs[2]!].map(plain));
    });

    it('a new process finds the parent of its first write from the database', async () => {
      const recs = agentSession('s2', 4);
      const a = await fx.open();
      for (const r of recs.slice(0, 2)) await a.writer.putCompletion(r);
      await a.close();
      const b = await fx.reopen();
      for (const r of recs.slice(2)) await b.writer.putCompletion(r);
      expect((await fx.sql("SELECT parent_id FROM completions WHERE id = 's2-2'"))[0]).toEqual({ parent_id: 's2-1' });
      expect((await b.completions.listBySession('s2')).map(plain)).toEqual(recs.map(plain));
    });

    it('forgetSession lets the caches go; a session that goes on finds its parent in the database and keeps its seqs', async () => {
      const s = await fx.open();
      const recs = agentSession('s5', 3);
      expect(await s.completions.reserveSeq('s5')).toBe(0);
      await s.writer.putCompletion(recs[0]!);
      expect(await s.completions.reserveSeq('s5')).toBe(1);
      await s.writer.putCompletion(recs[1]!);
      s.completions.forgetSession('s5');
      expect(await s.completions.reserveSeq('s5')).toBe(2);
      await s.writer.putCompletion(recs[2]!);
      expect((await fx.sql("SELECT parent_id FROM completions WHERE id = 's5-2'"))[0]).toEqual({ parent_id: 's5-1' });
      expect((await s.completions.listBySession('s5')).map(plain)).toEqual(recs.map(plain));
    });

    it('a row whose parent failed to commit is written in full', async () => {
      const s = await fx.open();
      const recs = agentSession('s3', 3);
      await fx.sql(fx.kind === 'sqlite'
        ? `CREATE TRIGGER fail_parent BEFORE INSERT ON completions WHEN NEW.id = 's3-1' BEGIN SELECT RAISE(ABORT, 'injected'); END`
        : `CREATE FUNCTION fail_parent() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.id = 's3-1' THEN RAISE EXCEPTION 'injected'; END IF; RETURN NEW; END $$;
           CREATE TRIGGER fail_parent BEFORE INSERT ON completions FOR EACH ROW EXECUTE FUNCTION fail_parent()`);
      const results = await Promise.allSettled(recs.map((r) => s.writer.putCompletion(r)));
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect((await fx.sql("SELECT parent_id, prompt_base FROM completions WHERE id = 's3-2'"))[0]).toEqual({ parent_id: null, prompt_base: 0 });
      expect((await s.completions.listBySession('s3')).map(plain)).toEqual([recs[0]!, recs[2]!].map(plain));
    });
  });

  describe('custody', () => {
    const intent = (id: string, sessionId: string, seq: number, createdAt = 1000) => ({ id, sessionId, seq, dialect: 'openai-chat' as const, engineId: 'sim-vllm', replica: 'r1', createdAt });

    it('an intent goes with its record; a dropped one leaves nothing; one left over becomes a lost-in-crash incomplete call', async () => {
      const s = await fx.open();
      const sess = session();
      await s.writer.putSession(sess);
      const c = completion(sess.id, 0);
      await s.writer.putIntent(intent(c.id, sess.id, 0));
      await s.writer.putCompletion(c);
      await s.writer.putIntent(intent('refused', sess.id, 1));
      await s.writer.dropIntent('refused');
      // intent and record in one group
      const c2 = completion(sess.id, 2);
      await Promise.all([s.writer.putIntent(intent(c2.id, sess.id, 2)), s.writer.putCompletion(c2)]);
      expect(await fx.sql('SELECT id FROM call_intents')).toEqual([]);
      await s.writer.putIntent(intent('lost', sess.id, 3, 1000));
      await s.close();

      const after = await fx.reopen();
      expect(await after.completions.recoverDanglingIntents({ now: 1500 })).toEqual([{ id: 'lost', sessionId: sess.id }]);
      expect(await after.completions.recoverDanglingIntents()).toEqual([]);
      const lost = (await after.completions.get('lost'))!;
      expect(lost).toMatchObject({ status: 'incomplete', incompleteReason: 'lost-in-crash', seq: 3, replica: 'r1', timings: { queueMs: 0, ttftMs: null, totalMs: 500 }, createdAt: 1000 });
      expect(lost.promptIds.length).toBe(0);
      expect(await after.sessions.getSummary(sess.id)).toMatchObject({ custody: 'incomplete', incompleteCount: 1, completionCount: 3 });
      expect(await after.completions.incompleteCalls(sess.id)).toEqual([{ completionId: 'lost', reason: 'lost-in-crash', error: expect.stringMatching(/^lost-in-crash: /) }]);
    });

    it.runIf(fx.kind === 'postgres')('recovery with a node id takes only that node\'s intents and runs', async () => {
      const a = await fx.open({ nodeId: 'A' });
      const b = await fx.reopen({ nodeId: 'B' });
      const sa = session({ batchId: 'b' });
      const sb = session({ batchId: 'b' });
      await a.writer.putSession(sa);
      await b.writer.putSession(sb);
      await a.writer.putIntent(intent('ia', sa.id, 0));
      await b.writer.putIntent(intent('ib', sb.id, 0));
      const run = (sid: string): SessionRunRecord => ({ sessionId: sid, batchId: 'b', status: 'running', pid: 1, runToken: 't', workDir: null, outcome: null, exitCode: null, signal: null, durationMs: null, stdout: null, stderr: null, finalAnswer: null, evaluator: null, error: null, startedAt: 1, finishedAt: null });
      await a.runs.create(run(sa.id));
      await b.runs.create(run(sb.id));
      // B finds A dead and sweeps A's rows only.
      expect(await b.completions.recoverDanglingIntents({ nodeId: 'A' })).toEqual([{ id: 'ia', sessionId: sa.id }]);
      expect(await b.runs.markUnfinishedInterrupted({ nodeId: 'A' })).toBe(1);
      expect(await b.sessions.markBatchSessionsInterrupted({ nodeId: 'A' })).toBe(1);
      expect((await b.runs.get(sb.id))!.status).toBe('running');
      expect((await b.sessions.get(sb.id))!.status).toBe('active');
      expect(await fx.sql('SELECT id FROM call_intents')).toEqual([{ id: 'ib' }]);
      // Two survivors recovering the same dead node at once: each intent is recovered once.
      await a.writer.putIntent(intent('ia2', sa.id, 1));
      const [x, y] = await Promise.all([a.completions.recoverDanglingIntents({ nodeId: 'A' }), b.completions.recoverDanglingIntents({ nodeId: 'A' })]);
      expect([...x, ...y]).toEqual([{ id: 'ia2', sessionId: sa.id }]);
    });
  });

  describe('batches, runs, slices, engines, settings, rescores', () => {
    const batch = (id: string, over: Partial<BatchRecord> = {}): BatchRecord => ({
      id, status: 'queued', spec: { dataset: 'd', n: 2 }, taskIds: ['t1', 't2'], error: null, callbackUrl: null, callback: null,
      createdAt: 10, startedAt: null, finishedAt: null, ...over,
    });
    const run = (sessionId: string, over: Partial<SessionRunRecord> = {}): SessionRunRecord => ({
      sessionId, batchId: 'b1', status: 'running', pid: 42, runToken: 'tok', workDir: '/w', outcome: null, exitCode: null, signal: null,
      durationMs: null, stdout: 'out\u0000put', stderr: 'err', finalAnswer: 'x'.repeat(700), evaluator: null, error: null, startedAt: 5, finishedAt: null, ...over,
    });

    it('batches: create / get / list / update / modify / markUnfinishedInterrupted', async () => {
      const s = await fx.open();
      await s.batches.create(batch('b1', { callbackUrl: 'http://127.0.0.1:1/cb', callback: { status: 'pending', attempts: 0 } }));
      await s.batches.create(batch('b2', { createdAt: 20, status: 'running' }));
      await s.batches.create(batch('b3', { createdAt: 30, status: 'completed' }));
      expect(await s.batches.get('b1')).toEqual(batch('b1', { callbackUrl: 'http://127.0.0.1:1/cb', callback: { status: 'pending', attempts: 0 } }));
      expect(await s.batches.get('nope')).toBeNull();
      expect((await s.batches.list()).map((b) => b.id)).toEqual(['b3', 'b2', 'b1']);
      expect((await s.batches.list({ limit: 1, offset: 1 })).map((b) => b.id)).toEqual(['b2']);
      expect(await s.batches.update('b1', { status: 'running', startedAt: 11, callback: { status: 'delivered', attempts: 1, deliveredAt: 12 } }))
        .toMatchObject({ status: 'running', startedAt: 11, callback: { status: 'delivered', attempts: 1, deliveredAt: 12 }, error: null });
      expect(await s.batches.update('nope', { status: 'failed' })).toBeNull();
      const end = (b: BatchRecord) => (b.status === 'running' ? { patch: { status: 'completed' as const, finishedAt: 50 } } : { refuse: b.status });
      expect(await s.batches.modify('b3', end)).toEqual({ refused: 'completed' });
      expect(await s.batches.modify('b1', end)).toEqual({ record: expect.objectContaining({ id: 'b1', status: 'completed', finishedAt: 50 }) });
      expect(await s.batches.modify('nope', end)).toBeNull();
      const ended = await Promise.all([s.batches.modify('b2', end), s.batches.modify('b2', end)]);
      expect(ended.filter((r) => r && 'record' in r).length).toBe(1); // ending twice at once ends it once
      await s.batches.create(batch('b4'));
      expect(await s.batches.markUnfinishedInterrupted(77)).toBe(1);
      expect(await s.batches.get('b4')).toMatchObject({ status: 'interrupted', finishedAt: 77, error: 'Rollgate stopped while the batch was running' });
    });

    it('runs and batch slices', async () => {
      const s = await fx.open();
      const [a, b] = [session({ batchId: 'b1', taskId: 't1', createdAt: 1 }), session({ batchId: 'b1', taskId: 't2', createdAt: 2 })];
      await Promise.all([s.writer.putSession(a), s.writer.putSession(b)]);
      await s.writer.putCompletion(completion(a.id, 0, 3));
      await s.runs.create(run(a.id));
      await s.runs.create(run(b.id, { startedAt: 6 }));
      await s.runs.create(run(b.id, { startedAt: 7, pid: 43 })); // create again replaces
      expect(await s.runs.get(b.id)).toEqual(run(b.id, { startedAt: 7, pid: 43, stdout: fx.kind === 'postgres' ? 'out\uFFFDput' : 'out\u0000put' }));
      expect(await s.runs.get('nope')).toBeNull();
      expect((await s.runs.listByBatch('b1')).map((r) => r.sessionId)).toEqual([a.id, b.id]);
      const verdict = { type: 'exact', reward: 1, output: 'ok', traceRewards: { x: 0.5 } };
      expect(await s.runs.update(a.id, { status: 'done', outcome: 'ok', exitCode: 0, evaluator: verdict, finishedAt: 9 }))
        .toMatchObject({ status: 'done', outcome: 'ok', exitCode: 0, evaluator: verdict, finishedAt: 9, pid: 42 });
      expect(await s.runs.update('nope', { status: 'done' })).toBeNull();
      expect((await s.runs.listRunning()).map((r) => r.sessionId)).toEqual([b.id]);

      expect((await s.slices.sessionsOfTasks('b1', ['t1'])).map((x) => [x.id, x.completionCount])).toEqual([[a.id, 1]]);
      expect((await s.slices.sessionsOfTasks('b1', ['t1', 't2', 'zz'])).map((x) => x.id)).toEqual([a.id, b.id]);
      const light = await s.slices.runs('b1', [a.id]);
      expect(light).toEqual([{ ...(await s.runs.get(a.id))!, pid: null, runToken: null, workDir: null, stdout: null, stderr: null, finalAnswer: 'x'.repeat(600) }]);
      expect((await s.slices.runs('b1')).length).toBe(2);

      expect(await s.runs.markUnfinishedInterrupted({ now: 99 })).toBe(1);
      expect(await s.runs.get(b.id)).toMatchObject({ status: 'interrupted', finishedAt: 99, error: 'Rollgate stopped while the agent was running' });
    });

    it('engines and settings', async () => {
      const s = await fx.open();
      await s.engines.upsert({ id: 'e2', kind: 'vllm' } as { id: string }, 2);
      await s.engines.upsert({ id: 'e1', kind: 'sglang' } as { id: string }, 1);
      await s.engines.upsert({ id: 'e2', kind: 'vllm', model: 'm' } as { id: string }, 3);
      expect(await s.engines.list()).toEqual([{ id: 'e1', config: { id: 'e1', kind: 'sglang' }, updatedAt: 1 }, { id: 'e2', config: { id: 'e2', kind: 'vllm', model: 'm' }, updatedAt: 3 }]);
      expect(await s.engines.delete('e1')).toBe(true);
      expect(await s.engines.delete('e1')).toBe(false);
      expect(await s.settings.get('policyVersion')).toBeUndefined();
      await s.settings.set('policyVersion', 3);
      await s.settings.set('pause', { paused: true, reason: 'x' });
      await s.settings.set('policyVersion', 4);
      expect(await s.settings.get('policyVersion')).toBe(4);
      expect(await s.settings.get('pause')).toEqual({ paused: true, reason: 'x' });
    });

    it('rescores: a run and its traces with per-token arrays', async () => {
      const s = await fx.open();
      const overall = { histogram: [{ lo: 0, hi: 1, count: 2 }] } as unknown as RescoreRecord['overall'];
      const rs = (id: string, over: Partial<RescoreRecord> = {}): RescoreRecord => ({ id, createdAt: 1, engine: 'B', engineKind: 'vllm', sourceEngine: 'A', builder: 'prefix-merge', batchId: null, sessionId: null, sessions: 1, traces: 2, overall, errors: [], ...over });
      const tr = (traceId: string, sessionId: string): RescoreTraceRecord => ({
        traceId, sessionId, sourceEngine: 'A', replica: 'r', completionIds: ['c1', 'c2'], positions: Int32Array.of(0, 5), tokenIds: Int32Array.of(7, -1),
        sampled: Float32Array.of(-0.5, -1.25), rescored: Float32Array.of(-0.25, Math.fround(-1e-7)), dropped: 1, summary: null, error: null,
      });
      await s.rescores.put(rs('r1', { batchId: 'b1', createdAt: 1 }), [tr('t1', 'sx'), tr('t2', 'sy')]);
      await s.rescores.put(rs('r2', { sessionId: 'sy', createdAt: 2 }), [tr('t3', 'sy')]);
      expect(await s.rescores.get('r1')).toEqual(rs('r1', { batchId: 'b1', createdAt: 1 }));
      expect(await s.rescores.get('nope')).toBeNull();
      expect((await s.rescores.list()).map((r) => r.id)).toEqual(['r2', 'r1']);
      expect((await s.rescores.list({ batchId: 'b1' })).map((r) => r.id)).toEqual(['r1']);
      expect((await s.rescores.list({ sessionId: 'sy' })).map((r) => r.id)).toEqual(['r2', 'r1']);
      expect((await s.rescores.list({ limit: 1 })).map((r) => r.id)).toEqual(['r2']);
      expect(await s.rescores.traces('r1')).toEqual([tr('t1', 'sx'), tr('t2', 'sy')]);
      expect(await s.rescores.trace('r1', 't2')).toEqual(tr('t2', 'sy'));
      expect(await s.rescores.trace('r1', 'zz')).toBeNull();
      expect(await s.rescores.tracesOfSession('r1', 'sy')).toEqual([tr('t2', 'sy')]);
      await expect(s.rescores.put(rs('r3'), [tr('t', 'a'), tr('t', 'a')])).rejects.toThrow(); // one transaction: nothing of it stays
      expect(await s.rescores.get('r3')).toBeNull();
    });
  });

  describe('writer', () => {
    it('group-commits 1000 concurrent puts in far fewer than 1000 transactions', async () => {
      const s = await fx.open();
      const t0 = s.writer.stats.transactions;
      const recs = Array.from({ length: 1000 }, (_, i) => completion('s', i, 16));
      await Promise.all(recs.map((r) => s.writer.putCompletion(r)));
      const txns = s.writer.stats.transactions - t0;
      expect(txns).toBeGreaterThan(0);
      expect(txns).toBeLessThanOrEqual(10);
      expect(await s.completions.countBySession('s')).toBe(1000);
      expect(s.writer.pending).toBe(0);
      expect((await s.completions.get(recs[777]!.id))!.outputIds).toEqual(recs[777]!.outputIds);
    });

    it('acknowledges a write only after its commit, and commits what waited once the store is back', async () => {
      const s = await fx.open({ unavailableAfterMs: 20_000 });
      const restore = await fx.cutOff();
      let acked = false;
      const rec = completion('s', 0);
      const p = s.writer.putCompletion(rec).then(() => { acked = true; });
      await new Promise((r) => setTimeout(r, 300));
      expect(acked).toBe(false);
      expect(s.writer.pending).toBe(1);
      expect(await countCompletions(fx)).toBe(0);
      await restore();
      await p;
      expect(await countCompletions(fx)).toBe(1);
      expect(await s.completions.get(rec.id)).toEqual(rec);
    });

    it('a failing write rejects only itself; the rest of the group commits', async () => {
      const s = await fx.open();
      const dup = session();
      await s.writer.putSession(dup);
      const fresh = session();
      const c1 = completion(fresh.id, 0);
      const failedBefore = s.writer.stats.failed;
      const results = await Promise.allSettled([
        s.writer.putSession(fresh),
        s.writer.putSession(session({ key: dup.key })), // duplicate key → constraint error
        s.writer.putCompletion(c1),
        s.writer.updateSession('missing', { status: 'finished' }),
        s.writer.updateSession(fresh.id, { status: 'finished', reward: 1 }),
      ]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected', 'fulfilled']);
      expect(await s.sessions.get(fresh.id)).toMatchObject({ status: 'finished', reward: 1 });
      expect(await s.completions.get(c1.id)).not.toBeNull();
      expect(s.writer.stats.failed - failedBefore).toBe(2);
    });

    it('flush() commits now; close() flushes and refuses more; a reopened store has everything', async () => {
      const s = await fx.open();
      const sess = session();
      void s.writer.putSession(sess);
      const recs = Array.from({ length: 50 }, (_, i) => completion(sess.id, i, 100));
      const ps = recs.map((r) => s.writer.putCompletion(r));
      await s.writer.flush();
      expect(await s.completions.countBySession(sess.id)).toBe(50);
      const late = completion(sess.id, 50);
      const lp = s.writer.putCompletion(late);
      void s.writer.updateSession(sess.id, { status: 'finished', reward: 0.25, finishedAt: 7 });
      await s.close();
      await lp;
      await Promise.all(ps);
      expect(s.writer.isClosed).toBe(true);
      await expect(s.writer.putCompletion(completion(sess.id, 99))).rejects.toThrow(/closed/);
      await s.close(); // idempotent

      const r = await fx.reopen();
      const { key: _key, ...stored } = sess;
      expect(await r.sessions.get(sess.id)).toEqual({ ...stored, status: 'finished', reward: 0.25, finishedAt: 7 });
      const back = await r.completions.listBySession(sess.id);
      expect(back.length).toBe(51);
      expect(back[10]).toEqual(recs[10]);
      expect(back[50]).toEqual(late);
    });

    it('a store that cannot take writes rejects them with StoreUnavailableError after a bounded wait, then recovers', async () => {
      const s: Store = await fx.open({ unavailableAfterMs: 300 });
      await s.writer.putCompletion(completion('s', 0));
      const restore = await fx.cutOff();
      const t0 = Date.now();
      const err = await s.writer.putCompletion(completion('s', 1)).then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(StoreUnavailableError);
      expect((err as StoreUnavailableError).statusCode).toBe(503);
      expect((err as StoreUnavailableError).retryAfterSec).toBeGreaterThanOrEqual(1);
      expect(Date.now() - t0).toBeLessThan(15_000);
      await restore();
      const ok = completion('s', 2);
      await s.writer.putCompletion(ok);
      expect((await s.completions.listBySession('s')).map((c) => c.seq)).toEqual([0, 2]);
    });
  });
});
