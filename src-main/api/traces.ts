// Training traces and cross-engine re-scoring over the control API (DESIGN §6, §8, §11).
//
//   GET  /api/sessions/:id/traces?builder=prefix-merge|per-request[&retries=separate|replace][&onPolicyChange=record|split]
//        → {sessionId, builder, traces: [Trace + {groupId, taskId, batchId, sampleIndex, engine, rewardSource}], unplaced, stats}
//   POST /api/traces/rescore {sessionId | batchId, engine, builder?, concurrency?, bins?, includeLogprobs?}
//        → {id, engine, builder, traces: [{traceId, sessionId, sourceEngine, positions, deltas, summary, …}], overall, errors}
//        The result is kept: GET /api/rescores… (rescores.ts) lists, reopens and exports it under `id`.
//
// Rewards: the session's outcome reward on every trace, unless `session.metadata.traceRewards` gives a
// trace its own (keys: trace ids or completion ids; see core/export/session-traces.ts).
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { buildSessionTraces, type SessionTrace } from '../core/export/session-traces.js';
import { BUILDERS } from '../core/trajectory/index.js';
import type { BuilderName } from '../core/trajectory/types.js';
import { rescoreBody, runRescore } from './rescore-run.js';
import type { ApiDeps } from './routes.js';

const buildQuery = z.object({
  builder: z.enum(BUILDERS as [BuilderName, ...BuilderName[]]).default('prefix-merge'),
  retries: z.enum(['separate', 'replace']).optional(),
  onPolicyChange: z.enum(['record', 'split']).optional(),
});

function error(type: string, message: string) {
  return { error: { message, type } };
}

function issues(e: z.ZodError): string {
  return e.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ');
}

/** A trace as the API shows it: the core Trace plus where it belongs. */
export function traceJson({ trace, context, rewardSource }: SessionTrace) {
  return {
    ...trace,
    taskId: context.taskId ?? null,
    batchId: context.batchId ?? null,
    groupId: context.groupId ?? null,
    sampleIndex: context.sampleIndex ?? null,
    engine: context.engine ?? null,
    rewardSource,
  };
}

export async function registerTraces(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  const { store, pool } = deps;

  app.get('/api/sessions/:id/traces', async (req, reply) => {
    const id = (req.params as { id: string }).id;
    const session = await store.sessions.get(id);
    if (!session) return reply.code(404).send(error('not_found_error', 'session not found'));
    const q = buildQuery.safeParse(req.query ?? {});
    if (!q.success) return reply.code(400).send(error('invalid_request_error', issues(q.error)));
    const records = await store.completions.listBySession(id);
    const built = buildSessionTraces(q.data.builder, session, records, {
      retries: q.data.retries, onPolicyChange: q.data.onPolicyChange, tokenText: deps.tokenTexts?.get(session.engineId),
    });
    return {
      sessionId: id,
      builder: q.data.builder,
      reward: session.reward,
      traces: built.traces.map(traceJson),
      unplaced: built.unplaced,
      stats: built.stats,
    };
  });

  app.post('/api/traces/rescore', async (req, reply) => {
    const parsed = rescoreBody.safeParse(req.body ?? {});
    if (!parsed.success) return reply.code(400).send(error('invalid_request_error', issues(parsed.error)));
    const b = parsed.data;
    if (!pool.get(b.engine)) {
      return reply.code(400).send(error('invalid_request_error', `unknown engine ${b.engine}; known: ${pool.list().map((e) => e.config.id).join(', ')}`));
    }
    let sessionIds: string[];
    if (b.sessionId !== undefined) {
      if (!(await store.sessions.get(b.sessionId))) return reply.code(404).send(error('not_found_error', `session ${b.sessionId} not found`));
      sessionIds = [b.sessionId];
    } else {
      sessionIds = (await store.sessions.list({ batchId: b.batchId })).map((s) => s.id);
      if (sessionIds.length === 0) return reply.code(404).send(error('not_found_error', `batch ${b.batchId} has no sessions`));
    }
    const abort = new AbortController();
    reply.raw.on('close', () => { if (!reply.raw.writableFinished) abort.abort(); });
    const out = await runRescore(deps, b, sessionIds, abort.signal);
    if (out.kind === 'aborted') return reply;
    if (out.kind === 'paused') {
      return reply.code(429).header('retry-after', String(out.error.retryAfterSec))
        .send(error('engines_paused', `${out.error.message} (re-scoring stopped)`));
    }
    const body = out.body;
    if (body.traces.length > 0 && body.errors.length === body.traces.length) {
      return reply.code(502).send({ ...body, error: { message: `re-scoring failed on every trace: ${body.errors[0].message}`, type: 'engine_error' } });
    }
    return body;
  });
}
