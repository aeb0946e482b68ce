// Long-session storage (issue 14, DESIGN §9 custody): an agent session of `turns` turns whose context grows
// to ~`finalContext` tokens of real text (this repository's source files as tool results, tokenized with the
// real Qwen3 tokenizer), written through the store writer. Reports bytes stored per session against the
// session's unique content (unique ids × 4 bytes + unique text bytes), and write throughput, next to the
// same sessions written the schema-5 way (full prompt ids and full request JSON per completion, one
// transaction per group like the writer) in the same process and run.
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { ChatMessage, CompletionRecord, NewSession } from '../src-main/core/types.js';
import { loadTokenizer } from '../src-main/engines/tokenizer/index.js';
import { float32ToBlob, int32ToBlob, MIGRATIONS, migrate, openSqliteDatabase } from '../src-main/store/index.js';

interface Spec { dataDir: string; turns?: number; finalContext?: number; sessions?: number; repeats?: number }

const ROOT = join(import.meta.dirname, '..');
const MODEL = 'Qwen/Qwen3-8B';
const TOOLS = [
  { type: 'function', function: { name: 'bash', description: 'Run a shell command in the work folder and return its output.', parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] } } },
  { type: 'function', function: { name: 'read_file', description: 'Read a file of the repository.', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } } },
];

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (e.isDirectory()) sourceFiles(join(dir, e.name), out);
    else if (e.name.endsWith('.ts')) out.push(join(dir, e.name));
  }
  return out;
}

interface Turn { messages: ChatMessage[]; promptIds: Int32Array; outputIds: Int32Array; answer: string; tokens: number }

/** One session's turns: each adds the assistant's tool call and a tool result (a source file, cut to size). */
async function buildTurns(turns: number, finalContext: number): Promise<{ turns: Turn[]; uniqueBytes: number; uniqueTokens: number }> {
  const tok = await loadTokenizer('builtin:qwen3');
  const files = sourceFiles(join(ROOT, 'src-main'));
  const perTurn = Math.round(finalContext / turns);
  const ids = (t: string) => tok.encode(t);
  const frame = (role: string, text: string) => [...ids(`<|im_start|>${role}\n`), ...ids(text), ...ids('<|im_end|>\n')];
  const system = readFileSync(join(ROOT, 'README.md'), 'utf8').slice(0, 4000);
  const user = 'Find why the export test fails and fix it. Read the relevant source files first.';
  const messages: ChatMessage[] = [{ role: 'system', content: system }, { role: 'user', content: user }];
  let prompt = [...frame('system', system), ...frame('user', user), ...ids('<|im_start|>assistant\n')];
  let uniqueText = Buffer.byteLength(system) + Buffer.byteLength(user) + Buffer.byteLength(JSON.stringify(TOOLS));
  const out: Turn[] = [];
  let f = 0;
  for (let t = 0; t < turns; t++) {
    const path = files[f++ % files.length]!;
    const answer = `I will read ${path.slice(ROOT.length + 1)} next to see how it handles this case.`;
    const output = [...ids(answer), ...ids('<|im_end|>')];
    out.push({ messages: structuredClone(messages), promptIds: Int32Array.from(prompt), outputIds: Int32Array.from(output), answer, tokens: prompt.length + output.length });
    // The tool result: the file's text, whole files until the turn's share of the context is used.
    let result = '';
    while (ids(result).length < perTurn - output.length - 20) result += readFileSync(files[f++ % files.length]!, 'utf8');
    const resultIds = ids(result);
    const cut = tok.decode(resultIds.slice(0, Math.max(1, perTurn - output.length - 20)));
    messages.push({ role: 'assistant', content: answer }, { role: 'tool', tool_call_id: `call_${t}`, content: cut });
    uniqueText += Buffer.byteLength(answer) + Buffer.byteLength(cut);
    prompt = [...prompt, ...output, ...ids('\n'), ...frame('tool', cut), ...ids('<|im_start|>assistant\n')];
  }
  const last = out.at(-1)!;
  return { turns: out, uniqueBytes: 4 * last.tokens + uniqueText, uniqueTokens: last.tokens };
}

