// Store-side benchmarks, run in their own process (spec as JSON in argv[2], result as JSON on stdout):
//   builder     — a session of N completions whose contexts grow to maxContext tokens, written through the
//                 store writer; time buildTraces('prefix-merge') against reading the same ids from SQLite.
//   export-gen  — writes sessions through the store writer until the train-format export would reach
//                 targetBytes; reports the writer's persisted tokens/s.
import { mkdirSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import { buildTraces, type TrajectoryInput } from '../src-main/core/trajectory/index.js';
import type { CompletionRecord, NewSession } from '../src-main/core/types.js';
import { blobToFloat32, blobToInt32, openStore, promptIdsOf, type Store } from '../src-main/store/index.js';
import { storageBench } from './storage-bench.js';

const EOS = 151645;
const VOCAB = 151_000;

function session(id: string): NewSession {
  return { id, key: randomBytes(16).toString('hex'), engineId: 'bench', harness: null, taskId: null, batchId: null, metadata: {}, status: 'finished', reward: 1, createdAt: Date.now(), finishedAt: Date.now() };
}

function record(sessionId: string, seq: number, promptIds: Int32Array, outputIds: Int32Array, outputLogprobs: Float32Array): CompletionRecord {
  return {
    id: `${sessionId}-${String(seq).padStart(5, '0')}`, sessionId, seq, dialect: 'openai-chat', engineId: 'bench', replica: 'http://127.0.0.1:1',
    policyVersion: 0, requestReceived: { model: 'Qwen/Qwen3-8B', messages: [{ role: 'user', content: `turn ${seq}` }] },
    requestServed: { model: 'Qwen/Qwen3-8B' }, response: null, finishReason: 'stop',
    usage: { prompt_tokens: promptIds.length, completion_tokens: outputIds.length, total_tokens: promptIds.length + outputIds.length },
    timings: { queueMs: 0, ttftMs: 1, totalMs: 2 }, status: 'ok', error: null, retryOf: null, createdAt: Date.now(),
    promptIds, outputIds, outputLogprobs,
  };
}

let seed = 12345;
const rand = () => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed; };
function randomIds(n: number): Int32Array { const a = new Int32Array(n); for (let i = 0; i < n; i++) a[i] = rand() % VOCAB; return a; }
function randomLogprobs(n: number): Float32Array { const a = new Float32Array(n); for (let i = 0; i < n; i++) a[i] = -(rand() % 100000) / 20000; return a; }
function output(n: number): Int32Array { const a = randomIds(n); a[n - 1] = EOS; return a; }

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Puts records through the single writer, at most `window` in flight (group commit). */
async function putAll(store: Store, records: Iterable<CompletionRecord>, window = 256): Promise<void> {
  let inflight: Promise<void>[] = [];
  for (const r of records) {
    inflight.push(store.writer.putCompletion(r));
    if (inflight.length >= window) { await Promise.all(inflight); inflight = []; }
  }
  await Promise.all(inflight);
}

