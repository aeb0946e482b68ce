// `npm run bench -- --only cluster` (issue 15): what the shared store costs and what more nodes buy, in one run.
//   (1) recorded completions/s, one node on SQLite vs one node on Postgres, same canned engine and load;
//   (2) recorded completions/s, one vs three nodes on one Postgres (the load split over the nodes' own sessions);
//   (3) failover: kill -9 of a node in the middle of a batch, until each of its running samples has started
//       again on another node (p50 over several kills).
// Every process (Postgres, engine, nodes, load generators) is started here and stopped at the end. All of it
// shares this machine's cores, so (2) shows the cost of coordination, not the capacity of more machines.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort, startPostgres, type PostgresServer } from '../test/helpers/postgres.js';
import type { LoadRequest, LoadResult } from './load.js';
import { LoadClient, startNode, type Proc } from './proc.js';
import { percentile } from './stats.js';

const MODEL = 'Qwen/Qwen3-8B';

export interface ClusterBenchSpec {
  /** Closed-loop concurrency per node. */
  concurrency: number;
  durationMs: number;
  /** Sessions per node (requests go round robin over them). */
  sessions: number;
  /** Kills measured for failover (0 skips it). */
  kills: number;
  /** Samples of the failover batch. */
  samples: number;
}

export interface ThroughputPoint { store: 'sqlite' | 'postgres'; nodes: number; okPerSec: number; recordedPerSec: number; errors: number; latencyP50Ms: number | null }

function requests(keys: string[]): LoadRequest[] {
  return keys.map((key) => ({
    path: `/s/${key}/v1/chat/completions`, headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Say hi.' }], max_tokens: 32, stream: false }),
  }));
}

async function createSessions(url: string, n: number): Promise<string[]> {
  const keys: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await fetch(`${url}/api/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ engine: 'canned' }) });
    if (res.status !== 201) throw new Error(`POST ${url}/api/sessions: HTTP ${res.status} ${await res.text()}`);
    keys.push(((await res.json()) as { key: string }).key);
  }
  return keys;
}

/** Completions committed since `since`, counted through the API of one node (the store is what is counted). */
async function recordedSince(nodeUrl: string, sessionIds: string[]): Promise<number> {
  let n = 0;
  for (const id of sessionIds) {
    const s = (await (await fetch(`${nodeUrl}/api/sessions/${id}`)).json()) as { completionCount: number };
    n += s.completionCount;
  }
  return n;
}

async function sessionIdsOf(url: string, keys: string[]): Promise<string[]> {
  // The session list is newest first; the bench's own sessions are the only ones on a fresh store.
  const body = (await (await fetch(`${url}/api/sessions?limit=1000`)).json()) as { sessions: Array<{ id: string }> };
  return body.sessions.slice(0, keys.length).map((s) => s.id);
}

/** A node's own folder (agents, run folders) under the bench's temp folder, whichever store it uses. */
let benchDir = '';

function serveArgs(topology: string, store: { dataDir: string } | { url: string; nodeId: string; port: number }): string[] {
  const base = ['serve', '--no-sim', '--topology', topology];
  if ('dataDir' in store) return [...base, '--data-dir', store.dataDir, '--port', '0'];
  const advertise = `http://127.0.0.1:${store.port}`;
  return [...base, '--store', store.url, '--node-id', store.nodeId, '--advertise-url', advertise, '--port', String(store.port),
    '--data-dir', join(benchDir, `node-${store.nodeId}-${store.port}`)];
}

async function measure(nodes: Proc[], spec: ClusterBenchSpec, label: ThroughputPoint['store']): Promise<ThroughputPoint> {
  const perNode = await Promise.all(nodes.map(async (n) => {
    const keys = await createSessions(n.url, spec.sessions);
    return { node: n, keys, ids: await sessionIdsOf(n.url, keys), client: new LoadClient() };
  }));
  try {
    // Warm-up (JIT, keep-alive, store connections), not measured.
    await Promise.all(perNode.map((p) => p.client.run<LoadResult>({ target: p.node.url, requests: requests(p.keys), stream: false, dialect: 'openai', mode: 'closed', concurrency: 8, durationMs: 600 })));
    const before = (await Promise.all(perNode.map((p) => recordedSince(p.node.url, p.ids)))).reduce((a, b) => a + b, 0);
    const t0 = Date.now();
    const results = await Promise.all(perNode.map((p) => p.client.run<LoadResult>({
      target: p.node.url, requests: requests(p.keys), stream: false, dialect: 'openai', mode: 'closed', concurrency: spec.concurrency, durationMs: spec.durationMs,
    })));
    const wall = (Date.now() - t0) / 1000;
    const after = (await Promise.all(perNode.map((p) => recordedSince(p.node.url, p.ids)))).reduce((a, b) => a + b, 0);
    const latencies = results.map((r) => r.latency.p50).filter((x): x is number => typeof x === 'number');
    return {
      store: label, nodes: nodes.length, okPerSec: results.reduce((a, r) => a + r.okPerSec, 0), recordedPerSec: (after - before) / wall,
      errors: results.reduce((a, r) => a + r.errors, 0), latencyP50Ms: latencies.length ? latencies.reduce((a, b) => a + b, 0) / latencies.length : null,
    };
  } finally {
    await Promise.all(perNode.map((p) => p.client.close()));
  }
}


async function until<T>(what: string, fn: () => Promise<T | null | undefined | false>, ms: number): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => null);
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function postJson(url: string, body: unknown): Promise<any> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`POST ${url}: HTTP ${res.status} ${await res.text()}`);
  return res.json();
}