function record(sessionId: string, seq: number, turn: Turn): CompletionRecord {
  const lp = Float32Array.from(turn.outputIds, (x, i) => -((x * 31 + i) % 1000) / 997);
  const usage = { prompt_tokens: turn.promptIds.length, completion_tokens: turn.outputIds.length, total_tokens: turn.tokens };
  return {
    id: `${sessionId}-${String(seq).padStart(4, '0')}`, sessionId, seq, dialect: 'openai-chat', engineId: 'bench', replica: 'http://127.0.0.1:1', policyVersion: 0,
    requestReceived: { model: MODEL, messages: turn.messages, tools: TOOLS, stream: true, max_tokens: 1024 },
    requestServed: { model: MODEL, messages: turn.messages, tools: TOOLS, stream: true, max_tokens: 1024, logprobs: true, top_logprobs: 0, return_token_ids: true, stream_options: { include_usage: true } },
    response: { id: `chatcmpl-${seq}`, model: MODEL, created: 1, message: { role: 'assistant', content: turn.answer, reasoning: null, tool_calls: [] }, finish_reason: 'stop', usage },
    finishReason: 'stop', usage, timings: { queueMs: 0, ttftMs: 1, totalMs: 2 }, status: 'ok', error: null, retryOf: null, createdAt: Date.now(),
    promptIds: turn.promptIds, outputIds: turn.outputIds, outputLogprobs: lp,
  };
}

function session(id: string): NewSession {
  return { id, key: `${id}-key`, engineId: 'bench', harness: null, taskId: null, batchId: null, metadata: {}, status: 'finished', reward: 1, createdAt: 1, finishedAt: 1 };
}

function dbBytes(dir: string): number {
  return readdirSync(dir).filter((f) => f.startsWith('rollgate.sqlite')).reduce((n, f) => n + statSync(join(dir, f)).size, 0);
}

