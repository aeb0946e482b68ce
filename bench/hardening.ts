// `npx tsx bench/hardening.ts [--only streams,dblock,intent,turns]`: the issue-18 figures, as JSON on stdout and in
// bench/results/hardening-<timestamp>.json. Run it on two checkouts (before and after a change) to compare:
//   streams — RSS of `rollgate serve` while 10 agents stream 100k-token answers and never read them (item 8)
//   dblock  — another connection holds the database's write lock for 6 s: how long /api/health waits at worst,
//             and what agents get meanwhile (item 9)
//   intent  — the sim reading a task that holds one 100k-character word (item 10)
//   turns   — memory the gateway still holds after 100 sessions ran and finished (item 11)
// Every server runs on loopback and is stopped at the end. Not part of `npm test`.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startStreamEngine } from '../test/helpers/stream-engine.js';
import { ROOT, rss, rssSampler, startNode, stopAll } from './proc.js';

const argv = process.argv.slice(2);
const ONLY = (() => { const i = argv.indexOf('--only'); return i >= 0 ? new Set((argv[i + 1] ?? '').split(',')) : null; })();
const phase = (name: string) => !ONLY || ONLY.has(name);
const MODEL = 'Qwen/Qwen3-8B';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (s: string) => process.stderr.write(`${s}\n`);

async function post(url: string, body: unknown): Promise<any> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return res.json();
}

async function startServe(dataDir: string, extra: string[]) {
  return startNode('rollgate', 'src-main/cli.ts', ['serve', '--data-dir', dataDir, '--port', '0', ...extra], { ready: /Rollgate listening on (http:\/\/\S+)/ });
}

/**
 * Item 8: agents that send a streaming request and then stop reading their socket. The engine (in this process)
 * streams 10k tokens of 4,000 characters each (40 MB per answer, more than loopback's socket buffers hold) and
 * waits for its socket to drain, so `engineTokensWritten` shows how much of the answers Rollgate read.
 */
async function streams(tmp: string) {
  const CLIENTS = 10;
  const TOKENS = 10_000;
  const STREAM_WINDOW_MS = 30_000; // long enough, on a busy 2-core machine, for Rollgate to read every answer in full
  const engine = await startStreamEngine({ tokens: TOKENS, wordChars: 4000 });
  const topology = join(tmp, 'topology.yaml');
  writeFileSync(topology, `engines:\n  - id: big\n    kind: vllm\n    replicas: [${engine.url}]\n    model: ${MODEL}\n    mode: chat\n    tokenizer: builtin:qwen3\n`);
  const server = await startServe(join(tmp, 'streams'), ['--no-sim', '--topology', topology]);
  const keys: string[] = [];
  for (let i = 0; i < CLIENTS; i++) keys.push((await post(`${server.url}/api/sessions`, { engine: 'big' })).key);
  await sleep(500);
  const idle = rss(server.pid);
  const sampler = rssSampler(server.pid, 100);
  const { port } = new URL(server.url);
  const sockets = keys.map((key) => {
    const body = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Write a long story.' }], max_tokens: TOKENS, stream: true });
    const s = connect(Number(port), '127.0.0.1');
    s.pause(); // never read: the kernel buffers fill, then whatever Rollgate keeps reading piles up in its memory
    s.write(`POST /s/${key}/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    return s;
  });
  await sleep(STREAM_WINDOW_MS);
  const peak = sampler.stop();
  const written = engine.written();
  for (const s of sockets) s.destroy();
  await server.stop();
  await engine.close();
  return {
    clients: CLIENTS, tokensPerAnswer: TOKENS, bytesPerAnswerMB: (TOKENS * 4000) / 1e6, windowMs: STREAM_WINDOW_MS,
    engineTokensWritten: written, idleRssMB: idle / 1e6, peakRssMB: peak / 1e6, growthMB: (peak - idle) / 1e6,
  };
}

/** Item 9: an outside connection holds the write lock while agents keep calling. */
async function dblock(tmp: string) {
  const HOLD_MS = 6000;
  const dataDir = join(tmp, 'dblock');
  const server = await startServe(dataDir, []);
  const session = await post(`${server.url}/api/sessions`, { engine: 'sim-vllm' });
  const chat = () => fetch(`${server.url}/s/${session.key}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'What is 2+3?' }], max_tokens: 64 }),
  }).then(async (r) => ({ status: r.status, retryAfter: r.headers.get('retry-after'), body: (await r.text()).slice(0, 200) }));
  await chat(); // warm: tokenizer loaded, first write done

  const locker = new Database(join(dataDir, 'rollgate.sqlite'));
  locker.exec('BEGIN IMMEDIATE');
  const lockedAt = performance.now();
  let worstHealthMs = 0;
  let pings = 0;
  let pinging = true;
  const pinger = (async () => {
    while (pinging) {
      const t = performance.now();
      await fetch(`${server.url}/api/health`).then((r) => r.arrayBuffer());
      worstHealthMs = Math.max(worstHealthMs, performance.now() - t);
      pings++;
      await sleep(50);
    }
  })();
  const calls: Array<Promise<{ status: number; retryAfter: string | null; body: string; ms: number }>> = [];
  for (let i = 0; i < 4; i++) {
    await sleep(400);
    const t = performance.now();
    calls.push(chat().then((r) => ({ ...r, ms: performance.now() - t })));
  }
  await sleep(Math.max(0, HOLD_MS - (performance.now() - lockedAt)));
  locker.exec('COMMIT');
  locker.close();
  const results = await Promise.all(calls);
  pinging = false;
  await pinger;
  const after = await chat();
  await server.stop();
  const statuses: Record<string, number> = {};
  for (const r of results) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
  return {
    lockHeldMs: HOLD_MS, worstHealthLatencyMs: worstHealthMs, healthPings: pings, agentStatuses: statuses,
    agentWorstMs: Math.max(...results.map((r) => r.ms)), retryAfter: results.map((r) => r.retryAfter), sample: results[0]?.body,
    statusAfterRelease: after.status,
  };
}