/**
 * declaredDeadMs: kill → a survivor marks the node dead; requeuedMs: → every sample it was running is back on the
 * queue (or already claimed elsewhere); rerunMs: → every one of them is running again on another node (this one
 * also waits for a free slot: the survivors are busy with the rest of the batch).
 */
/** Samples each failover node runs at once (three nodes: more slots than the failover batch has samples). */
const FAILOVER_NODE_CONCURRENCY = 8;

export interface FailoverKill { node: string; runningAtKill: number; declaredDeadMs: number; requeuedMs: number; rerunMs: number }

/**
 * Kills (SIGKILL) a node that is running samples, then waits until every sample it was running has been claimed
 * again by another node (a later attempt, running or done). Three nodes stay up: each kill is followed by a fresh node.
 */
async function measureFailover(server: PostgresServer, topology: string, spec: ClusterBenchSpec, procs: Proc[], log: (s: string) => void): Promise<FailoverKill[]> {
  const url = await server.createDatabase('bench_failover');
  const db = new pg.Pool({ connectionString: url, max: 2 });
  const ready = { ready: /Rollgate listening on (http:\/\/\S+)/ };
  const start = async (id: string) => {
    const p = await startNode(`rollgate-${id}`, 'src-main/cli.ts', [...serveArgs(topology, { url, nodeId: id, port: await freePort() }), '--concurrency', String(FAILOVER_NODE_CONCURRENCY)], ready);
    procs.push(p);
    return { id, proc: p };
  };
  const nodes = [await start('f1'), await start('f2'), await start('f3')];
  const kills: FailoverKill[] = [];
  try {
    // Fewer samples than the three nodes have slots, so a dead node's samples find a free slot at once (the time
    // measured is the failover's, not a wait for other samples to end); slow enough to outlast every kill.
    const tasks = Array.from({ length: Math.ceil(spec.samples / 2) }, (_, i) => ({ id: `t${i}`, prompt: `What is ${i} + ${i + 1}?`, expected: String(2 * i + 1) }));
    const { id: batchId } = await postJson(`${nodes[0]!.proc.url}/api/batches`, { tasks, n: 2, harness: 'builtin', engine: 'slow', maxTurns: 8, timeoutMs: 600_000 });
    for (let k = 0; k < spec.kills; k++) {
      // The node running the most samples; killed at once.
      const victim = await until('a node running samples', async () => {
        const r = await db.query(`SELECT node_id, count(*)::int AS n FROM rollgate_batch_samples WHERE batch_id = $1 AND status = 'running' GROUP BY node_id ORDER BY n DESC`, [batchId]);
        const row = r.rows.find((x: { node_id: string; n: number }) => x.n >= 1 && nodes.some((n) => n.id === x.node_id));
        return row ? nodes.find((n) => n.id === row.node_id)! : null;
      }, 120_000);
      const running = (await db.query(`SELECT task_id, sample_index, attempt FROM rollgate_batch_samples WHERE batch_id = $1 AND node_id = $2 AND status = 'running'`, [batchId, victim.id])).rows as Array<{ task_id: string; sample_index: number; attempt: number }>;
      const killedAt = Date.now();
      await victim.proc.stop('SIGKILL');
      procs.splice(procs.indexOf(victim.proc), 1);
      nodes.splice(nodes.indexOf(victim), 1);
      const declared = await until('the victim declared dead', async () => {
        const r = await db.query(`SELECT status FROM rollgate_nodes WHERE id = $1`, [victim.id]);
        return r.rows[0]?.status === 'dead' ? Date.now() : null;
      }, 60_000);
      const requeued = await until('its samples back on the queue', async () => {
        const r = await db.query(`SELECT task_id, sample_index, attempt, node_id, status FROM rollgate_batch_samples WHERE batch_id = $1 AND (node_id = $2 OR attempt > 1)`, [batchId, victim.id]);
        const now = new Map(r.rows.map((x: { task_id: string; sample_index: number; attempt: number; node_id: string | null; status: string }) => [`${x.task_id}/${x.sample_index}`, x]));
        return running.every((s) => {
          const cur = now.get(`${s.task_id}/${s.sample_index}`);
          return cur && (cur.status !== 'running' || cur.node_id !== victim.id);
        }) ? Date.now() : null;
      }, 60_000);
      let last = '';
      const rerun = await until('its samples claimed elsewhere', async () => {
        const r = await db.query(`SELECT task_id, sample_index, attempt, node_id, status FROM rollgate_batch_samples WHERE batch_id = $1`, [batchId]);
        last = JSON.stringify(running.map((s) => r.rows.find((x: { task_id: string; sample_index: number }) => x.task_id === s.task_id && x.sample_index === s.sample_index)));
        const now = new Map(r.rows.map((x: { task_id: string; sample_index: number; attempt: number; node_id: string | null; status: string }) => [`${x.task_id}/${x.sample_index}`, x]));
        return running.every((s) => {
          const cur = now.get(`${s.task_id}/${s.sample_index}`);
          // Finished by the victim just before the kill, or running (or done) again elsewhere.
          return cur && (cur.status === 'done' || (cur.attempt > s.attempt && cur.node_id !== victim.id && cur.status === 'running'));
        }) ? Date.now() : null;
      }, 120_000).catch((err: Error) => { throw new Error(`${err.message}; the samples it was running: ${last}`); });
      kills.push({ node: victim.id, runningAtKill: running.length, declaredDeadMs: declared - killedAt, requeuedMs: requeued - killedAt, rerunMs: rerun - killedAt });
      log(`cluster: kill ${k + 1}/${spec.kills} of ${victim.id} (${running.length} running): dead after ${declared - killedAt} ms, back on the queue after ${requeued - killedAt} ms, running again after ${rerun - killedAt} ms`);
      nodes.push(await start(`f${4 + k}`));
    }
    await postJson(`${nodes[0]!.proc.url}/api/batches/${batchId}/cancel`, {}).catch(() => undefined);
  } finally {
    await db.end();
  }
  return kills;
}

