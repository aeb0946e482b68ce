// Load generator (own process): reads LoadSpecs as JSON lines on stdin, drives the target with undici over
// loopback, prints a LoadResult JSON line for each.
//
// open loop:   requests are scheduled at a fixed offered rate whatever the target does; latency is measured
//              from the scheduled send time (no coordinated omission).
// closed loop: `concurrency` workers send back to back (maximum sustained throughput).
import { Pool } from 'undici';
import { summarize, type Summary } from './stats.js';

export interface LoadRequest { path: string; headers: Record<string, string>; body: string }

export interface LoadSpec {
  target: string;
  /** Sent round robin (e.g. one per session). */
  requests: LoadRequest[];
  stream: boolean;
  dialect: 'openai' | 'anthropic';
  mode: 'open' | 'closed';
  rate?: number;
  concurrency?: number;
  durationMs: number;
  /** Requests scheduled during the first warmupMs are sent but not measured. */
  warmupMs?: number;
  connections?: number;
  /** Give up on requests still running this long after the last was scheduled. */
  drainMs?: number;
}

export interface LoadResult {
  sent: number;
  measured: number;
  ok: number;
  errors: number;
  errorSamples: string[];
  durationMs: number;
  /** Completed ok requests per second over the measured window. */
  okPerSec: number;
  latency: Summary;
  /** Streaming only: time to the first event that carries output text. */
  ttft: Summary | null;
  /** CPU time the load generator itself used. */
  cpuMs: number;
}

interface Sample { latency: number; ttft: number | null; ok: boolean; error?: string }

/** True when an SSE `data:` payload carries output text (or a tool-call delta). */
function carriesOutput(dialect: LoadSpec['dialect'], data: string): boolean {
  if (data === '[DONE]') return false;
  try {
    const j = JSON.parse(data);
    if (dialect === 'anthropic') return j.type === 'content_block_delta';
    const d = j.choices?.[0]?.delta;
    return !!d && !!(d.content || d.reasoning || d.reasoning_content || d.tool_calls?.length);
  } catch { return false; }
}

function validate(dialect: LoadSpec['dialect'], stream: boolean, text: string): string | null {
  if (stream) {
    if (/"error"\s*:/.test(text) && (/event: error/.test(text) || /data: \{"error"/.test(text))) return `error event: ${text.slice(-300)}`;
    if (dialect === 'openai' ? !text.includes('data: [DONE]') : !text.includes('message_stop')) return `stream ended without its terminator: ${text.slice(-300)}`;
    return null;
  }
  try {
    const j = JSON.parse(text);
    if (dialect === 'openai' ? !Array.isArray(j.choices) : j.type !== 'message') return `unexpected body: ${text.slice(0, 300)}`;
    return null;
  } catch { return `not JSON: ${text.slice(0, 300)}`; }
}

async function one(pool: Pool, spec: LoadSpec, req: LoadRequest, scheduledAt: number): Promise<Sample> {
  let ttft: number | null = null;
  try {
    const res = await pool.request({ path: req.path, method: 'POST', headers: req.headers, body: req.body });
    let text = '';
    const decoder = new TextDecoder();
    let scan = 0;
    for await (const chunk of res.body) {
      text += decoder.decode(chunk as Uint8Array, { stream: true });
      if (spec.stream && ttft === null) {
        // Look at complete frames only.
        let end: number;
        while (ttft === null && (end = text.indexOf('\n\n', scan)) >= 0) {
          const frame = text.slice(scan, end);
          scan = end + 2;
          for (const line of frame.split('\n')) {
            if (line.startsWith('data: ') && carriesOutput(spec.dialect, line.slice(6))) { ttft = performance.now() - scheduledAt; break; }
          }
        }
      }
    }
    const latency = performance.now() - scheduledAt;
    if (res.statusCode !== 200) return { latency, ttft, ok: false, error: `HTTP ${res.statusCode}: ${text.slice(0, 300)}` };
    const bad = validate(spec.dialect, spec.stream, text);
    return bad ? { latency, ttft, ok: false, error: bad } : { latency, ttft, ok: true };
  } catch (err) {
    return { latency: performance.now() - scheduledAt, ttft, ok: false, error: (err as Error).message };
  }
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const cpu0 = process.cpuUsage();
  const pool = new Pool(spec.target, { connections: spec.connections ?? 1024, pipelining: 1, keepAliveTimeout: 60_000 });
  const samples: Sample[] = [];
  const warmup = spec.warmupMs ?? 0;
  const start = performance.now();
  const endAt = start + spec.durationMs;
  let sent = 0;
  const pending = new Set<Promise<void>>();
  const fire = (scheduledAt: number) => {
    const req = spec.requests[sent % spec.requests.length]!;
    sent++;
    const measured = scheduledAt - start >= warmup;
    const p: Promise<void> = one(pool, spec, req, scheduledAt).then((s) => { if (measured) samples.push(s); pending.delete(p); });
    pending.add(p);
    return p;
  };

  if (spec.mode === 'open') {
    const rate = spec.rate ?? 100;
    const interval = 1000 / rate;
    let next = start;
    while (next < endAt) {
      const now = performance.now();
      while (next <= now && next < endAt) { void fire(next); next += interval; }
      await new Promise((r) => setTimeout(r, Math.max(0, Math.min(1, next - performance.now()))));
    }
  } else {
    const worker = async () => {
      while (performance.now() < endAt) await fire(performance.now());
    };
    await Promise.all(Array.from({ length: spec.concurrency ?? 16 }, worker));
  }
  const drainUntil = performance.now() + (spec.drainMs ?? 15_000);
  while (pending.size && performance.now() < drainUntil) await Promise.race([...pending, new Promise((r) => setTimeout(r, 100))]);
  const unfinished = pending.size;
  const windowMs = spec.durationMs - warmup;
  // Snapshot before destroying the pool: requests still running then are counted once, as unfinished.
  const done = samples.slice();
  await pool.destroy();
  const ok = done.filter((s) => s.ok);
  const errs = done.filter((s) => !s.ok);
  if (unfinished) errs.push({ latency: NaN, ttft: null, ok: false, error: `${unfinished} requests not finished ${spec.drainMs ?? 15_000} ms after the last was sent` });
  const cpu = process.cpuUsage(cpu0);
  return {
    sent,
    measured: done.length + unfinished,
    ok: ok.length,
    errors: errs.length - (unfinished ? 1 : 0) + unfinished,
    errorSamples: [...new Set(errs.map((e) => e.error ?? ''))].slice(0, 5),
    durationMs: windowMs,
    okPerSec: ok.length / (windowMs / 1000),
    latency: summarize(ok.map((s) => s.latency)),
    ttft: spec.stream ? summarize(ok.map((s) => s.ttft).filter((t): t is number => t !== null)) : null,
    cpuMs: (cpu.user + cpu.system) / 1000,
  };
}

// Run as a process: one LoadSpec per stdin line, one LoadResult per stdout line (runs one at a time).
if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  const { createInterface } = await import('node:readline');
  const lines = createInterface({ input: process.stdin });
  let chain = Promise.resolve();
  lines.on('line', (line) => {
    if (!line.trim()) return;
    chain = chain.then(() => runLoad(JSON.parse(line) as LoadSpec)).then(
      (r) => { process.stdout.write(JSON.stringify(r) + '\n'); },
      (e) => { process.stdout.write(JSON.stringify({ fatal: String((e as Error).stack ?? e) }) + '\n'); },
    );
  });
  lines.on('close', () => { void chain.then(() => process.exit(0)); });
}
