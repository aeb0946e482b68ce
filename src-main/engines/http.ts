// Keep-alive HTTP to engine replicas (one undici Pool per origin) and SSE reading.
import { Pool, type Dispatcher } from 'undici';
import { createParser } from 'eventsource-parser';
import { EngineError } from './types.js';

const pools = new Map<string, Pool>();

function poolFor(origin: string): Pool {
  let pool = pools.get(origin);
  if (!pool) {
    pool = new Pool(origin, { connections: 256, keepAliveTimeout: 30_000, pipelining: 1 });
    pools.set(origin, pool);
  }
  return pool;
}

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
  timeoutMs?: number;
}

export async function engineRequest(req: EngineHttpRequest): Promise<Dispatcher.ResponseData> {
  const url = new URL(req.path.replace(/^\//, ''), req.baseUrl.endsWith('/') ? req.baseUrl : req.baseUrl + '/');
  try {
    return await poolFor(url.origin).request({
      path: url.pathname + url.search,
      method: req.method ?? (req.body === undefined ? 'GET' : 'POST'),
      headers: { ...(req.body === undefined ? {} : { 'content-type': 'application/json' }), ...req.headers },
      body: req.body === undefined ? undefined : JSON.stringify(req.body),
      signal: req.signal,
      headersTimeout: req.timeoutMs ?? 300_000,
      bodyTimeout: req.timeoutMs ?? 300_000,
    });
  } catch (err) {
    if (req.signal?.aborted) throw err;
    throw new EngineError(`engine unreachable at ${url.origin}: ${(err as Error).message}`, 502);
  }
}

/** An engine's own health route answered 200 (both engines use `/health`). */
export async function probeHealth(replica: string, signal?: AbortSignal, timeoutMs = 5000): Promise<boolean> {
  try {
    const res = await engineRequest({ baseUrl: replica, path: '/health', signal, timeoutMs });
    await res.body.dump();
    return res.statusCode === 200;
  } catch { return false; }
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

/** Yields the `data:` payloads of an SSE body as they arrive, stopping at `[DONE]`. */
export async function* sseData(res: Dispatcher.ResponseData): AsyncGenerator<unknown> {
  const pending: string[] = [];
  const parser = createParser({ onEvent: (ev) => { pending.push(ev.data); } });
  const decoder = new TextDecoder();
  try {
    for await (const chunk of streamChunks(res)) {
      parser.feed(decoder.decode(chunk, { stream: true }));
      while (pending.length) {
        const data = pending.shift()!;
        if (data === '[DONE]') return;
        yield parseEvent(data);
      }
    }
  } finally {
    res.body.destroy();
  }
}

async function* streamChunks(res: Dispatcher.ResponseData): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of res.body) yield chunk as Uint8Array;
  } catch (err) {
    throw new EngineError(`engine stream broke: ${(err as Error).message}`, 502, true);
  }
}

function parseEvent(data: string): unknown {
  let payload: unknown;
  try { payload = JSON.parse(data); } catch {
    throw new EngineError(`engine sent a malformed stream event: ${data.slice(0, 200)}`, 502, true);
  }
  if (payload && typeof payload === 'object' && 'error' in payload && (payload as { error: unknown }).error) {
    const e = (payload as { error: { message?: string; code?: number } | string }).error;
    const msg = typeof e === 'string' ? e : e.message ?? 'engine error';
    throw new EngineError(msg, typeof e === 'object' && typeof e.code === 'number' ? e.code : 500, true);
  }
  return payload;
}
