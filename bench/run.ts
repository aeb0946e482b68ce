// `npm run bench [-- --quick] [-- --cpu-prof]`: Rollgate's own cost against baselines, in one run, on loopback
// (DESIGN §9, issues 8 and 4). Every server and load generator runs in its own process:
//   (a) the sim engine directly      — `rollgate sim --flavor vllm --ttft-ms 0 --per-token-ms 0`
//   (b) a bare undici pass-through   — bench/proxy.ts, no parsing, no capture
//   (c) Rollgate with capture        — `rollgate serve --no-sim --topology <tmp yaml>`
// plus capture (tokens/s persisted, SQLite bytes per million tokens), memory (RSS with concurrent streaming
// sessions), the trace builder against reading the same ids, and the JSONL export (MB/s, RSS as it grows).
// Writes bench/results/<timestamp>.json and prints a table. Not part of `npm test`.
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { loadavg, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { LoadRequest, LoadResult, LoadSpec } from './load.js';
import { cpuMs, LoadClient, ROOT, rss, rssSampler, runNode, spawnNode, startNode, stopAll, type Proc } from './proc.js';
import { printReport } from './report.js';

const argv = process.argv.slice(2);
const QUICK = argv.includes('--quick');
const CPU_PROF = argv.includes('--cpu-prof');
/** `--only overhead,throughput,memory,builder,storage,prompt,stores,sandbox,export`: run some phases (the others are skipped). */
const ONLY = (() => { const i = argv.indexOf('--only'); return i >= 0 ? new Set((argv[i + 1] ?? '').split(',')) : null; })();
const phase = (name: string) => !ONLY || ONLY.has(name);
const MODEL = 'Qwen/Qwen3-8B';

const CFG = QUICK
  ? { rates: [100], streams: [false, true], dialects: ['openai', 'anthropic'] as Dialect[], runMs: 1200, warmupMs: 200, maxConcurrency: 32, maxMs: 1000, canned: false,
    memorySessions: 100, memoryMs: 2000, builder: { completions: 200, maxContext: 16384 }, exportBytes: 30e6, sessions: 16, maxTokens: 32, builderRepeats: 1 }
  : { rates: [100, 500, 1000], streams: [false, true], dialects: ['openai', 'anthropic'] as Dialect[], runMs: 2000, warmupMs: 400, maxConcurrency: 64, maxMs: 2000, canned: true,
    memorySessions: 1000, memoryMs: 4000, builder: { completions: 1000, maxContext: 65536 }, exportBytes: 1.05e9, sessions: 64, maxTokens: 32, builderRepeats: 2 };

type Dialect = 'openai' | 'anthropic';
type Target = 'engine' | 'proxy' | 'rollgate';

// A short agent turn. Kept small on purpose: the sim renders the chat template and tokenizes every prompt
// with the real Qwen3 tokenizer, so a long prompt makes the engine, not the gateway, the bottleneck.
const SYSTEM = 'You are a coding agent. Keep answers short.';
const USER = 'The parser test fails with "Unexpected token at position 17". What is the likely cause?';

export interface OverheadRow {
  dialect: Dialect; stream: boolean; rate: number; target: Target;
  result: LoadResult;
  /** CPU ms per request of the serving process (the engine for a, the proxy for b, Rollgate for c). */
  cpuPerReqMs: number | null;
  engineCpuPerReqMs: number;
}

export interface ThroughputRow {
  engine: 'sim' | 'canned'; dialect: Dialect; stream: boolean; target: Target; concurrency: number;
  result: LoadResult; cpuPerReqMs: number | null; engineCpuPerReqMs: number;
  /** Rollgate only: completions committed to SQLite per second over the run. */
  recordedPerSec?: number; recordedTokensPerSec?: number;
}

function engineBody(stream: boolean): string {
  return JSON.stringify({
    model: MODEL, messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: USER }], max_tokens: CFG.maxTokens, stream,
    // What Rollgate asks of the engine, so (a) and (b) make the engine do the same work as (c).
    logprobs: true, top_logprobs: 0, return_token_ids: true, ...(stream ? { stream_options: { include_usage: true } } : {}),
  });
}

