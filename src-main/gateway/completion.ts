// One agent call: parse in the agent's dialect, run on the session's engine with real streaming,
// commit the record, and only then send the final frames (DESIGN §3, §5).
import { createHash, randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { DialectCodec, ParseContext, StreamEncoder } from '../core/dialects/codec.js';
import { DialectError } from '../core/dialects/codec.js';
import { redactSecrets } from '../core/redact.js';
import { canonicalResponse } from '../core/response.js';
import { captureProblem } from '../core/capture-check.js';
import type { CanonicalRequest, CanonicalResponse, CompletionRecord, CompletionStatus, Dialect, IncompleteReason, SessionRecord } from '../core/types.js';
import { EngineAbortedError, EnginePausedError } from '../engines/pool.js';
import { usageWithReasoning } from '../engines/reasoning-tokens.js';
import { tokenizerSpecOf } from '../engines/token-format.js';
import { CaptureError, EngineError, type EngineResult } from '../engines/types.js';
import { StoreUnavailableError } from '../store/index.js';
import type { GatewayDeps } from './deps.js';
import { logServerError, sendDialectError } from './errors.js';

interface CallState {
  id: string;
  created: number;
  startedAt: number;
  firstTokenAt: number | null;
  admittedAt: () => number | null;
}

export async function handleCompletion(
  deps: GatewayDeps,
  codec: DialectCodec,
  session: SessionRecord,
  req: FastifyRequest,
  reply: FastifyReply,
  parseCtx: ParseContext = {},
): Promise<void> {
  let parsed;
  try {
    parsed = codec.parseRequest(req.body, parseCtx);
  } catch (err) {
    if (err instanceof DialectError) return sendDialectError(reply, codec, err.status, err.message, err.type);
    throw err;
  }
  const { canonical, context } = parsed;
  const engineId = session.engineId ?? deps.pool.defaultEngineId;
  if (!engineId || !deps.pool.get(engineId)) return sendDialectError(reply, codec, 503, `engine ${engineId ?? '(none)'} is not configured`);
  const tooLong = await outputBeyondContext(deps, engineId, canonical.max_tokens);
  if (tooLong) return sendDialectError(reply, codec, 400, `${MAX_TOKENS_FIELD[codec.dialect]}: ${tooLong}`, 'invalid_request_error');

  const state: CallState = { id: randomBytes(12).toString('hex'), created: Math.floor(Date.now() / 1000), startedAt: performance.now(), firstTokenAt: null, admittedAt: () => null };
  const bodyHash = createHash('sha256').update(JSON.stringify(req.body)).digest('hex');
  let retryOf: string | null;
  let seq: number;
  // Custody (DESIGN §9): the intent is committed before the engine is called; the completion's commit
  // removes it. One left over after a crash marks the call lost (store.completions.recoverDanglingIntents).
  // A store that cannot answer (Postgres unreachable) refuses the call here, before any engine work.
  try {
    retryOf = isSdkRetry(req) ? (await deps.store.completions.findByBodyHash(session.id, bodyHash))?.id ?? null : null;
    seq = await deps.store.completions.reserveSeq(session.id);
    await deps.store.writer.putIntent({ id: state.id, sessionId: session.id, seq, dialect: codec.dialect, engineId, createdAt: Date.now() });
  } catch (err) {
    const retryAfter = err instanceof StoreUnavailableError ? err.retryAfterSec : undefined;
    return sendDialectError(reply, codec, 503, `could not record the call before running it: ${(err as Error).message}`, undefined, retryAfter);
  }

  const abort = new AbortController();
  const onClose = () => { if (!reply.raw.writableFinished) abort.abort(new Error('client disconnected')); };
  reply.raw.on('close', onClose);

  const base = {
    id: state.id, sessionId: session.id, seq, dialect: codec.dialect, engineId,
    requestReceived: redactSecrets(req.body), retryOf, createdAt: Date.now(),
  };
  let encoder: StreamEncoder | null = null;
  const poolRun = deps.pool.run(engineId, session.id, {
    request: canonical, signal: abort.signal, sessionHistory: deps.turns.history(session.id), canFailover: () => encoder === null,
  });
  state.admittedAt = () => poolRun.admittedAt;
  const record = (fields: Partial<CompletionRecord> & { status: CompletionStatus }): CompletionRecord => ({
    ...base, replica: poolRun.replica, policyVersion: poolRun.policyVersion, requestServed: null, response: null, finishReason: null, usage: null, error: null,
    promptIds: new Int32Array(0), outputIds: new Int32Array(0), outputLogprobs: new Float32Array(0),
    timings: timings(state), ...fields,
  });

  const run = poolRun.events;
  // Once the ok record is committed it stands: a failure after it (sending the answer) writes no second record.
  let committed = false;
  try {
    let step = await run.next();
    while (!step.done) {
      state.firstTokenAt ??= performance.now();
      if (canonical.stream) {
        encoder ??= openStream(reply, codec, context, state, canonical);
        write(reply, encoder.delta(step.value));
        // Backpressure: while the agent does not read, the engine is not read either (its socket fills and it
        // slows down), so an agent that stops reading holds one socket buffer, not the rest of the answer.
        const socket = reply.raw.socket;
        if (socket && socket.writableLength >= socket.writableHighWaterMark) await drained(socket, deps.agentStallMs ?? AGENT_STALL_MS, abort);
      }
      step = await run.next();
    }
    const result: EngineResult = step.value;
    const usage = await usageWithReasoning(result, tokenizerSpecOf(deps.pool.get(engineId)?.config ?? {}));
    const response = canonicalResponse({ id: state.id, model: canonical.model, created: state.created }, result, result.finishReason, usage, result.stopSequence);
    const problem = captureProblem(result, response.message);
    if (problem) throw new CaptureError(problem.message, problem.reason);
    await deps.store.writer.putCompletion(record({
      status: 'ok', requestServed: redactSecrets(result.requestServed), response, finishReason: response.finish_reason, usage,
      promptIds: result.promptIds, outputIds: result.outputIds, outputLogprobs: result.outputLogprobs,
    }), { bodyHash });
    committed = true;
    deps.turns.remember(session.id, { request: canonical, capture: result });
    deps.events.emit({ type: 'completion', sessionId: session.id, id: state.id, status: 'ok' });
    const answer = canonical.logprobs ? withSampledLogprobs(response, result) : response;
    if (canonical.stream) {
      encoder ??= openStream(reply, codec, context, state, canonical);
      write(reply, encoder.finish(answer));
      endStream(reply);
    } else {
      reply.code(200).send(codec.encodeResponse(answer, context));
    }
  } catch (err) {
    const clientGone = abort.signal.aborted;
    if (err instanceof EnginePausedError) {
      // Refused before reaching an engine: nothing to record, the agent retries after Retry-After.
      deps.store.writer.dropIntent(state.id).catch((e) => req.log.error({ err: e }, 'could not drop a call intent'));
      return sendDialectError(reply, codec, 429, err.message, undefined, err.retryAfterSec);
    }
    if (err instanceof StoreUnavailableError) {
      // The database is locked elsewhere: nothing can be recorded now, so nothing is acknowledged; the agent
      // retries after Retry-After. Its intent goes too (queued, so it commits once the lock goes): left behind it
      // would become a lost-in-crash call at the next start and mask the agent's successful retry.
      deps.store.writer.dropIntent(state.id).catch((e) => req.log.error({ err: e }, 'could not drop a call intent'));
      if (clientGone) { reply.raw.destroy(); return; }
      if (encoder) {
        logServerError(req, 503, err.message);
        write(reply, encoder.error(503, err.message));
        endStream(reply);
      } else {
        sendDialectError(reply, codec, 503, err.message, undefined, err.retryAfterSec);
      }
      return;
    }
    const aborted = clientGone || err instanceof EngineAbortedError;
    const status = err instanceof EngineError ? err.status : 500;
    const message = clientGone ? String((abort.signal.reason as Error | undefined)?.message ?? 'client disconnected') : err instanceof Error ? err.message : String(err);
    // Malformed capture, or the engine failed after the agent had part of the answer: never trainable.
    const incomplete: IncompleteReason | null = err instanceof CaptureError ? err.reason
      : !aborted && encoder !== null ? 'engine-error-mid-stream' : null;
    const recorded: CompletionStatus = incomplete ? 'incomplete' : aborted ? 'aborted' : 'error';
    if (committed) {
      req.log.error({ err }, 'failed after its completion was recorded');
    } else {
      await deps.store.writer.putCompletion(record({
        status: recorded, error: incomplete ? `${incomplete}: ${message}` : message, ...(incomplete ? { incompleteReason: incomplete } : {}),
      }), { bodyHash })
        .catch((e) => req.log.error({ err: e }, 'could not record failed completion'));
      deps.events.emit({ type: 'completion', sessionId: session.id, id: state.id, status: recorded });
    }
    if (clientGone) { reply.raw.destroy(); return; }
    if (encoder) {
      if (status >= 500 || status < 400) logServerError(req, status >= 400 ? status : 502, message);
      write(reply, encoder.error(status >= 400 ? status : 502, message));
      endStream(reply);
    } else {
      sendDialectError(reply, codec, status >= 400 && status < 600 ? status : 502, message);
    }
  } finally {
    reply.raw.off('close', onClose);
    // A hijacked stream must always end, whatever failed above, or the agent waits for ever.
    if (encoder && !reply.raw.writableEnded) reply.raw.end();
  }
}

/** How long an agent may leave its stream unread before the call is given up and its engine call aborted. */
export const AGENT_STALL_MS = 300_000;

/**
 * Resolves once the agent's socket has sent what was written (or has closed); gives the call up after `stallMs`.
 * The socket, not the response: a response's own 'drain' comes only after a write it saw refused, and corked
 * writes are not.
 */
function drained(raw: Socket, stallMs: number, abort: AbortController): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      raw.off('drain', done);
      raw.off('close', done);
      resolve();
    };
    const timer = setTimeout(() => {
      abort.abort(new Error(`the agent did not read its stream for ${Math.round(stallMs / 1000)} s`));
      done();
    }, stallMs);
    raw.on('drain', done);
    raw.on('close', done);
  });
}

