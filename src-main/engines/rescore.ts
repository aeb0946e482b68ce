// Cross-engine re-scoring (DESIGN §8): ask an engine for the logprob of every token of a given token
// sequence (prompt scoring), per engine kind. The maths over the results lives in core/trajectory.
//
// - vLLM: POST /v1/completions {prompt: ids, max_tokens: 1, prompt_logprobs: 0, return_token_ids: true}.
//   `choices[0].prompt_logprobs[i]` is null at 0, else {"<id>": {logprob, rank, decoded_token}}; with
//   prompt_logprobs 0 it holds the prompt token itself. (vLLM needs max_tokens ≥ 1; the one sampled token
//   is ignored.)
// - SGLang: POST /generate {input_ids, sampling_params: {max_new_tokens: 0}, return_logprob: true,
//   logprob_start_len: 0}. `meta_info.input_token_logprobs[j]` = [logprob|null, id, text|null] for
//   position j. An engine that refuses max_new_tokens 0 is asked again with 1.
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

export function vllmScoreBody(model: string, ids: ArrayLike<number>): Record<string, unknown> {
  return {
    model, prompt: Array.from(ids), max_tokens: 1, temperature: 0, prompt_logprobs: 0, return_token_ids: true, stream: false,
  };
}

export function sglangScoreBody(ids: ArrayLike<number>, maxNewTokens: 0 | 1 = 0): Record<string, unknown> {
  return {
    input_ids: Array.from(ids), sampling_params: { max_new_tokens: maxNewTokens, temperature: 0 },
    return_logprob: true, logprob_start_len: 0, stream: false,
  };
}

function bad(engineId: string, what: string): EngineError {
  return new EngineError(`engine ${engineId} re-score: ${what}`, 502);
}

function sameIds(a: unknown, ids: ArrayLike<number>): boolean {
  if (!Array.isArray(a) || a.length !== ids.length) return false;
  for (let i = 0; i < ids.length; i++) if (a[i] !== ids[i]) return false;
  return true;
}

/** Reads vLLM /v1/completions prompt_logprobs into per-position logprobs of `ids`. */
export function parseVllmPromptLogprobs(json: unknown, ids: ArrayLike<number>, engineId = 'vllm'): Array<number | null> {
  const choice = (json as { choices?: Array<Record<string, unknown>> } | null)?.choices?.[0];
  if (!choice) throw bad(engineId, 'response has no choices');
  if (choice.prompt_token_ids != null && !sameIds(choice.prompt_token_ids, ids)) {
    throw bad(engineId, 'the engine changed the prompt ids (prompt_token_ids differ from the ids sent)');
  }
  const pl = choice.prompt_logprobs;
  if (!Array.isArray(pl)) throw bad(engineId, 'response has no prompt_logprobs (is this vLLM ≥ 0.4 with a token-id prompt?)');
  if (pl.length !== ids.length) throw bad(engineId, `prompt_logprobs has ${pl.length} positions for ${ids.length} ids`);
  const out: Array<number | null> = new Array(ids.length);
  for (let i = 0; i < ids.length; i++) {
    const entry = pl[i] as Record<string, { logprob?: unknown }> | null;
    if (i === 0 || entry == null) {
      out[i] = null;
      continue;
    }
    const lp = entry[String(ids[i])]?.logprob;
    if (typeof lp !== 'number') throw bad(engineId, `prompt_logprobs[${i}] lacks token ${ids[i]}`);
    out[i] = lp;
  }
  return out;
}

/** Reads SGLang /generate meta_info.input_token_logprobs (logprob_start_len 0) into per-position logprobs. */
export function parseSglangInputLogprobs(json: unknown, ids: ArrayLike<number>, engineId = 'sglang'): Array<number | null> {
  const item = Array.isArray(json) ? json[0] : json;
  const triples = (item as { meta_info?: { input_token_logprobs?: unknown } } | null)?.meta_info?.input_token_logprobs;
  if (!Array.isArray(triples)) throw bad(engineId, 'response has no meta_info.input_token_logprobs');
  // Positions start..P-1; with logprob_start_len 0 that is all of them (some versions omit position 0).
  const start = ids.length - triples.length;
  if (start < 0 || start > 1) throw bad(engineId, `input_token_logprobs has ${triples.length} positions for ${ids.length} ids`);
  const out: Array<number | null> = new Array(ids.length).fill(null);
  for (let j = 0; j < triples.length; j++) {
    const i = start + j;
    const t = triples[j] as [unknown, unknown, unknown?];
    if (!Array.isArray(t)) throw bad(engineId, `input_token_logprobs[${j}] is not a triple`);
    if (typeof t[1] === 'number' && t[1] !== ids[i]) throw bad(engineId, `the engine scored token ${t[1]} at position ${i}, expected ${ids[i]}`);
    out[i] = i === 0 || typeof t[0] !== 'number' ? null : t[0];
  }
  return out;
}

async function postJson(input: ScoreTokensInput, path: string, body: unknown): Promise<{ status: number; json?: unknown; error?: EngineError }> {
  const res = await engineRequest({ baseUrl: input.replica, path, body, signal: input.signal, timeoutMs: input.timeoutMs, timeouts: input.timeouts });
  if (res.statusCode >= 400) return { status: res.statusCode, error: await engineErrorFrom(res) };
  const text = await res.body.text();
  try {
    return { status: res.statusCode, json: JSON.parse(text) };
  } catch {
    throw bad(input.engine.id, `response is not JSON: ${text.slice(0, 200)}`);
  }
}

/** Logprob of every token of `ids` under the engine (one request; ids.length ≥ 2 to score anything). */
export async function scoreTokens(input: ScoreTokensInput): Promise<ScoreTokensResult> {
  const { engine, ids } = input;
  if (ids.length === 0) return { logprobs: [], requestServed: null };
  if (engine.kind === 'vllm') {
    const body = vllmScoreBody(engine.model, ids);
    const r = await postJson(input, '/v1/completions', body);
    if (r.error) throw r.error;
    return { logprobs: parseVllmPromptLogprobs(r.json, ids, engine.id), requestServed: body };
  }
  if (engine.kind === 'sglang') {
    let body = sglangScoreBody(ids, 0);
    let r = await postJson(input, '/generate', body);
    if (r.error && r.status >= 400 && r.status < 500) {
      body = sglangScoreBody(ids, 1);
      r = await postJson(input, '/generate', body);
    }
    if (r.error) throw r.error;
    return { logprobs: parseSglangInputLogprobs(r.json, ids, engine.id), requestServed: body };
  }
  throw new EngineError(`engine ${engine.id}: re-scoring is not supported for kind ${String(engine.kind)}`, 400);
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