export async function runClusterBench(spec: ClusterBenchSpec, log: (s: string) => void): Promise<Record<string, unknown>> {
  const tmp = mkdtempSync(join(tmpdir(), 'rollgate-cluster-bench-'));
  benchDir = tmp;
  const procs: Proc[] = [];
  let server: PostgresServer | null = null;
  const stop = async (p: Proc) => { await p.stop('SIGTERM').catch(() => undefined); procs.splice(procs.indexOf(p), 1); };
  try {
    const listening = /listening on (http:\/\/\S+)/;
    const [enginePort, slowPort] = [await freePort(), await freePort()];
    const engine = await startNode('canned', 'bench/canned-engine.ts', ['--port', String(enginePort)], { ready: listening });
    procs.push(engine);
    // The failover batch's engine: slow enough that a node is always running samples when it is killed.
    const slow = await startNode('slow-sim', 'src-main/cli.ts', ['sim', '--flavor', 'vllm', '--port', String(slowPort), '--ttft-ms', '200', '--per-token-ms', '40'], { ready: listening });
    procs.push(slow);
    const topology = join(tmp, 'topology.yaml');
    writeFileSync(topology, [
      'engines:',
      `  - { id: canned, kind: vllm, replicas: ["${engine.url}"], model: "${MODEL}", mode: chat }`,
      `  - { id: slow, kind: vllm, replicas: ["${slow.url}"], model: "${MODEL}", mode: chat, tokenizer: "builtin:qwen3" }`,
      '',
    ].join('\n'));
    server = await startPostgres();
    const ready = { ready: /Rollgate listening on (http:\/\/\S+)/ };

    log('cluster: one node on SQLite');
    const sqlite = await startNode('rollgate-sqlite', 'src-main/cli.ts', serveArgs(topology, { dataDir: join(tmp, 'sqlite') }), ready);
    procs.push(sqlite);
    const sqlitePoint = await measure([sqlite], spec, 'sqlite');
    await stop(sqlite);
    log(`cluster: sqlite ${sqlitePoint.recordedPerSec.toFixed(0)} recorded/s`);

    log('cluster: one node on Postgres');
    const oneUrl = await server.createDatabase('bench_one');
    const one = await startNode('rollgate-pg-1', 'src-main/cli.ts', serveArgs(topology, { url: oneUrl, nodeId: 'a', port: await freePort() }), ready);
    procs.push(one);
    const onePoint = await measure([one], spec, 'postgres');
    await stop(one);
    log(`cluster: postgres, 1 node ${onePoint.recordedPerSec.toFixed(0)} recorded/s`);

    log('cluster: three nodes on one Postgres');
    const threeUrl = await server.createDatabase('bench_three');
    const three: Proc[] = [];
    for (const id of ['a', 'b', 'c']) {
      const p = await startNode(`rollgate-pg-${id}`, 'src-main/cli.ts', serveArgs(topology, { url: threeUrl, nodeId: id, port: await freePort() }), ready);
      procs.push(p);
      three.push(p);
    }
    // The same total offered concurrency as one node, split over three.
    const threePoint = await measure(three, { ...spec, concurrency: Math.max(1, Math.round(spec.concurrency / 3)) }, 'postgres');
    for (const p of three) await stop(p);
    log(`cluster: postgres, 3 nodes ${threePoint.recordedPerSec.toFixed(0)} recorded/s`);

    let failover: Record<string, unknown> | null = null;
    if (spec.kills > 0) {
      log(`cluster: failover, ${spec.kills} kills`);
      const kills = await measureFailover(server, topology, spec, procs, log);
      const sorted = (f: (k: FailoverKill) => number) => kills.map(f).sort((a, b) => a - b);
      const [dead, requeued, rerun] = [sorted((k) => k.declaredDeadMs), sorted((k) => k.requeuedMs), sorted((k) => k.rerunMs)];
      failover = {
        kills, declaredDeadP50Ms: percentile(dead, 50), requeuedP50Ms: percentile(requeued, 50), requeuedMaxMs: requeued.at(-1) ?? null,
        rerunP50Ms: percentile(rerun, 50), rerunMaxMs: rerun.at(-1) ?? null,
      };
    }
    return {
      failover,
      throughput: [sqlitePoint, onePoint, threePoint],
      ratios: {
        postgresOverSqlite: onePoint.recordedPerSec / Math.max(1e-9, sqlitePoint.recordedPerSec),
        threeOverOneNode: threePoint.recordedPerSec / Math.max(1e-9, onePoint.recordedPerSec),
      },
      note: 'all processes share this machine; three nodes measure coordination cost, not added machines',
    };
  } finally {
    for (const p of [...procs].reverse()) await p.stop('SIGKILL').catch(() => undefined);
    await server?.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}


// `node --import tsx bench/cluster-bench.ts '<spec json>'`: the result as JSON on stdout, progress on stderr.
if (process.argv[1]?.endsWith('cluster-bench.ts')) {
  const spec = JSON.parse(process.argv[2] ?? '{}') as Partial<ClusterBenchSpec>;
  runClusterBench({ concurrency: 64, durationMs: 4000, sessions: 32, kills: 5, samples: 16, ...spec }, (s) => process.stderr.write(`${s}\n`))
    .then((r) => process.stdout.write(`${JSON.stringify(r)}\n`))
    .catch((err: Error) => { process.stderr.write(`${err.stack ?? err.message}\n`); process.exitCode = 1; });
}
