// Three `rollgate serve` nodes on one real Postgres (issue 15, DESIGN §12), one shared sim engine over loopback:
// - a pause issued on node A holds calls on nodes B and C (they never reach the engine) until A resumes;
// - a batch of 60 builtin-harness samples runs on all three; `kill -9` of one node mid-batch: every completion
//   an agent received from that node is in the store, the dead node's samples run again on the others, each
//   sample counts once, the batch completes;
// - a call for a dead node's session is refused with a clear error by the others;
// - a session's calls reach its owner from any node; node A's event stream carries the other nodes' events;
// - `GET /api/export` from every live node gives identical bytes.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimEngine, type SimEngine } from '../../src-main/engines/sim/index.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { freePort, startPostgres, type PostgresServer } from '../helpers/postgres.js';

const MODEL = 'Qwen/Qwen3-8B';

interface Node { id: string; url: string; proc: ChildProcess; exited: Promise<unknown>; log: () => string }

async function until<T>(what: string, fn: () => Promise<T | null | undefined | false>, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => null);
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function api(base: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(base + path, body === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}

async function chat(openaiBase: string, messages: unknown[]): Promise<{ status: number; json: any }> {
  const res = await fetch(`${openaiBase}/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, messages, max_tokens: 64 }),
  });
  return { status: res.status, json: await res.json().catch(() => null) };
}

describe('three nodes on one Postgres', () => {
  let server: PostgresServer;
  let url: string;
  let db: pg.Pool;
  let sim: SimEngine;
  let dir: string;
  const nodes: Node[] = [];

  async function startNode(id: string): Promise<Node> {
    const port = await freePort();
    const dataDir = join(dir, id);
    const proc = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'src-main/cli.ts'), 'serve',
      '--store', url, '--node-id', id, '--port', String(port), '--advertise-url', `http://127.0.0.1:${port}`,
      '--data-dir', dataDir, '--no-sim', '--topology', join(dir, 'topology.yaml'), '--concurrency', '4'], {
      cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', ROLLGATE_AGENTS_DIR: join(dataDir, 'agents') },
    });
    let out = '';
    proc.stdout!.on('data', (d) => { out += d; });
    proc.stderr!.on('data', (d) => { out += d; });
    const exited = new Promise((r) => proc.on('exit', r));
    const node: Node = { id, url: `http://127.0.0.1:${port}`, proc, exited, log: () => out };
    nodes.push(node);
    await until(`node ${id} to listen`, async () => /Rollgate listening on/.test(out) || (proc.exitCode !== null && Promise.reject(new Error(out))), 90_000)
      .catch((err) => { throw new Error(`node ${id} did not start: ${(err as Error).message}\n${out}`); });
    return node;
  }

  beforeAll(async () => {
    server = await startPostgres();
    url = await server.createDatabase();
    db = new pg.Pool({ connectionString: url, max: 3 });
    sim = await startSimEngine({ flavor: 'vllm', seed: 11, skill: 1, maxModelLen: 131072, ttftMs: 40, perTokenMs: 4 });
    dir = mkdtempSync(join(tmpdir(), 'rollgate-cluster-'));
    writeFileSync(join(dir, 'topology.yaml'), JSON.stringify({ engines: [{ id: 'shared', kind: 'vllm', replicas: [sim.url], model: MODEL, mode: 'chat', tokenizer: 'builtin:qwen3' }] }));
    // One at a time: the first creates the schemas, the others find them.
    for (const id of ['n1', 'n2', 'n3']) await startNode(id);
  }, 240_000);

  afterAll(async () => {
    for (const n of nodes) if (n.proc.exitCode === null && n.proc.signalCode === null) n.proc.kill('SIGTERM');
    await Promise.race([Promise.all(nodes.map((n) => n.exited)), new Promise((r) => setTimeout(r, 15_000))]);
    for (const n of nodes) if (n.proc.exitCode === null && n.proc.signalCode === null) { n.proc.kill('SIGKILL'); await n.exited; }
    await db?.end();
    await sim?.close();
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('every node sees the cluster: nodes, engines, load', async () => {
    const [a] = nodes;
    const top = await until('three live nodes', async () => {
      const t = await api(a!.url, '/api/topology');
      return t.nodes.filter((n: any) => n.alive).length === 3 && t;
    });
    expect(top.mode).toBe('cluster');
    expect(top.store.kind).toBe('postgres');
    expect(top.nodes.map((n: any) => n.id)).toEqual(['n1', 'n2', 'n3']);
    for (const n of top.nodes) {
      expect(n.engines).toEqual([expect.objectContaining({ id: 'shared', kind: 'vllm', replicas: 1 })]);
      expect(n.load).toEqual(expect.objectContaining({ inFlightCalls: 0 }));
    }
    expect((await api(nodes[2]!.url, '/api/nodes')).self).toBe('n3');
    // What cannot work across nodes is refused up front, not ignored.
    const masked = await fetch(`${a!.url}/api/batches`, { method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tasks: [{ id: 'x', prompt: 'p' }], harness: 'builtin', engine: 'shared', maxMaskedFraction: 0.1 }) });
    expect(masked.status).toBe(400);
    expect((await masked.json()).error.message).toMatch(/maxMaskedFraction is not available/);
  });

  it('a pause issued on node A holds calls on nodes B and C until A resumes; a session\'s calls reach its owner from any node; the policy version reaches every node', async () => {
    const [a, b, c] = nodes;
    const sessions = await Promise.all([b!, c!].map((n) => api(n.url, '/api/sessions', { engine: 'shared' })));
    const paused = await api(a!.url, '/api/engines/pause', { mode: 'queue', timeoutMs: 5000 });
    expect(paused.nodes.map((n: any) => [n.id, n.drained])).toEqual([['n1', true], ['n2', true], ['n3', true]]);
    expect(paused.notDrained).toEqual([]);
    const engineCalls = () => sim.stats().byRoute['/v1/chat/completions'] ?? 0;
    const before = engineCalls();
    const calls = sessions.map((s) => chat(s.urls.openai, [{ role: 'user', content: 'What is 2 + 3?' }]));
    const settled = calls.map(() => false);
    calls.forEach((p, i) => { void p.finally(() => { settled[i] = true; }); });
    // Both nodes hold the calls in their pause gates: the gate counts them, and the engine never hears of them.
    for (const n of [b!, c!]) await until(`a held call on ${n.id}`, async () => (await api(n.url, '/api/engines')).pause.queued === 1);
    expect(settled).toEqual([false, false]);
    expect(engineCalls()).toBe(before);
    expect((await api(c!.url, '/api/engines')).pause.mode).toBe('queue');
    await api(a!.url, '/api/engines/resume', {});
    const results = await Promise.all(calls);
    expect(results.map((r) => r.status)).toEqual([200, 200]);
    expect(engineCalls()).toBe(before + 2);
    // A call for a session another node owns is served by its owner, whichever node it reaches.
    const viaA = await fetch(`${a!.url}/s/${sessions[0].key}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'What is 1 + 1?' }], max_tokens: 16 }),
    });
    expect(viaA.status).toBe(200);
    expect(viaA.headers.get('x-rollgate-served-by')).toBe('n2');
    // A caller cannot talk a node into serving a session it does not own by claiming the call was forwarded.
    const spoofed = await fetch(`${a!.url}/s/${sessions[0].key}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-rollgate-forwarded-by': 'n1' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'What is 2 + 2?' }], max_tokens: 16 }),
    });
    expect(spoofed.status).toBe(200);
    expect(spoofed.headers.get('x-rollgate-served-by')).toBe('n2');
    const finish = await fetch(`${a!.url}/api/sessions/${sessions[0].id}/finish`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ reward: 1 }) });
    expect(finish.status).toBe(200);
    expect(finish.headers.get('x-rollgate-served-by')).toBe('n2');
    expect((await api(c!.url, `/api/sessions/${sessions[0].id}`))).toEqual(expect.objectContaining({ status: 'finished', reward: 1, completionCount: 3 }));
    // A policy version set on one node stamps the completions of the others.
    await api(a!.url, '/api/policy-version', { version: 7 });
    await until('the version on n3', async () => (await api(c!.url, '/api/engines')).policyVersion === 7);
  });

  it('kill -9 of a node mid-batch: nothing an agent received is lost, its samples run elsewhere, each counts once, the batch completes', async () => {
    const [a, b, victim] = nodes;
    // Node A's live event stream, to see that it carries the other nodes' events too.
    const sse = new AbortController();
    const seen = new Set<string>();
    const streamed = fetch(`${a!.url}/api/events`, { signal: sse.signal }).then(async (res) => {
      const decoder = new TextDecoder();
      let buf = '';
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buf += decoder.decode(chunk, { stream: true });
        for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
          const data = /^data: (.*)$/m.exec(buf.slice(0, i))?.[1];
          buf = buf.slice(i + 2);
          if (data) { const ev = JSON.parse(data); if (ev.type === 'session') seen.add(ev.id); }
        }
      }
    }).catch(() => undefined);
    const tasks = Array.from({ length: 20 }, (_, i) => ({ id: `t${i}`, prompt: `What is ${i} + ${i + 1}?`, expected: String(2 * i + 1) }));
    const { id: batchId } = await api(a!.url, '/api/batches', { tasks, n: 3, harness: 'builtin', engine: 'shared', maxTurns: 4, timeoutMs: 120_000 });

    // Agents of our own on the victim: each records every answer it got, until its node is gone.
    const mine = await Promise.all([0, 1, 2].map(() => api(victim!.url, '/api/sessions', { engine: 'shared' })));
    const received = new Map<string, string[]>(mine.map((s) => [s.id, []]));
    let stopAgents = false;
    const agents = mine.map(async (s) => {
      const messages: unknown[] = [{ role: 'user', content: 'Count with me.' }];
      while (!stopAgents) {
        const r = await chat(s.urls.openai, messages).catch(() => null);
        if (!r || r.status !== 200) break;
        received.get(s.id)!.push(r.json.id);
        messages.push(r.json.choices[0].message, { role: 'user', content: 'And again.' });
        if (messages.length > 40) messages.splice(1, 2);
      }
    });

    // Mid-batch: some samples done, and the victim running some of its own.
    await until('the victim mid-batch', async () => {
      const view = await api(a!.url, `/api/batches/${batchId}`);
      const running = await db.query(`SELECT count(*)::int AS n FROM rollgate_batch_samples WHERE batch_id = $1 AND node_id = 'n3' AND status = 'running'`, [batchId]);
      return view.counts.done >= 8 && running.rows[0].n >= 2 && [...received.values()].every((r) => r.length >= 2);
    }, 120_000);
    const killedAt = Date.now();
    victim!.proc.kill('SIGKILL');
    await victim!.exited;
    // What the victim held when it died (nobody recovers it for 5 s, so the ledger still says).
    const held = (await db.query(`SELECT task_id, sample_index, session_id FROM rollgate_batch_samples WHERE batch_id = $1 AND node_id = 'n3' AND status = 'running'`, [batchId])).rows;
    expect(held.length).toBeGreaterThanOrEqual(1);
    stopAgents = true;
    await Promise.all(agents);

    // A survivor finds it dead within the bound (heartbeat 1 s, dead after 5 s) and recovers it.
    await until('n3 declared dead', async () => (await api(b!.url, '/api/nodes')).nodes.find((n: any) => n.id === 'n3')?.status === 'dead', 30_000);
    console.log(`cluster failover: node n3 declared dead and its samples queued again ${Date.now() - killedAt} ms after kill -9`);

    const view = await until('the batch to complete', async () => {
      const v = await api(b!.url, `/api/batches/${batchId}`);
      return v.status !== 'running' && v;
    }, 240_000);
    expect(view.status).toBe('completed');
    // Each sample counts once: one current attempt per (task, sample index), all ended; earlier attempts superseded.
    expect(view.counts.total).toBe(60);
    expect(view.counts.finished + view.counts.failed).toBe(60);
    expect(view.counts.interrupted).toBe(0);
    expect(view.counts.running).toBe(0);
    for (const t of view.tasks) {
      const current = t.samples.filter((s: any) => !s.superseded);
      expect(current.map((s: any) => s.sampleIndex).sort()).toEqual([0, 1, 2]);
      for (const s of t.samples.filter((x: any) => x.superseded)) expect(s.status).toBe('interrupted');
    }
    // Each sample the dead node held counted once: as its own attempt when it had ended the sample just before
    // dying (its session finished or failed), else run again on another node (its session interrupted).
    let reran = 0;
    for (const h of held) {
      const row = (await db.query(`SELECT status, node_id, attempt FROM rollgate_batch_samples WHERE batch_id = $1 AND task_id = $2 AND sample_index = $3`,
        [batchId, h.task_id, h.sample_index])).rows[0];
      const session = h.session_id ? (await db.query(`SELECT status FROM sessions WHERE id = $1`, [h.session_id])).rows[0].status : null;
      if (session === 'finished' || session === 'failed') {
        expect(row).toEqual({ status: 'done', node_id: 'n3', attempt: 1 });
      } else {
        expect([null, 'interrupted']).toContain(session);
        expect(row.status).toBe('done');
        expect(row.node_id).not.toBe('n3');
        expect(row.attempt).toBeGreaterThan(1);
        reran++;
      }
    }
    console.log(`cluster failover: the victim held ${held.length} sample(s); ${reran} ran again elsewhere, ${held.length - reran} had ended and counted as its own`);
    const ledger = await db.query(`SELECT node_id, count(*)::int AS n FROM rollgate_batch_samples WHERE batch_id = $1 AND status = 'done' GROUP BY node_id`, [batchId]);
    expect(ledger.rows.reduce((a: number, r: any) => a + r.n, 0)).toBe(60);
    // Every node worked the queue (the victim's share is what it held when it died, above).
    expect(ledger.rows.map((r: any) => r.node_id)).toEqual(expect.arrayContaining(['n1', 'n2']));
    // Its sessions were interrupted, never lost; none stays active.
    const own = await db.query(`SELECT status, batch_id FROM sessions WHERE node_id = 'n3'`);
    expect(own.rows.filter((r: any) => r.batch_id && r.status === 'active')).toEqual([]);

    // Node A's event stream showed the sessions node B ran.
    const onB = await db.query(`SELECT id FROM sessions WHERE node_id = 'n2' AND batch_id = $1`, [batchId]);
    expect(onB.rows.length).toBeGreaterThan(0);
    await until('n2\'s session events on n1', async () => onB.rows.every((r: any) => seen.has(r.id)), 10_000);
    sse.abort();
    await streamed;

    // Every answer an agent received from the dead node is in the store.
    for (const [sessionId, ids] of received) {
      expect(ids.length).toBeGreaterThanOrEqual(2);
      const { completions } = await api(a!.url, `/api/sessions/${sessionId}/completions`);
      const stored = new Set(completions.filter((c: any) => c.response).map((c: any) => `chatcmpl-${c.response.id}`));
      for (const id of ids) expect(stored.has(id), `${id} of ${sessionId}`).toBe(true);
    }

    // A call for the dead node's session, sent to a survivor, gets a clear error (its owner is gone).
    const orphan = await chat(`${a!.url}/s/${mine[0].key}/v1`, [{ role: 'user', content: 'hello?' }]);
    expect(orphan.status).toBe(503);
    expect(orphan.json.error.message).toMatch(/belongs to node n3/);

    // Any live node exports the same bytes.
    const exports = await Promise.all([a!, b!].map(async (n) => Buffer.from(await (await fetch(`${n.url}/api/export`)).arrayBuffer())));
    expect(exports[0]!.length).toBeGreaterThan(1000);
    expect(exports[0]!.equals(exports[1]!)).toBe(true);
  }, 420_000);

  it('a batch cancelled on one node stops its samples on every node', async () => {
    const [a, b] = nodes;
    const tasks = Array.from({ length: 6 }, (_, i) => ({ id: `c${i}`, prompt: 'wait', expected: 'x' }));
    const { id: batchId } = await api(a!.url, '/api/batches', { tasks, harness: 'command', command: 'sleep 60', engine: 'shared', timeoutMs: 120_000 });
    await until('samples running on n1 and n2', async () => {
      const r = await db.query(`SELECT count(DISTINCT node_id)::int AS n FROM rollgate_batch_samples WHERE batch_id = $1 AND status = 'running'`, [batchId]);
      const s = await db.query(`SELECT count(*)::int AS n FROM sessions WHERE node_id = 'n2' AND batch_id = $1 AND status = 'active'`, [batchId]);
      return r.rows[0].n === 2 && s.rows[0].n >= 1;
    }, 60_000);
    const view = await api(a!.url, `/api/batches/${batchId}/cancel`, {});
    expect(view.status).toBe('cancelled');
    // n2's agents are stopped too (long before their 60 s sleep ends), and so are the canceller's own: every
    // session of the batch ends interrupted, on whichever node it ran.
    await until('the batch\'s samples stopped on every node', async () => {
      const s = await db.query(`SELECT count(*)::int AS n FROM sessions WHERE batch_id = $1 AND status = 'active'`, [batchId]);
      return s.rows[0].n === 0;
    }, 20_000);
    const after = await db.query(`SELECT status FROM sessions WHERE batch_id = $1`, [batchId]);
    expect(after.rows.map((r: any) => r.status).filter((s: string) => s !== "interrupted")).toEqual([]);
  }, 120_000);

  it('a node stopped cleanly mid-batch hands its samples back: they finish on the others and the node reads as stopped, not dead', async () => {
    const [a, b] = nodes;
    // Samples long enough to be mid-run on both survivors when one of them stops.
    const tasks = Array.from({ length: 8 }, (_, i) => ({ id: `g${i}`, prompt: 'wait', expected: 'x' }));
    const { id: batchId } = await api(a!.url, '/api/batches', { tasks, harness: 'command', command: 'sleep 2', engine: 'shared', timeoutMs: 60_000 });
    await until('n2 running samples', async () => {
      const r = await db.query(`SELECT count(*)::int AS n FROM rollgate_batch_samples WHERE batch_id = $1 AND node_id = 'n2' AND status = 'running'`, [batchId]);
      return r.rows[0].n >= 1;
    }, 60_000);
    b!.proc.kill('SIGTERM');
    await b!.exited;
    expect(b!.proc.exitCode).toBe(0);
    const view = await until('the batch to complete on n1', async () => {
      const v = await api(a!.url, `/api/batches/${batchId}`);
      return v.status !== 'running' && v;
    }, 120_000);
    expect(view.status).toBe('completed');
    expect(view.counts.finished + view.counts.failed).toBe(8);
    const handedBack = await db.query(`SELECT count(*)::int AS n FROM rollgate_batch_samples WHERE batch_id = $1 AND attempt > 1`, [batchId]);
    expect(handedBack.rows[0].n).toBeGreaterThanOrEqual(1);
    const own = await db.query(`SELECT status FROM sessions WHERE node_id = 'n2' AND batch_id = $1`, [batchId]);
    expect(own.rows.filter((r: any) => r.status === 'active')).toEqual([]);
    const n2 = (await api(a!.url, '/api/nodes')).nodes.find((n: any) => n.id === 'n2');
    expect(n2.status).toBe('stopped');
  }, 180_000);
});
