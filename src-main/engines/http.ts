// Keep-alive HTTP to engine replicas (one undici Pool per origin) and SSE reading.
import { Pool, type Dispatcher } from 'undici';
import { createParser } from 'eventsource-parser';
import { EngineError } from './types.js';

const pools = new Map<string, Pool>();
/**
 * Sockets per replica. Every generation holds one for its whole stream, so this caps the calls a replica
 * sees at once: calls beyond it wait inside Rollgate, invisible to the engine's scheduler and metrics.
 * RL rollouts run hundreds to thousands of agents per replica, and engines queue excess work themselves.
 */
export const CONNECTIONS_PER_REPLICA = 2048;

function poolFor(origin: string): Pool {
  let pool = pools.get(origin);
  if (!pool) {
    pool = new Pool(origin, { connections: CONNECTIONS_PER_REPLICA, keepAliveTimeout: 30_000, pipelining: 1 });
    pools.set(origin, pool);
  }
  return pool;
}

/** How long an engine may take to send response headers, and to send anything between body chunks. */
export interface EngineTimeouts {
  headersMs: number;
  bodyMs: number;
}

/**
 * Defaults are generous on purpose: an engine may queue a request for minutes before answering, and a
 * paused engine (weight sync, `keep` mode) holds open streams silent until it resumes.
 */
export const DEFAULT_ENGINE_TIMEOUTS: Readonly<EngineTimeouts> = { headersMs: 300_000, bodyMs: 300_000 };

export async function closeEnginePools(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  await Promise.all(all.map((p) => p.close().catch(() => undefined)));
}

export interface EngineHttpRequest {
  baseUrl: string;
  path: string;
  method?: 'GET' | 'POST';
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** One limit for headers and for the gaps between body chunks (health checks, metrics). */
  timeoutMs?: number;
  /** Generation calls: the pool's timeouts for its engines. */
  timeouts?: EngineTimeouts;
}

export async function engineRequest(req: EngineHttpRequest): Promise<Dispatcher.ResponseData> {
  const url = new URL(req.path.replace(/^\//, ''), req.baseUrl.endsWith('/') ? req.baseUrl : req.baseUrl + '/');
  const t = req.timeouts ?? DEFAULT_ENGINE_TIMEOUTS;
  const headersTimeout = req.timeoutMs ?? t.headersMs;
  const bodyTimeout = req.timeoutMs ?? t.bodyMs;
  try {
    const res = await poolFor(url.origin).request({
      path: url.pathname + url.search,
      method: req.method ?? (req.body === undefined ? 'GET' : 'POST'),
      headers: { ...(req.body === undefined ? {} : { 'content-type': 'application/json' }), ...req.headers },
      body: req.body === undefined ? undefined : JSON.stringify(req.body),
      signal: req.signal,
      headersTimeout,
      bodyTimeout,
    });
    bodyTimeouts.set(res.body, bodyTimeout);
    return res;
  } catch (err) {
    if (req.signal?.aborted) throw err;
    if ((err as { code?: string }).code === 'UND_ERR_HEADERS_TIMEOUT') {
      throw new EngineError(`engine at ${url.origin} sent no response within ${headersTimeout} ms`, 504);
    }
    throw new EngineError(`engine unreachable at ${url.origin}: ${(err as Error).message}`, 502);
  }
}

/** The body timeout each response was opened with (for the error message when it fires). */
const bodyTimeouts = new WeakMap<object, number>();

/** An engine's own health route answered 200 (both engines use `/health`). */
export async function probeHealth(replica: string, signal?: AbortSignal, timeoutMs = 5000): Promise<boolean> {
  return (await healthProblem(replica, signal, timeoutMs)) === null;
}

/** Why the replica's health route did not answer 200 (the connection error, or the status), or null when it did. */
export async function healthProblem(replica: string, signal?: AbortSignal, timeoutMs = 5000): Promise<string | null> {
  try {
    const res = await engineRequest({ baseUrl: replica, path: '/health', signal, timeoutMs });
    await res.body.dump();
    return res.statusCode === 200 ? null : `${replica}/health answered HTTP ${res.statusCode}`;
  } catch (err) {
    return (err as Error).message;
  }
}

/** Reads an error body whatever envelope the engine used (vLLM nested, SGLang flat, plain text). */
export async function engineErrorFrom(res: Dispatcher.ResponseData): Promise<EngineError> {
  const text = await res.body.text().catch(() => '');
  let message = text || `engine answered HTTP ${res.statusCode}`;
  try {
    const parsed = JSON.parse(text) as { error?: { message?: string } | string; message?: string };
    message = (typeof parsed.error === 'object' ? parsed.error?.message : parsed.error) ?? parsed.message ?? message;
  } catch { /* not JSON: keep the text */ }
  return new EngineError(message, res.statusCode);
}

/**
 * Yields the `data:` payloads of an SSE body as they arrive, stopping at `[DONE]`. vLLM and SGLang end every
 * stream with `[DONE]`: a body that ends without it (a cut connection, a proxy timeout, not SSE at all)
 * is an engine failure, never a complete answer.
 */
export async function* sseData(res: Dispatcher.ResponseData): AsyncGenerator<unknown> {
  const pending: string[] = [];
  const parser = createParser({ onEvent: (ev) => { pending.push(ev.data); } });
  const decoder = new TextDecoder();
  let done = false;
  try {
    // After [DONE] the body is read to its end rather than dropped, so the keep-alive connection is reused.
    for await (const chunk of streamChunks(res)) {
      if (done) continue;
      parser.feed(decoder.decode(chunk, { stream: true }));
      while (pending.length && !done) {
        const data = pending.shift()!;
        if (data === '[DONE]') done = true;
        else yield parseEvent(data);
      }
    }
    if (!done) throw new EngineError('engine stream ended without [DONE]', 502, true);
  } finally {
    if (!res.body.readableEnded) res.body.destroy();
  }
}

async function* streamChunks(res: Dispatcher.ResponseData): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of res.body) yield chunk as Uint8Array;
  } catch (err) {
    if ((err as { code?: string }).code === 'UND_ERR_BODY_TIMEOUT') {
      throw new EngineError(`engine stream stalled: nothing received for ${bodyTimeouts.get(res.body) ?? '?'} ms`, 504, true);
    }
    throw new EngineError(`engine stream broke: ${(err as Error).message}`, 502, true);
  }
}

function parseEvent(data: string): unknown {
  let payload: unknown;
  try { payload = JSON.parse(data); } catch {
    throw new EngineError(`engine sent a malformed stream event: ${data.slice(0, 200)}`, 502, true);
  }
  if (!payload || typeof payload !== 'object' || Array.isArray(payload)) {
    throw new EngineError(`engine sent a stream event that is not a JSON object: ${data.slice(0, 200)}`, 502, true);
  }
  if ('error' in payload && (payload as { error: unknown }).error) {
    const e = (payload as { error: { message?: string; code?: number } | string }).error;
    const msg = typeof e === 'string' ? e : e.message ?? 'engine error';
    throw new EngineError(msg, typeof e === 'object' && typeof e.code === 'number' ? e.code : 500, true);
  }
  return payload;
}
