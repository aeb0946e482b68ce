// Many nodes on one Postgres (issue 15), in one run, on loopback:
// - throughput: recorded completions/s through 1 node and through 3 nodes (`rollgate serve --store postgres://…`),
//   the same agent load (concurrent sessions, each one call after another, spread over the nodes) against one
//   canned engine; the figure is the count committed in Postgres over the run.
// - failover: `kill -9` of a node running batch samples, repeated; for each kill, how long until a survivor
//   declared it dead (its samples queued again) and until the first of its samples runs again on another node.
// Spec as JSON in argv[2], result as JSON on stdout (progress on stderr).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startNode, stopAll, type Proc } from './proc.js';
import { startPostgres, freePort, type PostgresServer } from '../test/helpers/postgres.js';

interface Spec { sessions: number; runMs: number; kills: number }
const spec: Spec = { sessions: 48, runMs: 8000, kills: 5, ...JSON.parse(process.argv[2] ?? '{}') };
const MODEL = 'Qwen/Qwen3-8B';
const log = (m: string) => process.stderr.write(`cluster: ${m}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function post(url: string, body: unknown): Promise<any> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  return res.json();
}

async function until<T>(what: string, fn: () => Promise<T | null | undefined | false>, ms: number, everyMs = 25): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => null);
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s.length ? s[Math.floor((s.length - 1) / 2)]! : NaN; };

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'rollgate-cluster-bench-'));
  let server: PostgresServer | null = null;
  try {
    server = await startPostgres();
    const engine = await startNode('canned', 'bench/canned-engine.ts', ['--port', '0'], { ready: /listening on (http:\/\/\S+)/ });
    writeFileSync(join(dir, 'topology.yaml'), JSON.stringify({ engines: [{ id: 'bench', kind: 'vllm', replicas: [engine.url], model: MODEL, mode: 'chat', tokenizer: 'builtin:qwen3' }] }));

    const startCluster = async (url: string, ids: string[], concurrency = 4): Promise<Proc[]> => {
      const nodes: Proc[] = [];
      for (const id of ids) nodes.push(await startServe(url, id, concurrency));
      return nodes;
    };
    const startServe = async (url: string, id: string, concurrency: number): Promise<Proc> => {
      const port = await freePort();
      return startNode(id, 'src-main/cli.ts', ['serve', '--store', url, '--node-id', id, '--port', String(port), '--advertise-url', `http://127.0.0.1:${port}`,
        '--data-dir', join(dir, id), '--no-sim', '--topology', join(dir, 'topology.yaml'), '--concurrency', String(concurrency)],
      { ready: /Rollgate listening on (http:\/\/\S+)/, timeoutMs: 120_000, env: { ROLLGATE_AGENTS_DIR: join(dir, 'agents') } });
    };

    // ---- throughput: the same load through 1 node and through 3 ----
    const throughput: Record<string, { nodes: number; completions: number; seconds: number; completionsPerSec: number }> = {};
    for (const count of [1, 3]) {
      const url = await server.createDatabase(`tp_${count}`);
      const nodes = await startCluster(url, Array.from({ length: count }, (_, i) => `tp${count}-${i + 1}`));
      const sessions = await Promise.all(Array.from({ length: spec.sessions }, (_, i) => post(`${nodes[i % count]!.url}/api/sessions`, { engine: 'bench' })));
      const db = new pg.Pool({ connectionString: url, max: 2 });
      const counted = async () => Number((await db.query(`SELECT count(*)::int AS n FROM completions WHERE status = 'ok'`)).rows[0].n);
      const base = await counted();
      const t0 = performance.now();
      const end = Date.now() + spec.runMs;
      await Promise.all(sessions.map(async (s) => {
        while (Date.now() < end) {
          const res = await fetch(`${s.urls.openai}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'What is the likely cause?' }], max_tokens: 32 }) });
          await res.arrayBuffer();
        }
      }));
      const seconds = (performance.now() - t0) / 1000;
      const completions = (await counted()) - base;
      throughput[`nodes${count}`] = { nodes: count, completions, seconds, completionsPerSec: completions / seconds };
      log(`${count} node(s): ${completions} completions in ${seconds.toFixed(1)} s = ${(completions / seconds).toFixed(0)}/s`);
      await db.end();
      for (const n of nodes) await n.stop();
    }

    // ---- failover: kill -9 of a node with running samples, `kills` times ----
    const url = await server.createDatabase('failover');
    const [a, b] = await startCluster(url, ['f1', 'f2'], 2);
    const db = new pg.Pool({ connectionString: url, max: 2 });
    const kills: Array<{ deadAfterMs: number; rerunAfterMs: number }> = [];
    for (let k = 0; k < spec.kills; k++) {
      const victim = await startServe(url, 'f3', 2);
      // Samples that take a while (6 s), so the victim is mid-sample when it dies.
      const tasks = Array.from({ length: 6 }, (_, i) => ({ id: `k${k}-t${i}`, prompt: 'wait', expected: 'x' }));
      const { id: batchId } = await post(`${a!.url}/api/batches`, { tasks, harness: 'command', command: 'sleep 6', engine: 'bench', timeoutMs: 60_000 });
      const held = await until('the victim running a sample', async () => {
        const r = await db.query(`SELECT task_id, sample_index FROM rollgate_batch_samples WHERE batch_id = $1 AND node_id = 'f3' AND status = 'running'`, [batchId]);
        return r.rows.length > 0 && r.rows;
      }, 60_000);
      const t0 = performance.now();
      await victim.stop('SIGKILL');
      const deadAt = await until('f3 declared dead', async () => {
        const r = await db.query(`SELECT status FROM rollgate_nodes WHERE id = 'f3'`);
        return r.rows[0]?.status === 'dead' && performance.now();
      }, 60_000);
      const rerunAt = await until('a sample of f3 running again', async () => {
        const r = await db.query(`SELECT 1 FROM rollgate_batch_samples WHERE batch_id = $1 AND task_id = $2 AND sample_index = $3 AND attempt > 1 AND node_id <> 'f3'`,
          [batchId, held[0].task_id, held[0].sample_index]);
        return r.rows.length > 0 && performance.now();
      }, 60_000);
      kills.push({ deadAfterMs: deadAt - t0, rerunAfterMs: rerunAt - t0 });
      log(`kill ${k + 1}: declared dead after ${(deadAt - t0).toFixed(0)} ms, its sample running again after ${(rerunAt - t0).toFixed(0)} ms`);
      await until('the batch to end', async () => {
        const r = await fetch(`${b!.url}/api/batches/${batchId}`).then((x) => x.json());
        return r.status !== 'running' && r.status !== 'queued';
      }, 120_000, 200);
    }
    await db.end();

    const result = {
      throughput: { ...throughput, ratio3to1: throughput.nodes3!.completionsPerSec / throughput.nodes1!.completionsPerSec },
      failover: {
        kills, deadAfterMsP50: median(kills.map((k) => k.deadAfterMs)), rerunAfterMsP50: median(kills.map((k) => k.rerunAfterMs)),
        bound: 'heartbeat every 1 s; a node is dead after 5 s without one (database clock)',
      },
    };
    process.stdout.write(JSON.stringify(result));
  } finally {
    await stopAll();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