/** Where each dialect asks for the output budget (OpenAI chat also takes max_completion_tokens). */
const MAX_TOKENS_FIELD: Record<Dialect, string> = {
  'openai-chat': 'max_tokens', 'openai-responses': 'max_output_tokens', anthropic: 'max_tokens', gemini: 'generationConfig.maxOutputTokens',
};

/**
 * An output budget larger than the model's whole context can never be met: the agent is told (400), where a
 * budget that only overlaps the prompt is fitted into the room left (engines/context-room.ts).
 */
async function outputBeyondContext(deps: GatewayDeps, engineId: string, maxTokens: number | undefined): Promise<string | null> {
  if (maxTokens === undefined || maxTokens <= 4096) return null; // no engine has less context: no need to ask
  const context = await deps.pool.contextLength(engineId);
  return context !== null && maxTokens > context ? `${maxTokens} is more than the model's whole context (${context} tokens)` : null;
}

function isSdkRetry(req: FastifyRequest): boolean {
  const n = Number(req.headers['x-stainless-retry-count'] ?? 0);
  return Number.isFinite(n) && n > 0;
}

function timings(s: CallState) {
  const now = performance.now();
  return {
    queueMs: Math.max(0, (s.admittedAt() ?? now) - s.startedAt),
    ttftMs: s.firstTokenAt === null ? null : s.firstTokenAt - s.startedAt,
    totalMs: now - s.startedAt,
  };
}

