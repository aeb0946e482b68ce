// Token-mode prompt building at long contexts (issue 13): 8 concurrent sessions whose conversations hold
// ~128k tokens (this repository's source files as tool results), each built as a first turn (render +
// encode everything) and then as a next turn that reuses the sampled ids (render + encode the tail). The
// same builds run on the main thread (the baseline: what token mode did before) and through the worker
// pool, in one process and run; event-loop delay is sampled throughout. Prints one JSON object.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CanonicalRequest, ChatMessage } from '../src-main/core/types.js';
import { buildPromptOffThread, closePromptPool } from '../src-main/engines/prompt-pool.js';
import { loadTokenFormat, type TokenFormat } from '../src-main/engines/token-format.js';
import { buildTokenPrompt, reusableTurns, type TokenHistory } from '../src-main/engines/token-prompt.js';
import { percentile } from './stats.js';

interface Spec { sessions?: number; contextTokens?: number }
const spec: Spec = JSON.parse(process.argv[2] ?? '{}');
const SESSIONS = spec.sessions ?? 8;
const CONTEXT = spec.contextTokens ?? 128_000;
const ROOT = join(import.meta.dirname, '..');
const TOOLS = [{ type: 'function' as const, function: { name: 'read_file', description: 'Read a file of the repository.', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } } }];

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (e.isDirectory()) sourceFiles(join(dir, e.name), out);
    else if (e.name.endsWith('.ts')) out.push(join(dir, e.name));
  }
  return out;
}

/** A session's conversation: read_file calls and their results until the prompt holds ~CONTEXT tokens. */
function conversation(fmt: TokenFormat, session: number): CanonicalRequest {
  const files = sourceFiles(join(ROOT, 'src-main'));
  const messages: ChatMessage[] = [{ role: 'system', content: `You are coding agent ${session}.` }, { role: 'user', content: 'Read the sources and summarise them.' }];
  let tokens = 0;
  for (let i = session; tokens < CONTEXT; i++) {
    const path = files[i % files.length]!;
    const text = readFileSync(path, 'utf8');
    tokens += fmt.tok.encode(text).length + 40;
    const id = `call_${session}_${i}`;
    messages.push({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'read_file', arguments: JSON.stringify({ path }) } }] });
    messages.push({ role: 'tool', tool_call_id: id, content: text });
  }
  return { model: 'm', messages, tools: TOOLS, stream: false };
}

/** The next turn of a session: the model's answer (as sampled ids) and a new user message. */
function nextTurn(fmt: TokenFormat, req: CanonicalRequest, promptIds: Int32Array): { next: CanonicalRequest; history: TokenHistory } {
  const answer = 'The sources implement a gateway.';
  const outputIds = Int32Array.from([...fmt.tok.encode(answer), fmt.stopIds[0]!]);
  const next = { ...req, messages: [...req.messages, { role: 'assistant' as const, content: answer }, { role: 'user' as const, content: 'Now list the tests.' }] };
  return { next, history: [{ request: req, capture: { promptIds, outputIds } }] };
}

/**
 * Event-loop lag: a 1 ms timer notes how late each tick fires. A loop blocked for 800 ms shows as one
 * 800 ms sample, the way a streaming session on the same loop sees it.
 */
function lagSampler() {
  const lags: number[] = [];
  let expected = performance.now() + 1;
  let timer: NodeJS.Timeout | null = null;
  const tick = () => {
    const now = performance.now();
    lags.push(Math.max(0, now - expected));
    expected = now + 1;
    timer = setTimeout(tick, 1);
  };
  timer = setTimeout(tick, 1);
  return {
    stop() {
      if (timer) clearTimeout(timer);
      const s = lags.sort((a, b) => a - b);
      return { samples: s.length, p50: percentile(s, 50), p99: percentile(s, 99), max: s.at(-1) ?? 0 };
    },
  };
}

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);

async function phase(name: string, build: (fmt: TokenFormat, req: CanonicalRequest, history: TokenHistory) => Promise<Int32Array>, fmt: TokenFormat, reqs: CanonicalRequest[]) {
  const firstMs: number[] = [];
  const nextMs: number[] = [];
  let tokens = 0;
  const lag = lagSampler();
  const t0 = performance.now();
  await Promise.all(reqs.map(async (req) => {
    let t = performance.now();
    const first = await build(fmt, req, []);
    firstMs.push(performance.now() - t);
    tokens += first.length;
    const { next, history } = nextTurn(fmt, req, first);
    t = performance.now();
    const second = await build(fmt, next, history);
    nextMs.push(performance.now() - t);
    if (second.length <= first.length) throw new Error(`${name}: the next turn did not reuse the first`);
  }));
  const wallMs = performance.now() - t0;
  const loopDelayMs = lag.stop();
  return {
    name, sessions: reqs.length, meanPromptTokens: Math.round(tokens / reqs.length), wallMs,
    // What a session waits for its prompt (queueing behind the other sessions' builds included).
    firstTurn: { p50: percentile(sorted(firstMs), 50), p99: percentile(sorted(firstMs), 99) },
    reuseTurn: { p50: percentile(sorted(nextMs), 50), p99: percentile(sorted(nextMs), 99) },
    loopDelayMs,
  };
}

const fmt = await loadTokenFormat({ tokenizer: 'builtin:qwen3' });
const reqs = Array.from({ length: SESSIONS }, (_, s) => conversation(fmt, s));
// The baseline yields between builds (as concurrent sessions' awaits would), but each build blocks the loop.
const mainThread = await phase('main thread', async (f, req, history) => {
  await new Promise((r) => setImmediate(r));
  return buildTokenPrompt(f, req, reusableTurns(f, req, history)).promptIds;
}, fmt, reqs);
// Warm the workers (each loads the tokenizer once), then measure.
await Promise.all(Array.from({ length: 4 }, () => buildPromptOffThread(fmt, { tokenizer: 'builtin:qwen3' }, { model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: false }, [])));
const workers = await phase('worker pool', async (f, req, history) => (await buildPromptOffThread(f, { tokenizer: 'builtin:qwen3' }, req, history)).promptIds, fmt, reqs);
await closePromptPool();
console.log(JSON.stringify({
  mainThread, workers,
  loopDelayP99Ratio: workers.loopDelayMs.p99 / mainThread.loopDelayMs.p99,
  targetLoopDelayP99Ms: 20,
}));
