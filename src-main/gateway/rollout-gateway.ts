// prime-rl's rollout-gateway API (PR #1757), the server verifiers' `RolloutGatewayMixin` talks to, backed by
// ordinary Rollgate sessions (so each rollout shows up in the workbench with its token-level capture):
//
//   POST /v1/rollouts/{id}/register          trainer  {model, sampling_params, max_turns, max_seq_len} → 200; 409 if registered
//   POST /v1/rollouts/{id}/chat/completions  agent    OpenAI chat, streaming for real; 404 unknown, 409 cancelled/completed/max turns
//   GET  /v1/rollouts/{id}/trajectory        trainer  {rollout_id, status, num_turns, model, prompt, completion, is_truncated, trajectory}
//   POST /v1/rollouts/{id}/cancel            trainer  {rollout_id, status: "cancelled"}
//   POST /v1/rollouts/{id}/unregister        trainer  {rollout_id, status}; ends the session
//
// Which side each route is on: `chat/completions` is agent-facing, like the session routes: whoever holds
// the rollout id may generate in that rollout. The other four change or reveal a rollout, so they belong
// to the control API and get its guards (control token off loopback, no cross-site browser calls) —
// an agent that can call its own rollout's chat route cannot read its trajectory, cancel or unregister it.
// Sandboxed Rollgate runs never reach any of these routes (their socket serves only their session's routes).
// Control-side errors are FastAPI-shaped (`{detail}`) as prime-rl answers them; agent-side ones are OpenAI's.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { newSession } from '../api/sessions.js';
import type { DialectCodec } from '../core/dialects/codec.js';
import { openAIChatCodec } from '../core/dialects/openai-chat.js';
import { answeredTurns, renderCompletion, toVerifiersStep } from '../core/export/verifiers-steps.js';
import type { GatewayDeps } from './deps.js';
import { sendDialectError } from './errors.js';
import type { SessionCall } from './session-call.js';

type RolloutStatus = 'active' | 'cancelled' | 'completed';

interface Rollout {
  id: string;
  sessionId: string;
  model: string;
  samplingParams: Record<string, unknown>;
  maxTurns: number;
  maxSeqLen: number | null;
  status: RolloutStatus;
  /** Answered calls so far, and calls admitted but not answered yet (max_turns counts both). */
  turns: number;
  inFlight: number;
}

const ROLLOUT_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** Registered rollouts a trainer forgot to unregister cannot grow the registry without bound. */
const MAX_REGISTERED = 100_000;
export const ROLLOUT_CONTROL_ROUTES: ReadonlySet<string> = new Set(
  ['register', 'trajectory', 'cancel', 'unregister'].map((s) => `/v1/rollouts/:rolloutId/${s}`),
);

const registerBody = z.object({
  model: z.string().min(1),
  sampling_params: z.record(z.string(), z.unknown()).default({}),
  max_turns: z.number().int().default(-1),
  max_seq_len: z.number().int().positive().nullable().default(null),
  /** Rollgate extension: the engine to run on (default: the engine serving `model`, else the default engine). */
  engine: z.string().optional(),
});

/** Fields of the agent's body the registered sampling parameters may not replace. */
const AGENT_OWNED = new Set(['messages', 'tools', 'tool_choice', 'stream', 'stream_options', 'model']);

/**
 * The registered sampling parameters as chat-body fields, the way prime-rl sends them: `extra_body` flattened,
 * `max_tokens` as `max_completion_tokens`, nulls dropped.
 */
export function rolloutSamplingFields(params: Record<string, unknown>): Record<string, unknown> {
  const { extra_body: extra, ...rest } = params;
  const flat: Record<string, unknown> = { ...rest, ...(extra && typeof extra === 'object' ? extra as Record<string, unknown> : {}) };
  if ('max_tokens' in flat) {
    if (flat.max_completion_tokens == null) flat.max_completion_tokens = flat.max_tokens;
    delete flat.max_tokens;
  }
  return Object.fromEntries(Object.entries(flat).filter(([k, v]) => v != null && !AGENT_OWNED.has(k)));
}

const detail = (reply: FastifyReply, status: number, message: string) => reply.code(status).send({ detail: message });