export async function builderBench(spec: { dataDir: string; completions: number; maxContext: number; outputTokens?: number; repeats?: number }) {
  mkdirSync(spec.dataDir, { recursive: true });
  const store = openStore({ dataDir: spec.dataDir });
  const sid = 'ses_builder';
  await store.writer.putSession(session(sid));
  const outLen = spec.outputTokens ?? 32;
  const first = 512;
  // Each turn: prompt = previous prompt + previous output + interstitial (tool result, next user turn).
  const inter = Math.max(1, Math.round((spec.maxContext - first) / Math.max(1, spec.completions - 1)) - outLen);
  let totalTokens = 0;
  const genStart = performance.now();
  function* turns(): Generator<CompletionRecord> {
    let prompt = randomIds(first);
    for (let seq = 0; seq < spec.completions; seq++) {
      const out = output(outLen);
      totalTokens += prompt.length + out.length;
      yield record(sid, seq, prompt, out, randomLogprobs(outLen));
      const next = new Int32Array(prompt.length + outLen + inter);
      next.set(prompt, 0);
      next.set(out, prompt.length);
      next.set(randomIds(inter), prompt.length + outLen);
      prompt = next;
    }
  }
  await putAll(store, turns(), 32);
  const writeMs = performance.now() - genStart;
  const finalContext = (await store.completions.listBySession(sid)).at(-1)!.promptIds.length;

  const reader = new Database(store.path, { readonly: true });
  const stmt = reader.prepare(`SELECT id, session_id, seq, status, policy_version, retry_of, created_at, finish_reason, parent_id, prompt_base, n_prompt,
    prompt_ids, output_ids, output_logprobs FROM completions WHERE session_id = ? ORDER BY seq`);
  // Delta storage: a prompt is its parent's tip up to prompt_base, then the stored suffix (rows come parents first).
  const readIds = (): TrajectoryInput[] => {
    const seen = new Map<string, TrajectoryInput>();
    return (stmt.all(sid) as Array<Record<string, any>>).map((r) => {
      const rec: TrajectoryInput = {
        id: r.id, sessionId: r.session_id, seq: r.seq, status: r.status, policyVersion: r.policy_version, retryOf: r.retry_of,
        createdAt: r.created_at, finishReason: r.finish_reason, promptIds: promptIdsOf(r as Parameters<typeof promptIdsOf>[0], () => seen.get(r.parent_id)!),
        outputIds: blobToInt32(r.output_ids), outputLogprobs: blobToFloat32(r.output_logprobs),
      };
      seen.set(rec.id, rec);
      return rec;
    });
  };
  const repeats = spec.repeats ?? 5;
  const readTimes: number[] = [];
  const buildTimes: number[] = [];
  const fullReadTimes: number[] = [];
  let result: ReturnType<typeof buildTraces> | null = null;
  readIds(); // warm the page cache and the statement
  for (let i = 0; i < repeats; i++) {
    let t = performance.now();
    const records = readIds();
    readTimes.push(performance.now() - t);
    t = performance.now();
    result = buildTraces('prefix-merge', records);
    buildTimes.push(performance.now() - t);
    t = performance.now();
    await store.completions.listBySession(sid);
    fullReadTimes.push(performance.now() - t);
  }
  reader.close();
  await store.close();
  const trace = result!.traces[0]!;
  return {
    completions: spec.completions,
    finalContextTokens: finalContext,
    totalInputTokens: totalTokens,
    writeMs,
    readIdsMs: median(readTimes),
    readFullRecordsMs: median(fullReadTimes),
    buildMs: median(buildTimes),
    buildOverRead: median(buildTimes) / median(readTimes),
    traces: result!.traces.length,
    proofOk: result!.traces.every((t) => t.proof.ok),
    traceTokens: trace.promptIds.length + trace.responseIds.length,
    tokenOps: result!.stats.tokenOps,
  };
}

/** Sessions of `perSession` unrelated prompts (each its own trace), until the export reaches targetBytes. */
export async function exportGen(spec: { dataDir: string; targetBytes: number; promptTokens?: number; outputTokens?: number; perSession?: number }) {
  mkdirSync(spec.dataDir, { recursive: true });
  const store = openStore({ dataDir: spec.dataDir });
  const P = spec.promptTokens ?? 8192;
  const N = spec.outputTokens ?? 512;
  const per = spec.perSession ?? 4;
  // Train rows: ids as decimal text (~7 bytes with the comma), logprobs (~10), mask (2), plus the row's fields.
  const rowBytes = P * 7 + N * (7 + 10 + 2) + 600;
  const count = Math.ceil(spec.targetBytes / rowBytes);
  let tokens = 0;
  const t0 = performance.now();
  const sessions: NewSession[] = [];
  for (let s = 0; s * per < count; s++) sessions.push(session(`ses_export_${String(s).padStart(6, '0')}`));
  await Promise.all(sessions.map((s) => store.writer.putSession(s)));
  function* all(): Generator<CompletionRecord> {
    for (let i = 0; i < count; i++) {
      const prompt = randomIds(P);
      tokens += P + N;
      yield record(sessions[Math.floor(i / per)]!.id, i % per, prompt, output(N), randomLogprobs(N));
    }
  }
  await putAll(store, all(), 64);
  const ms = performance.now() - t0;
  await store.close();
  return { completions: count, sessions: sessions.length, tokens, writeMs: ms, tokensPerSec: tokens / (ms / 1000), completionsPerSec: count / (ms / 1000), estimatedExportBytes: count * rowBytes };
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  const [cmd, json] = process.argv.slice(2);
  const spec = JSON.parse(json ?? '{}');
  const run = cmd === 'builder' ? builderBench(spec) : cmd === 'export-gen' ? exportGen(spec) : cmd === 'storage' ? storageBench(spec)
    : Promise.reject(new Error(`unknown command ${cmd}`));
  run.then((r) => { process.stdout.write(JSON.stringify(r)); process.exit(0); }, (e) => { console.error(e); process.exit(1); });
}