/** The response format the load generator checks: the engine and the proxy always answer OpenAI chat. */
const answerDialect = (target: Target, dialect: Dialect): Dialect => (target === 'rollgate' ? dialect : 'openai');

function requestsFor(target: Target, dialect: Dialect, stream: boolean, keys: string[]): LoadRequest[] {
  if (target !== 'rollgate') {
    // The engine speaks OpenAI chat only: the Anthropic baseline is the engine request Rollgate makes for it.
    return [{ path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: engineBody(stream) }];
  }
  return keys.map((key): LoadRequest => dialect === 'openai'
    ? { path: `/s/${key}/v1/chat/completions`, headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: USER }], max_tokens: CFG.maxTokens, stream }) }
    : { path: `/s/${key}/v1/messages`, headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: MODEL, system: SYSTEM, messages: [{ role: 'user', content: USER }], max_tokens: CFG.maxTokens, stream }) });
}

const ms = (n: number | null | undefined) => (n === null || n === undefined || !Number.isFinite(n) ? '-' : `${n.toFixed(2)} ms`);

let loadClient: LoadClient | null = null;
async function load(spec: LoadSpec): Promise<LoadResult> {
  loadClient ??= new LoadClient();
  return loadClient.run<LoadResult>(spec);
}

async function createSessions(rollgate: string, engine: string, n: number): Promise<string[]> {
  const keys: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await fetch(`${rollgate}/api/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ engine }) });
    if (res.status !== 201) throw new Error(`POST /api/sessions: HTTP ${res.status} ${await res.text()}`);
    keys.push(((await res.json()) as { key: string }).key);
  }
  return keys;
}

async function engineRunning(url: string): Promise<number> {
  try {
    const text = await (await fetch(`${url}/metrics`)).text();
    const m = /vllm:num_requests_running\{[^}]*\} ([\d.]+)/.exec(text);
    return m ? Number(m[1]) : 0;
  } catch { return 0; }
}

function dbCounts(dbPath: string, sinceMs: number): { completions: number; tokens: number } {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const r = db.prepare('SELECT COUNT(*) AS n, COALESCE(SUM(n_prompt + n_output), 0) AS t FROM completions WHERE created_at >= ? AND status = ?').get(sinceMs, 'ok') as { n: number; t: number };
    return { completions: r.n, tokens: r.t };
  } finally { db.close(); }
}

/** A free loopback port (bound, then released). */
function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.once('error', rej);
    srv.listen(0, '127.0.0.1', () => { const { port } = srv.address() as AddressInfo; srv.close(() => res(port)); });
  });
}

function fileBytes(path: string): number {
  let n = 0;
  for (const p of [path, `${path}-wal`]) { try { n += statSync(p).size; } catch { /* absent */ } }
  return n;
}

async function main(): Promise<void> {
  const started = Date.now();
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const resultsDir = join(ROOT, 'bench', 'results');
  mkdirSync(resultsDir, { recursive: true });
  const tmp = mkdtempSync(join(tmpdir(), 'rollgate-bench-'));
  const profDir = join(resultsDir, `prof-${stamp}`);
  const report: Record<string, unknown> = {
    meta: {
      startedAt: new Date(started).toISOString(), quick: QUICK, node: process.version, cpus: cpus().length, cpuModel: cpus()[0]?.model,
      loadAvgBefore: loadavg(), model: MODEL, maxTokens: CFG.maxTokens,
    },
    config: CFG,
  };
  const log = (s: string) => process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(3)}s] ${s}\n`);
  let rollgate: Proc | null = null;
  try {
    // ---- processes ----
    log('starting the sim engines, the canned engine, the proxies and Rollgate');
    const listening = /listening on (http:\/\/\S+)/;
    // Ports picked up front so every process starts at once (Rollgate's topology needs the engines' URLs).
    const [simPort, slowPort, cannedPort] = await Promise.all([freePort(), freePort(), freePort()]);
    const url = (port: number) => `http://127.0.0.1:${port}`;
    const dataDir = join(tmp, 'rollgate-data');
    const topology = join(tmp, 'topology.yaml');
    writeFileSync(topology, [
      'engines:',
      `  - { id: bench, kind: vllm, replicas: ["${url(simPort)}"], model: "${MODEL}", mode: chat }`,
      `  - { id: slow, kind: vllm, replicas: ["${url(slowPort)}"], model: "${MODEL}", mode: chat }`,
      ...(CFG.canned ? [`  - { id: canned, kind: vllm, replicas: ["${url(cannedPort)}"], model: "${MODEL}", mode: chat }`] : []),
      '',
    ].join('\n'));
    const profArgs = (name: string) => (CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', profDir, '--cpu-prof-name', `${name}.cpuprofile`] : []);
    let sim: Proc, slowSim: Proc, canned: Proc | null, proxy: Proc, cannedProxy: Proc | null;
    [sim, slowSim, canned, proxy, cannedProxy, rollgate] = await Promise.all([
      startNode('sim', 'src-main/cli.ts', ['sim', '--flavor', 'vllm', '--port', String(simPort), '--ttft-ms', '0', '--per-token-ms', '0'], { ready: listening }),
      startNode('slow-sim', 'src-main/cli.ts', ['sim', '--flavor', 'vllm', '--port', String(slowPort), '--ttft-ms', '100', '--per-token-ms', '40'], { ready: listening }),
      CFG.canned ? startNode('canned', 'bench/canned-engine.ts', ['--port', String(cannedPort)], { ready: listening }) : Promise.resolve(null),
      startNode('proxy', 'bench/proxy.ts', ['--upstream', url(simPort)], { ready: listening, nodeArgs: profArgs('proxy') }),
      CFG.canned ? startNode('canned-proxy', 'bench/proxy.ts', ['--upstream', url(cannedPort)], { ready: listening }) : Promise.resolve(null),
      startNode('rollgate', 'src-main/cli.ts', ['serve', '--no-sim', '--topology', topology, '--data-dir', dataDir, '--port', '0'],
        { ready: /Rollgate listening on (http:\/\/\S+)/, nodeArgs: profArgs('rollgate') }),
    ]);
    const dbPath = join(dataDir, 'rollgate.sqlite');
    const keys = await createSessions(rollgate.url, 'bench', CFG.sessions);
    const cannedKeys = canned ? await createSessions(rollgate.url, 'canned', CFG.sessions) : [];
    const targets: Record<Target, Proc> = { engine: sim, proxy, rollgate };

    // Warm every path (JIT, keep-alive connections, tokenizer caches).
    if (phase('overhead') || phase('throughput')) for (const target of ['engine', 'proxy', 'rollgate'] as Target[]) {
      for (const dialect of CFG.dialects) for (const stream of CFG.streams) {
        await load({ target: targets[target].url, requests: requestsFor(target, dialect, stream, keys), stream, dialect: answerDialect(target, dialect), mode: 'closed', concurrency: 8, durationMs: QUICK ? 300 : 800 });
      }
    }

    // ---- (1) added latency at fixed offered rates ----
    const overhead: OverheadRow[] = [];
    if (phase('overhead')) for (const dialect of CFG.dialects) for (const stream of CFG.streams) for (const rate of CFG.rates) {
      for (const target of ['engine', 'proxy', 'rollgate'] as Target[]) {
        const p = targets[target];
        const cpu0 = cpuMs(p.pid);
        const e0 = cpuMs(sim.pid);
        const result = await load({
          target: p.url, requests: requestsFor(target, dialect, stream, keys), stream, dialect: answerDialect(target, dialect),
          // At least ~250 measured samples per run, so p99 means something at 100/s too.
          mode: 'open', rate, durationMs: QUICK ? CFG.runMs : Math.max(CFG.runMs, CFG.warmupMs + (250 * 1000) / rate), warmupMs: CFG.warmupMs, drainMs: 10_000,
        });
        const n = Math.max(1, result.sent);
        overhead.push({
          dialect, stream, rate, target, result,
          cpuPerReqMs: target === 'engine' ? null : (cpuMs(p.pid) - cpu0) / n,
          engineCpuPerReqMs: (cpuMs(sim.pid) - e0) / n,
        });
        log(`overhead ${dialect} ${stream ? 'stream' : 'json'} ${rate}/s ${target}: p50 ${ms(result.latency.p50)} p99 ${ms(result.latency.p99)}, ok ${result.ok}/${result.measured}, cpu/req ${ms(overhead.at(-1)!.cpuPerReqMs)}, engine cpu/req ${ms(overhead.at(-1)!.engineCpuPerReqMs)}${result.errors ? `; errors: ${result.errorSamples.join(' | ').slice(0, 500)}` : ''}`);
      }
    }
    report.overhead = overhead;

    // ---- (2) maximum sustained completions/s (closed loop) ----
    const throughput: ThroughputRow[] = [];
    const engines: Array<{ name: 'sim' | 'canned'; engine: Proc; proxy: Proc; keys: string[] }> = [{ name: 'sim', engine: sim, proxy, keys }];
    if (canned && cannedProxy) engines.push({ name: 'canned', engine: canned, proxy: cannedProxy, keys: cannedKeys });
    if (phase('throughput')) for (const e of engines) for (const dialect of e.name === 'canned' ? (['openai'] as Dialect[]) : CFG.dialects) for (const stream of CFG.streams) {
      if (QUICK && (dialect !== 'openai' || !stream)) continue;
      for (const target of ['engine', 'proxy', 'rollgate'] as Target[]) {
        const p = target === 'engine' ? e.engine : target === 'proxy' ? e.proxy : rollgate;
        const cpu0 = cpuMs(p.pid);
        const e0 = cpuMs(e.engine.pid);
        const since = Date.now();
        const result = await load({ target: p.url, requests: requestsFor(target, dialect, stream, e.keys), stream, dialect: answerDialect(target, dialect), mode: 'closed', concurrency: CFG.maxConcurrency, durationMs: CFG.maxMs, warmupMs: 300 });
        const wall = (Date.now() - since) / 1000;
        const n = Math.max(1, result.sent);
        const row: ThroughputRow = {
          engine: e.name, dialect, stream, target, concurrency: CFG.maxConcurrency, result,
          cpuPerReqMs: target === 'engine' ? null : (cpuMs(p.pid) - cpu0) / n,
          engineCpuPerReqMs: (cpuMs(e.engine.pid) - e0) / n,
        };
        if (target === 'rollgate') {
          const c = dbCounts(dbPath, since);
          row.recordedPerSec = c.completions / wall;
          row.recordedTokensPerSec = c.tokens / wall;
        }
        throughput.push(row);
        log(`max ${e.name} ${dialect} ${stream ? 'stream' : 'json'} ${target}: ${result.okPerSec.toFixed(0)} ok/s${row.recordedPerSec ? `, ${row.recordedPerSec.toFixed(0)} recorded/s` : ''}, cpu/req ${ms(row.cpuPerReqMs)}, engine cpu/req ${ms(row.engineCpuPerReqMs)}${result.errors ? `; errors: ${result.errorSamples.join(' | ').slice(0, 500)}` : ''}`);
      }
    }
    report.throughput = throughput;

    // ---- (3) memory: concurrent streaming sessions on a slow engine ----
    if (phase('memory')) {
      log(`memory: ${CFG.memorySessions} concurrent streaming sessions`);
      const slowKeys = await createSessions(rollgate.url, 'slow', CFG.memorySessions);
      const idleRss = rss(rollgate.pid);
      const sampler = rssSampler(rollgate.pid, 50);
      let peakRunning = 0;
      const poll = setInterval(() => { void engineRunning(slowSim.url).then((n) => { peakRunning = Math.max(peakRunning, n); }); }, 200);
      const memLoad = await load({
        target: rollgate.url, requests: slowKeys.map((key) => ({ path: `/s/${key}/v1/chat/completions`, headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: USER }], max_tokens: 48, stream: true }) })),
        stream: true, dialect: 'openai', mode: 'closed', concurrency: CFG.memorySessions, durationMs: CFG.memoryMs, connections: CFG.memorySessions + 16, drainMs: 30_000,
      });
      clearInterval(poll);
      const peakRss = sampler.stop();
      report.memory = {
        sessions: CFG.memorySessions, idleRssMB: idleRss / 1e6, peakRssMB: peakRss / 1e6,
        perSessionKB: (peakRss - idleRss) / 1e3 / CFG.memorySessions, peakEngineRunning: peakRunning,
        ok: memLoad.ok, errors: memLoad.errors, errorSamples: memLoad.errorSamples, ttftP50Ms: memLoad.ttft?.p50, latencyP50Ms: memLoad.latency.p50,
      };
      log(`memory: idle ${(idleRss / 1e6).toFixed(0)} MB, peak ${(peakRss / 1e6).toFixed(0)} MB, engine saw up to ${peakRunning} running`);
    }

    // ---- (4) capture: what the run stored ----
    await rollgate.stop('SIGTERM'); // closes the store (checkpoints the WAL)
    rollgate = null;
    {
      const db = new Database(dbPath, { readonly: true, fileMustExist: true });
      const r = db.prepare("SELECT COUNT(*) AS n, COALESCE(SUM(n_prompt), 0) AS p, COALESCE(SUM(n_output), 0) AS o FROM completions WHERE status = 'ok'").get() as { n: number; p: number; o: number };
      const pages = db.pragma('page_count', { simple: true }) as number;
      const free = db.pragma('freelist_count', { simple: true }) as number;
      const pageSize = db.pragma('page_size', { simple: true }) as number;
      db.close();
      const bytes = fileBytes(dbPath);
      const rg = throughput.filter((t) => t.target === 'rollgate' && t.recordedTokensPerSec !== undefined);
      const best = rg.reduce<ThroughputRow | null>((a, b) => (!a || (b.recordedTokensPerSec ?? 0) > (a.recordedTokensPerSec ?? 0) ? b : a), null);
      report.capture = {
        completions: r.n, promptTokens: r.p, outputTokens: r.o, sqliteBytes: bytes, usedBytes: (pages - free) * pageSize,
        bytesPerMillionTokens: (bytes / Math.max(1, r.p + r.o)) * 1e6,
        bytesPerCompletion: bytes / Math.max(1, r.n),
        bestRecordedTokensPerSec: best?.recordedTokensPerSec ?? null, bestRecordedPerSec: best?.recordedPerSec ?? null,
        bestAt: best ? `${best.engine} ${best.dialect} ${best.stream ? 'stream' : 'json'}` : null,
      };
    }
    await Promise.all([sim, slowSim, canned, proxy, cannedProxy].map((p) => p?.stop()));

    // ---- (5) trace builder vs reading the ids ----
    if (phase('builder')) {
      log(`builder: ${CFG.builder.completions} completions, contexts growing to ${CFG.builder.maxContext} tokens`);
      const builder = JSON.parse((await runNode('bench/store-bench.ts', ['builder', JSON.stringify({ dataDir: join(tmp, 'builder'), ...CFG.builder, repeats: CFG.builderRepeats })], { timeoutMs: 180_000 })).stdout);
      rmSync(join(tmp, 'builder'), { recursive: true, force: true });
      report.builder = builder;
      log(`builder: build ${builder.buildMs.toFixed(0)} ms vs read ids ${builder.readIdsMs.toFixed(0)} ms`);
    }

    // ---- (5b) long-session storage: bytes per session vs unique content, write throughput vs schema 5 ----
    if (phase('storage')) {
      log('storage: 50-turn sessions growing to ~100k tokens, delta storage vs full copies (schema 5)');
      const storage = JSON.parse((await runNode('bench/store-bench.ts', ['storage', JSON.stringify({ dataDir: join(tmp, 'storage'), repeats: QUICK ? 1 : 3, sessions: QUICK ? 2 : 4 })], { timeoutMs: 300_000 })).stdout);
      rmSync(join(tmp, 'storage'), { recursive: true, force: true });
      report.storage = storage;
      log(`storage: ${storage.delta.overUnique.toFixed(2)}× unique content (schema 5: ${storage.schema5.overUnique.toFixed(1)}×), writes ${storage.throughputRatio.toFixed(2)}× schema 5's speed`);
    }

    // ---- (5c) token-mode prompt building at 128k tokens: event-loop delay, main thread vs worker pool ----
    if (phase('prompt')) {
      log('prompt: 8 concurrent sessions of ~128k tokens, first turn + reuse turn, main thread vs worker pool');
      const prompt = JSON.parse((await runNode('bench/prompt-bench.ts', [JSON.stringify(QUICK ? { sessions: 4, contextTokens: 32_000 } : { sessions: 8, contextTokens: 128_000 })], { timeoutMs: 300_000 })).stdout);
      report.prompt = prompt;
      log(`prompt: event-loop delay p99 ${prompt.workers.loopDelayMs.p99.toFixed(1)} ms with workers vs ${prompt.mainThread.loopDelayMs.p99.toFixed(0)} ms on the main thread`);
    }

    // ---- (5e) the two stores under the same gateway-like load: SQLite vs Postgres (issue 15) ----
    if (phase('stores')) {
      const spec = QUICK ? { sessions: 64, turns: 10, firstPrompt: 2000, outputTokens: 64, toolTokens: 200 } : { sessions: 256, turns: 30, firstPrompt: 2000, outputTokens: 64, toolTokens: 200 };
      log(`stores: ${spec.sessions} concurrent sessions × ${spec.turns} calls (seq, intent, completion), then an export, on SQLite and on Postgres`);
      const stores = JSON.parse((await runNode('bench/stores-bench.ts', [JSON.stringify(spec)], { timeoutMs: 300_000 })).stdout);
      report.stores = stores;
      log(`stores: ${stores.sqlite.completionsPerSec.toFixed(0)} vs ${stores.postgres.completionsPerSec.toFixed(0)} completions/s committed (Postgres ${stores.writeRatio.toFixed(2)}× SQLite)`);
    }

    // ---- (5f) the whole gateway on each store, one vs three nodes, and failover after kill -9 (issue 15) ----
    if (phase('cluster')) {
      const spec = QUICK ? { concurrency: 32, durationMs: 1500, sessions: 16, kills: 2, samples: 16 } : { concurrency: 64, durationMs: 4000, sessions: 32, kills: 5, samples: 16 };
      log(`cluster: recorded completions/s through the gateway (SQLite, Postgres 1 node, Postgres 3 nodes), then ${spec.kills} kill -9 failovers`);
      const cluster = JSON.parse((await runNode('bench/cluster-bench.ts', [JSON.stringify(spec)], { timeoutMs: 900_000 })).stdout);
      report.cluster = cluster;
      log(`cluster: Postgres ${cluster.ratios.postgresOverSqlite.toFixed(2)}× SQLite, 3 nodes ${cluster.ratios.threeOverOneNode.toFixed(2)}× 1 node; failover p50: dead ${cluster.failover ? ms(cluster.failover.declaredDeadP50Ms) : '-'}, requeued ${cluster.failover ? ms(cluster.failover.requeuedP50Ms) : '-'}, running again ${cluster.failover ? ms(cluster.failover.rerunP50Ms) : '-'}`);
    }

    // ---- (5d) sandbox start latency per runtime vs a bare spawn (issue 11) ----
    if (phase('sandbox')) {
      log('sandbox: 50 starts per runtime (bare spawn, bwrap, docker; with and without the forwarder)');
      const sandbox = JSON.parse((await runNode('bench/sandbox-bench.ts', ['--starts', QUICK ? '10' : '50'], { timeoutMs: 600_000 })).stdout);
      report.sandbox = sandbox;
      log(`sandbox: bare p50 ${ms(sandbox.bare.p50)}; bwrap p50 ${ms(sandbox.bwrap?.p50)}; docker p50 ${ms(sandbox.docker?.p50)}`);
    }

    // ---- (6) export: MB/s and RSS as the output grows ----
    if (phase('export')) {
      log(`export: writing records for a ~${(CFG.exportBytes / 1e9).toFixed(2)} GB export through the store writer`);
      const exportDir = join(tmp, 'export');
      const gen = JSON.parse((await runNode('bench/store-bench.ts', ['export-gen', JSON.stringify({ dataDir: exportDir, targetBytes: CFG.exportBytes })], { timeoutMs: 300_000 })).stdout);
      const out = join(tmp, 'export.jsonl');
      const t0 = performance.now();
      const exp = spawnNode('export', 'src-main/cli.ts', ['export', '--data-dir', exportDir, '--out', out, '--no-progress', '--format', 'train', '--builder', 'prefix-merge']);
      const points: Array<{ bytes: number; rssMB: number; seconds: number }> = [];
      let peak = 0;
      let lastBytes = -1;
      await new Promise<void>((res) => {
        const t = setInterval(() => {
          const r = rss(exp.pid);
          if (r === 0) return;
          peak = Math.max(peak, r);
          let bytes = 0;
          try { bytes = statSync(out).size; } catch { /* not yet */ }
          if (bytes !== lastBytes) { points.push({ bytes, rssMB: r / 1e6, seconds: (performance.now() - t0) / 1000 }); lastBytes = bytes; }
        }, 100);
        void exp.exited.then(() => { clearInterval(t); res(); });
      });
      const seconds = (performance.now() - t0) / 1000;
      const bytes = statSync(out).size;
      const firstByte = points.find((p) => p.bytes > 0);
      // The last sample before exit stands for the end (the process is gone when the file is complete).
      const quart = (f: number) => points.find((p) => p.bytes >= f * bytes) ?? (f === 1 ? points.filter((p) => p.rssMB > 0).at(-1) : undefined);
      report.export = {
        generated: gen, bytes, seconds, mbPerSec: bytes / 1e6 / seconds,
        mbPerSecAfterFirstByte: firstByte ? bytes / 1e6 / Math.max(0.001, seconds - firstByte.seconds) : null,
        peakRssMB: peak / 1e6,
        rssAt: [0.1, 0.25, 0.5, 0.75, 1].map((f) => ({ fraction: f, mb: (quart(f)?.bytes ?? 0) / 1e6, rssMB: quart(f)?.rssMB ?? null })),
        exitCode: exp.child.exitCode, stderr: exp.output().slice(-2000) || undefined,
      };
      rmSync(out, { force: true });
      rmSync(exportDir, { recursive: true, force: true });
      log(`export: ${(bytes / 1e6).toFixed(0)} MB in ${seconds.toFixed(1)} s, peak RSS ${(peak / 1e6).toFixed(0)} MB`);
    }
  } finally {
    await loadClient?.close();
    if (rollgate) await rollgate.stop();
    await stopAll();
    rmSync(tmp, { recursive: true, force: true });
  }
  (report.meta as Record<string, unknown>).loadAvgAfter = loadavg();
  (report.meta as Record<string, unknown>).seconds = (Date.now() - started) / 1000;
  if (CPU_PROF) (report.meta as Record<string, unknown>).cpuProfiles = profDir;
  const file = join(resultsDir, `${stamp}${QUICK ? '-quick' : ''}.json`);
  writeFileSync(file, JSON.stringify(report, null, 2));
  printReport(report as never);
  console.log(`\nresults: ${file.replace(ROOT + '/', '')}`);
}

process.on('SIGINT', () => { void stopAll().finally(() => process.exit(130)); });
main().catch(async (err) => {
  console.error(err);
  await stopAll();
  process.exit(1);
});