/** Today's layout before issue 14: every completion with its full prompt ids and full request JSON. */
function writeSchema5(dir: string, sessions: string[], turns: Turn[]): number {
  mkdirSync(dir, { recursive: true });
  const db = new Database(join(dir, 'rollgate.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  migrate(db, MIGRATIONS.filter((m) => m.version <= 5));
  const insert = db.prepare(`INSERT INTO completions (id, session_id, seq, dialect, engine_id, replica, policy_version, request_received, request_served,
    response, finish_reason, usage, queue_ms, ttft_ms, total_ms, status, error, retry_of, created_at, body_hash, n_prompt, n_output, prompt_ids, output_ids, output_logprobs)
    VALUES (@id, @session_id, @seq, @dialect, @engine_id, @replica, @policy_version, @request_received, @request_served, @response, @finish_reason, @usage,
    @queue_ms, @ttft_ms, @total_ms, @status, @error, @retry_of, @created_at, @body_hash, @n_prompt, @n_output, @prompt_ids, @output_ids, @output_logprobs)`);
  const group = db.transaction((rows: Record<string, unknown>[]) => { for (const r of rows) insert.run(r); });
  const t0 = performance.now();
  let rows: Record<string, unknown>[] = [];
  for (const sid of sessions) {
    turns.forEach((turn, seq) => {
      const r = record(sid, seq, turn);
      rows.push({
        id: r.id, session_id: sid, seq, dialect: r.dialect, engine_id: r.engineId, replica: r.replica, policy_version: 0,
        request_received: JSON.stringify(r.requestReceived), request_served: JSON.stringify(r.requestServed), response: JSON.stringify(r.response),
        finish_reason: r.finishReason, usage: JSON.stringify(r.usage), queue_ms: 0, ttft_ms: 1, total_ms: 2, status: 'ok', error: null, retry_of: null,
        created_at: r.createdAt, body_hash: null, n_prompt: r.promptIds.length, n_output: r.outputIds.length,
        prompt_ids: int32ToBlob(r.promptIds), output_ids: int32ToBlob(r.outputIds), output_logprobs: float32ToBlob(r.outputLogprobs),
      });
      if (rows.length >= 32) { group(rows); rows = []; }
    });
  }
  if (rows.length) group(rows);
  const ms = performance.now() - t0;
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return ms;
}

async function writeDeltas(dir: string, sessions: string[], turns: Turn[]): Promise<number> {
  const store = openSqliteDatabase({ dataDir: dir });
  for (const sid of sessions) store.sessions.create(session(sid));
  const t0 = performance.now();
  let inflight: Promise<void>[] = [];
  for (const sid of sessions) {
    for (let seq = 0; seq < turns.length; seq++) {
      inflight.push(store.writer.putCompletion(record(sid, seq, turns[seq]!)));
      if (inflight.length >= 32) { await Promise.all(inflight); inflight = []; }
    }
  }
  await Promise.all(inflight);
  const ms = performance.now() - t0;
  // read back one session: the figure only counts if it reads back exactly
  const back = store.completions.listBySession(sessions[0]!);
  if (back.length !== turns.length || back.some((c, i) => Buffer.compare(Buffer.from(c.promptIds.buffer), Buffer.from(turns[i]!.promptIds.buffer)) !== 0)) {
    throw new Error('delta store did not read back the written prompt ids');
  }
  await store.close();
  return ms;
}

function emptyStoreBytes(dir: string, schema5: boolean): number {
  mkdirSync(dir, { recursive: true });
  if (schema5) {
    const db = new Database(join(dir, 'rollgate.sqlite'));
    db.pragma('journal_mode = WAL');
    migrate(db, MIGRATIONS.filter((m) => m.version <= 5));
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
  } else void openSqliteDatabase({ dataDir: dir }).close();
  const n = dbBytes(dir);
  rmSync(dir, { recursive: true, force: true });
  return n;
}

export async function storageBench(spec: Spec) {
  const turnsN = spec.turns ?? 50;
  const { turns, uniqueBytes, uniqueTokens } = await buildTurns(turnsN, spec.finalContext ?? 100_000);
  const nSessions = spec.sessions ?? 4;
  const repeats = spec.repeats ?? 3;
  const tokensPerSession = turns.reduce((n, t) => n + t.tokens, 0);
  const runs: Array<{ deltaMs: number; schema5Ms: number; deltaBytes: number; schema5Bytes: number }> = [];
  const empty = { delta: emptyStoreBytes(join(spec.dataDir, 'empty-delta'), false), schema5: emptyStoreBytes(join(spec.dataDir, 'empty-5'), true) };
  for (let r = 0; r < repeats; r++) {
    const sessions = Array.from({ length: nSessions }, (_, i) => `ses_long_${r}_${i}`);
    // alternate the order so neither layout always runs on a warmer process
    const d5 = join(spec.dataDir, `schema5-${r}`);
    const dd = join(spec.dataDir, `delta-${r}`);
    let schema5Ms: number;
    let deltaMs: number;
    if (r % 2 === 0) { schema5Ms = writeSchema5(d5, sessions, turns); deltaMs = await writeDeltas(dd, sessions, turns); }
    else { deltaMs = await writeDeltas(dd, sessions, turns); schema5Ms = writeSchema5(d5, sessions, turns); }
    runs.push({ deltaMs, schema5Ms, deltaBytes: dbBytes(dd) - empty.delta, schema5Bytes: dbBytes(d5) - empty.schema5 });
    rmSync(d5, { recursive: true, force: true });
    rmSync(dd, { recursive: true, force: true });
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const deltaMs = med(runs.map((r) => r.deltaMs));
  const schema5Ms = med(runs.map((r) => r.schema5Ms));
  const deltaPerSession = med(runs.map((r) => r.deltaBytes)) / nSessions;
  const schema5PerSession = med(runs.map((r) => r.schema5Bytes)) / nSessions;
  const completions = nSessions * turnsN;
  return {
    turns: turnsN, finalContextTokens: turns.at(-1)!.tokens, sessionsPerRun: nSessions, repeats,
    uniqueTokens, uniqueBytes,
    delta: { bytesPerSession: deltaPerSession, overUnique: deltaPerSession / uniqueBytes, writeMs: deltaMs,
      completionsPerSec: completions / (deltaMs / 1000), tokensPerSec: (nSessions * tokensPerSession) / (deltaMs / 1000) },
    schema5: { bytesPerSession: schema5PerSession, overUnique: schema5PerSession / uniqueBytes, writeMs: schema5Ms,
      completionsPerSec: completions / (schema5Ms / 1000), tokensPerSec: (nSessions * tokensPerSession) / (schema5Ms / 1000) },
    throughputRatio: schema5Ms / deltaMs,
  };
}