export function registerRolloutGateway(app: FastifyInstance, deps: GatewayDeps, call: SessionCall): void {
  const { store, pool, events } = deps;
  const rollouts = new Map<string, Rollout>();
  const bySession = new Map<string, Rollout>();
  events.subscribe((ev) => {
    if (ev.type !== 'completion' || ev.status !== 'ok') return;
    const r = bySession.get(ev.sessionId);
    if (r) r.turns++;
  });

  const rolloutOf = (params: unknown) => rollouts.get((params as { rolloutId: string }).rolloutId);
  const notFound = (params: unknown) => `Rollout not found: ${(params as { rolloutId: string }).rolloutId}`;

  app.post('/v1/rollouts/:rolloutId/register', async (req, reply) => {
    const { rolloutId } = req.params as { rolloutId: string };
    if (!ROLLOUT_ID.test(rolloutId)) return detail(reply, 422, 'rollout id: 1 to 128 characters of A-Z a-z 0-9 . _ : -');
    const parsed = registerBody.safeParse(req.body ?? {});
    if (!parsed.success) return detail(reply, 422, parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '));
    const body = parsed.data;
    if (rollouts.has(rolloutId)) return detail(reply, 409, `Rollout already registered: ${rolloutId}`);
    if (rollouts.size >= MAX_REGISTERED) return detail(reply, 503, `${MAX_REGISTERED} rollouts are registered; unregister finished ones first`);
    const engineId = body.engine ?? pool.list().find((e) => e.config.model === body.model)?.config.id ?? pool.defaultEngineId ?? null;
    if (!engineId || !pool.get(engineId)) return detail(reply, 400, `unknown engine ${engineId ?? '(none)'}; known: ${pool.list().map((e) => e.config.id).join(', ')}`);
    const rollout: Rollout = {
      id: rolloutId, sessionId: '', model: body.model, samplingParams: body.sampling_params,
      maxTurns: body.max_turns, maxSeqLen: body.max_seq_len, status: 'active', turns: 0, inFlight: 0,
    };
    const session = newSession({
      engineId, harness: 'rollout-gateway',
      metadata: { rollout: { id: rolloutId, model: body.model, samplingParams: body.sampling_params, maxTurns: body.max_turns, maxSeqLen: body.max_seq_len } },
    });
    rollout.sessionId = session.id;
    // Registered before the write so a concurrent register of the same id gets its 409.
    rollouts.set(rolloutId, rollout);
    bySession.set(session.id, rollout);
    try {
      await store.writer.putSession(session);
    } catch (err) {
      rollouts.delete(rolloutId);
      bySession.delete(session.id);
      throw err;
    }
    events.emit({ type: 'session', id: session.id, status: session.status });
    return { rollout_id: rolloutId, status: rollout.status, model: rollout.model, max_turns: rollout.maxTurns, max_seq_len: rollout.maxSeqLen, session_id: session.id };
  });

  app.post('/v1/rollouts/:rolloutId/chat/completions', async (req, reply) => {
    const codec = openAIChatCodec as DialectCodec;
    const r = rolloutOf(req.params);
    if (!r) return sendDialectError(reply, codec, 404, notFound(req.params), 'not_found_error');
    if (r.status !== 'active') return sendDialectError(reply, codec, 409, `Rollout ${r.status}: ${r.id}`);
    if (r.maxTurns > 0 && r.turns + r.inFlight >= r.maxTurns) {
      if (r.inFlight === 0) r.status = 'completed';
      return sendDialectError(reply, codec, 409, `Rollout reached max turns (${r.maxTurns}): ${r.id}. Register a new rollout for additional turns.`);
    }
    if (!req.body || typeof req.body !== 'object' || !Array.isArray((req.body as { messages?: unknown }).messages)) {
      return sendDialectError(reply, codec, 400, 'Chat request must include a `messages` array.');
    }
    const session = await store.sessions.get(r.sessionId);
    if (!session) return sendDialectError(reply, codec, 404, notFound(req.params), 'not_found_error');
    // The trainer's sampling parameters and model win over the agent's, as in prime-rl's gateway.
    req.body = { ...(req.body as Record<string, unknown>), ...rolloutSamplingFields(r.samplingParams), model: r.model };
    r.inFlight++;
    try {
      await call(codec, session, req, reply);
    } finally {
      r.inFlight--;
      if (r.maxTurns > 0 && r.turns >= r.maxTurns && r.status === 'active') r.status = 'completed';
    }
  });

  app.get('/v1/rollouts/:rolloutId/trajectory', async (req, reply) => {
    const r = rolloutOf(req.params);
    if (!r) return detail(reply, 404, notFound(req.params));
    const steps = answeredTurns(await store.completions.listBySession(r.sessionId)).map((rec) => toVerifiersStep(rec, r.sessionId, r.maxSeqLen));
    const prompt = steps[0]?.prompt ?? [];
    return {
      rollout_id: r.id, status: r.status, num_turns: steps.length, model: r.model,
      prompt, completion: renderCompletion(steps, prompt), is_truncated: steps.some((s) => s.is_truncated),
      trajectory: steps, session_id: r.sessionId,
    };
  });

  app.post('/v1/rollouts/:rolloutId/cancel', async (req, reply) => {
    const r = rolloutOf(req.params);
    if (!r) return detail(reply, 404, notFound(req.params));
    r.status = 'cancelled';
    return { rollout_id: r.id, status: r.status };
  });

  app.post('/v1/rollouts/:rolloutId/unregister', async (req, reply) => {
    const r = rolloutOf(req.params);
    if (!r) return detail(reply, 404, notFound(req.params));
    rollouts.delete(r.id);
    bySession.delete(r.sessionId);
    const status = r.status === 'cancelled' ? 'interrupted' : 'finished';
    if ((await store.sessions.get(r.sessionId))?.status === 'active') {
      await store.writer.updateSession(r.sessionId, { status, finishedAt: Date.now() });
      events.emit({ type: 'session', id: r.sessionId, status });
    }
    return { rollout_id: r.id, status: r.status };
  });
}
