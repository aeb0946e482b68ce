// SQLite vs Postgres under the same load, in one run (issue 15): concurrent agent sessions each doing what the
// gateway does per call — reserve a seq, commit the call intent, then commit the completion (its context
// growing turn by turn, so delta storage is on) — then an export reading everything back. The Postgres server
// is a private throwaway one (test/helpers/postgres.ts: loopback, fsync off like the test server — so the
// figure is the store's own cost, not the disk's; SQLite runs with synchronous=NORMAL as shipped).
// Spec as JSON in argv[2], result as JSON on stdout.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CompletionRecord } from '../src-main/core/types.js';
import { openStore, type Store } from '../src-main/store/index.js';
import { openPostgresStore } from '../src-main/store/postgres/index.js';
import { startPostgres } from '../test/helpers/postgres.js';

interface Spec { sessions: number; turns: number; firstPrompt: number; outputTokens: number; toolTokens: number }

let seed = 7;
const rand = () => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed; };
const ids = (n: number) => Int32Array.from({ length: n }, () => rand() % 151_000);

async function session(store: Store, s: number, spec: Spec): Promise<number> {
  const id = `ses_${String(s).padStart(5, '0')}`;
  await store.writer.putSession({ id, key: `key-${s}-${rand()}`, engineId: 'bench', harness: null, taskId: null, batchId: 'b', metadata: {}, status: 'active', reward: null, createdAt: Date.now(), finishedAt: null });
  let prompt = ids(spec.firstPrompt);
  const messages: Array<{ role: string; content: string }> = [{ role: 'user', content: 'fix the bug' }];
  let tokens = 0;
  for (let t = 0; t < spec.turns; t++) {
    const seq = await store.completions.reserveSeq(id);
    const cid = `${id}-${seq}`;
    await store.writer.putIntent({ id: cid, sessionId: id, seq, dialect: 'openai-chat', engineId: 'bench', createdAt: Date.now() });
    const out = ids(spec.outputTokens);
    const rec: CompletionRecord = {
      id: cid, sessionId: id, seq, dialect: 'openai-chat', engineId: 'bench', replica: 'r', policyVersion: 0,
      requestReceived: { model: 'm', messages: [...messages] }, requestServed: { model: 'm', prompt: 'served' }, response: null,
      finishReason: 'stop', usage: null, timings: { queueMs: 0, ttftMs: 1, totalMs: 2 }, status: 'ok', error: null, retryOf: null, createdAt: Date.now(),
      promptIds: prompt, outputIds: out, outputLogprobs: Float32Array.from(out, (x) => -x / 1e6),
    };
    await store.writer.putCompletion(rec, { bodyHash: `h${cid}` });
    tokens += prompt.length + out.length;
    messages.push({ role: 'assistant', content: `step ${t}` }, { role: 'tool', content: `output ${rand()}`.repeat(20) });
    const next = new Int32Array(prompt.length + out.length + spec.toolTokens);
    next.set(prompt);
    next.set(out, prompt.length);
    next.set(ids(spec.toolTokens), prompt.length + out.length);
    prompt = next;
  }
  return tokens;
}

async function measure(store: Store, spec: Spec) {
  const t0 = performance.now();
  const tokens = (await Promise.all(Array.from({ length: spec.sessions }, (_, s) => session(store, s, spec)))).reduce((a, b) => a + b, 0);
  const writeMs = performance.now() - t0;
  const completions = spec.sessions * spec.turns;
  const t1 = performance.now();
  let read = 0;
  for await (const c of store.completions.iterateAll()) read += c.promptIds.length > 0 ? 1 : 0;
  const exportMs = performance.now() - t1;
  if (read !== completions) throw new Error(`${store.kind}: read back ${read} of ${completions} completions`);
  return {
    completions, tokens, writeMs, exportMs,
    completionsPerSec: completions / (writeMs / 1000), tokensPerSec: tokens / (writeMs / 1000),
    exportCompletionsPerSec: completions / (exportMs / 1000), transactions: store.writer.stats.transactions,
  };
}

export async function storesBench(spec: Spec) {
  const dir = mkdtempSync(join(tmpdir(), 'rollgate-stores-bench-'));
  const pg = await startPostgres();
  try {
    const sqliteStore = openStore({ dataDir: dir });
    const sqlite = await measure(sqliteStore, spec);
    await sqliteStore.close();
    const pgStore = await openPostgresStore({ url: await pg.createDatabase() });
    const postgres = await measure(pgStore, spec);
    await pgStore.close();
    return {
      ...spec, sqlite, postgres,
      writeRatio: postgres.completionsPerSec / sqlite.completionsPerSec,
      exportRatio: postgres.exportCompletionsPerSec / sqlite.exportCompletionsPerSec,
    };
  } finally {
    await pg.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  storesBench(JSON.parse(process.argv[2] ?? '{}') as Spec).then((r) => { process.stdout.write(JSON.stringify(r)); process.exit(0); }, (e) => { console.error(e); process.exit(1); });
}