/** Item 10: the sim reads a task holding one 100k-character word. */
async function intent() {
  const { readIntent } = await import('../src-main/engines/sim/intent.js');
  const word = 'a'.repeat(100_000);
  readIntent('warm up: how many lines are in notes.txt?');
  const t = performance.now();
  readIntent(`Please look at ${word} and tell me what it is.`);
  return { wordChars: word.length, readIntentMs: performance.now() - t };
}

/**
 * Item 11: what the gateway's per-session turn cache still holds after 100 sessions ran 3 turns each (long
 * prompts) and finished: sessions kept and their estimated bytes (token arrays plus everything else reachable
 * from a kept turn, as JSON), read from the cache object itself so the same measure works on older code; and,
 * more coarsely, the process's live heap plus array buffers after a full GC, against the same figure before.
 * Run with --expose-gc.
 */
async function turns(tmp: string) {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('turns needs node --expose-gc (npx tsx --expose-gc bench/hardening.ts)');
  const { createApp } = await import('../src-main/app.js');
  const { SessionTurnCache } = await import('../src-main/gateway/session-cache.js');
  const caches = new Set<object>();
  const remember = SessionTurnCache.prototype.remember;
  SessionTurnCache.prototype.remember = function (this: object, ...args: Parameters<typeof remember>) { caches.add(this); return remember.apply(this as never, args); };
  const app = await createApp({ dataDir: join(tmp, 'turns'), port: 0, sim: true });
  const api = (path: string, body: unknown) => post(app.url + path, body);
  const filler = Array.from({ length: 400 }, (_, i) => `line ${i}: the quick brown fox jumps over the lazy dog`).join('\n');
  const run = async (key: string, turnsPerSession: number) => {
    const messages: Array<{ role: string; content: string }> = [{ role: 'system', content: filler }];
    for (let t = 0; t < turnsPerSession; t++) {
      messages.push({ role: 'user', content: `Question ${t}: what is ${t}+2?` });
      const r = await api(`/s/${key}/v1/chat/completions`, { model: MODEL, messages, max_tokens: 64 });
      messages.push({ role: 'assistant', content: r.choices?.[0]?.message?.content ?? '' });
    }
  };
  const warm = await api('/api/sessions', { engine: 'sim-vllm' });
  await run(warm.key, 3);
  await api(`/api/sessions/${warm.id}/finish`, {});
  await sleep(200);
  gc(); gc();
  const held = () => { const m = process.memoryUsage(); return m.heapUsed + m.arrayBuffers; };
  const base = held();
  const SESSIONS = 100;
  for (let i = 0; i < SESSIONS; i++) {
    const s = await api('/api/sessions', { engine: 'sim-vllm' });
    await run(s.key, 3);
    await api(`/api/sessions/${s.id}/finish`, {});
  }
  await sleep(500);
  gc(); gc();
  const after = held();
  const cache = cacheContents(caches);
  await app.close();
  SessionTurnCache.prototype.remember = remember;
  return { sessions: SESSIONS, turnsPerSession: 3, cacheSessionsHeld: cache.sessions, cacheMB: cache.bytes / 1e6, heldAfterFinishMB: (after - base) / 1e6 };
}

/** Sessions and estimated bytes in the turn caches seen (older code kept `turns: Map<id, Turn[]>`, newer `sessions: Map<id, {turns}>`). */
function cacheContents(caches: Set<object>): { sessions: number; bytes: number } {
  let sessions = 0;
  let bytes = 0;
  const noArrays = (_k: string, v: unknown) => (ArrayBuffer.isView(v) ? undefined : v);
  for (const c of caches as Set<{ turns?: Map<string, unknown[]>; sessions?: Map<string, { turns: unknown[] }> }>) {
    const lists = c.sessions ? [...c.sessions.values()].map((e) => e.turns) : [...(c.turns?.values() ?? [])];
    sessions += lists.length;
    for (const turn of lists.flat() as Array<{ capture: Record<string, unknown> }>) {
      for (const v of Object.values(turn.capture)) if (ArrayBuffer.isView(v)) bytes += v.byteLength;
      bytes += 2 * JSON.stringify(turn, noArrays).length;
    }
  }
  return { sessions, bytes };
}

async function main() {
  const tmp = mkdtempSync(join(tmpdir(), 'rollgate-hardening-'));
  const report: Record<string, unknown> = { at: new Date().toISOString() };
  try {
    if (phase('intent')) { log('intent…'); report.intent = await intent(); }
    if (phase('turns')) { log('turns…'); report.turns = await turns(tmp); }
    if (phase('dblock')) { log('dblock…'); report.dblock = await dblock(tmp); }
    if (phase('streams')) { log('streams…'); report.streams = await streams(tmp); }
  } finally {
    await stopAll();
    rmSync(tmp, { recursive: true, force: true });
  }
  const dir = join(ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `hardening-${report.at as string}.json`.replace(/:/g, '-')), `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
}

await main();
process.exit(0);