function openStream(reply: FastifyReply, codec: DialectCodec, context: unknown, state: CallState, canonical: CanonicalRequest): StreamEncoder {
  reply.hijack();
  reply.raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  const encoder = codec.streamEncoder(context, { id: state.id, model: canonical.model, created: state.created });
  write(reply, encoder.start());
  return encoder;
}

/** Ends the SSE response; corked frames go first (http's end() does not flush a corked chunked body). */
function endStream(reply: FastifyReply): void {
  const raw = reply.raw;
  while (raw.writableCorked) raw.uncork();
  raw.end();
}

/**
 * Frames produced in the same tick (one engine chunk often carries several tokens) leave in one write:
 * the socket is corked until the next tick, so a burst of deltas costs one syscall, not one per token.
 */
function write(reply: FastifyReply, frames: string[]): void {
  if (!frames.length) return;
  const raw = reply.raw;
  if (!raw.writableCorked) {
    raw.cork();
    process.nextTick(() => raw.uncork());
  }
  raw.write(frames.join(''));
}

/** The answer with the recorded logprobs of its sampled ids (tokens named as vLLM does with ids: `token_id:N`). */
function withSampledLogprobs(response: CanonicalResponse, capture: Pick<EngineResult, 'outputIds' | 'outputLogprobs'>): CanonicalResponse {
  const logprobs: Array<{ token: string; logprob: number }> = [];
  for (let i = 0; i < capture.outputIds.length; i++) logprobs.push({ token: `token_id:${capture.outputIds[i]}`, logprob: capture.outputLogprobs[i] });
  return { ...response, logprobs };
}
