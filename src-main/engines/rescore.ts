// Cross-engine re-scoring (DESIGN §8): ask an engine for the logprob of every token of a given token
// sequence (prompt scoring). The route, bodies and reply format are the engine driver's (drivers/*/scoring.ts);
// the maths over the results lives in core/trajectory.
import { driverFor } from './drivers/index.js';
import { engineErrorFrom, engineRequest, type EngineTimeouts } from './http.js';
import { EngineError, type EngineConfig } from './types.js';

export interface ScoreTokensInput {
  engine: Pick<EngineConfig, 'id' | 'kind' | 'model'>;
  replica: string;
  ids: ArrayLike<number>;
  signal?: AbortSignal;
  /** One limit for this call; otherwise `timeouts` (the pool's engine timeouts), else the defaults. */
  timeoutMs?: number;
  timeouts?: EngineTimeouts;
}

export interface ScoreTokensResult {
  /** logprob of ids[i] given ids[0..i); null at position 0. */
  logprobs: Array<number | null>;
  /** The body sent to the engine. */
  requestServed: unknown;
}

async function postJson(input: ScoreTokensInput, path: string, body: unknown): Promise<{ status: number; json?: unknown; error?: EngineError }> {
  const res = await engineRequest({ baseUrl: input.replica, path, body, signal: input.signal, timeoutMs: input.timeoutMs, timeouts: input.timeouts });
  if (res.statusCode >= 400) return { status: res.statusCode, error: await engineErrorFrom(res) };
  const text = await res.body.text();
  try {
    return { status: res.statusCode, json: JSON.parse(text) };
  } catch {
    throw new EngineError(`engine ${input.engine.id} re-score: response is not JSON: ${text.slice(0, 200)}`, 502);
  }
}

/** Logprob of every token of `ids` under the engine (one request; ids.length ≥ 2 to score anything). */
export async function scoreTokens(input: ScoreTokensInput): Promise<ScoreTokensResult> {
  const { engine, ids } = input;
  if (ids.length === 0) return { logprobs: [], requestServed: null };
  const scoring = driverFor(engine.kind).scoring;
  const bodies = scoring.bodies(engine.model, ids);
  for (let i = 0; ; i++) {
    const body = bodies[i]!;
    const r = await postJson(input, scoring.path, body);
    // An engine refusing one variant (SGLang and max_new_tokens 0) is asked with the next.
    if (r.error && r.status >= 400 && r.status < 500 && i + 1 < bodies.length) continue;
    if (r.error) throw r.error;
    return { logprobs: scoring.parse(r.json, ids, engine.id), requestServed: body };
  }
}

/** The parts of the engine pool re-scoring uses (replica list with load, the weight-sync pause gate). */
export interface ScorePool {
  get(id: string): { config: EngineConfig; replicas: Array<{ url: string; healthy: boolean; inFlight: number }> } | undefined;
  gate?: { admit(signal?: AbortSignal): Promise<void> };
  /** The timeouts generation calls to these engines use. */
  readonly timeouts?: EngineTimeouts;
}

/**
 * scoreTokens on one of the engine's replicas: waits at the pause gate like any engine call, takes the
 * least-loaded healthy replica (counted in its in-flight load while scoring), and tries the next replica
 * when one is unreachable or answers 5xx.
 */
export async function scoreOnPool(
  pool: ScorePool, engineId: string, ids: ArrayLike<number>, opts: { signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<ScoreTokensResult & { replica: string }> {
  const engine = pool.get(engineId);
  if (!engine) throw new EngineError(`unknown engine ${engineId}`, 404);
  await pool.gate?.admit(opts.signal);
  const healthy = engine.replicas.filter((r) => r.healthy);
  const order = [...(healthy.length ? healthy : engine.replicas)].sort((a, b) => a.inFlight - b.inFlight);
  let last: unknown = null;
  for (const replica of order) {
    replica.inFlight++;
    try {
      const r = await scoreTokens({ engine: engine.config, replica: replica.url, ids, signal: opts.signal, timeoutMs: opts.timeoutMs, timeouts: pool.timeouts });
      return { ...r, replica: replica.url };
    } catch (err) {
      last = err;
      if (opts.signal?.aborted || !(err instanceof EngineError) || err.status < 500) throw err;
    } finally {
      replica.inFlight--;
    }
  }
  throw last ?? new EngineError(`engine ${engineId} has no replicas`, 502);
}
