// Training traces and cross-engine re-scoring over the control API (DESIGN §6, §8, §11).
//
//   GET  /api/sessions/:id/traces?builder=prefix-merge|per-request[&retries=separate|replace][&onPolicyChange=record|split]
//        → {sessionId, builder, traces: [Trace + {groupId, taskId, batchId, sampleIndex, engine, rewardSource}], unplaced, stats}
//   POST /api/traces/rescore {sessionId | batchId, engine, builder?, concurrency?, bins?, includeLogprobs?}
//        → {engine, builder, traces: [{traceId, sessionId, sourceEngine, positions, deltas, summary, …}], overall, errors}
//
// Rewards: the session's outcome reward on every trace, unless `session.metadata.traceRewards` gives a
// trace its own (keys: trace ids or completion ids; see core/export/session-traces.ts).
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { buildSessionTraces, type SessionTrace } from '../core/export/session-traces.js';
import { rescoreTrace, traceSequence } from '../core/trajectory/rescore-align.js';
import { mergeRescoreStats, type RescoreStats } from '../core/trajectory/rescore-stats.js';
import { BUILDERS } from '../core/trajectory/index.js';
import type { BuilderName } from '../core/trajectory/types.js';
import { scoreOnPool } from '../engines/rescore.js';
import { engineTokenText, tokenTextsOf } from '../engines/token-text.js';
import { EnginePausedError } from '../engines/pause-gate.js';
import type { ApiDeps } from './routes.js';

const buildQuery = z.object({
  builder: z.enum(BUILDERS as [BuilderName, ...BuilderName[]]).default('prefix-merge'),
  retries: z.enum(['separate', 'replace']).optional(),
  onPolicyChange: z.enum(['record', 'split']).optional(),
});

const rescoreBody = z.object({
  sessionId: z.string().min(1).optional(),
  batchId: z.string().min(1).optional(),
  engine: z.string().min(1),
  builder: z.enum(BUILDERS as [BuilderName, ...BuilderName[]]).default('prefix-merge'),
  /** Engine requests in flight at once (default 4). */
  concurrency: z.number().int().min(1).max(64).default(4),
  /** Histogram bins (default 20). */
  bins: z.number().int().min(1).max(200).default(20),
  /** Also return the sampled and re-scored logprobs at each position. */
  includeLogprobs: z.boolean().default(false),
  timeoutMs: z.number().int().positive().optional(),
  /** Caller-chosen id: progress goes out as `rescore` events on GET /api/events under it. */
  progressId: z.string().min(1).max(100).optional(),
}).strict().refine((b) => (b.sessionId === undefined) !== (b.batchId === undefined), { message: 'give exactly one of sessionId and batchId' });

/** How often a long re-scoring reports progress (plus once at the start and once at the end). */
const PROGRESS_EVERY_MS = 200;

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

type Summary = Omit<RescoreStats, 'deltas' | 'histogram'>;
function summary(s: RescoreStats): Summary {
  const { deltas: _d, histogram: _h, ...rest } = s;
  return rest;
}

/** Runs `fn` over `items` (pulled lazily) with at most `limit` in flight. */
async function forEachLimit<T>(items: Iterable<T>, limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  const it = items[Symbol.iterator]();
  let failed: unknown = null;
  const worker = async () => {
    for (;;) {
      if (failed) return;
      const next = it.next();
      if (next.done) return;
      try {
        await fn(next.value);
      } catch (e) {
        failed ??= e;
      }
    }
  };
  await Promise.all(Array.from({ length: limit }, worker));
  if (failed) throw failed;
}

export async function registerTraces(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  const { store, pool, events } = deps;

  app.get('/api/sessions/:id/traces', async (req, reply) => {
    const id = (req.params as { id: string }).id;
    const session = store.sessions.get(id);
    if (!session) return reply.code(404).send(error('not_found_error', 'session not found'));
    const q = buildQuery.safeParse(req.query ?? {});
    if (!q.success) return reply.code(400).send(error('invalid_request_error', issues(q.error)));
    const records = store.completions.listBySession(id);
    const tokenText = await engineTokenText(session.engineId ? pool.get(session.engineId)?.config : undefined);
    const built = buildSessionTraces(q.data.builder, session, records, { retries: q.data.retries, onPolicyChange: q.data.onPolicyChange, tokenText });
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
    const engine = pool.get(b.engine);
    if (!engine) {
      return reply.code(400).send(error('invalid_request_error', `unknown engine ${b.engine}; known: ${pool.list().map((e) => e.config.id).join(', ')}`));
    }
    let sessionIds: string[];
    if (b.sessionId !== undefined) {
      if (!store.sessions.get(b.sessionId)) return reply.code(404).send(error('not_found_error', `session ${b.sessionId} not found`));
      sessionIds = [b.sessionId];
    } else {
      sessionIds = store.sessions.list({ batchId: b.batchId }).map((s) => s.id);
      if (sessionIds.length === 0) return reply.code(404).send(error('not_found_error', `batch ${b.batchId} has no sessions`));
    }

    interface Job { st: SessionTrace; order: number }
    const results: Array<Record<string, unknown> | undefined> = [];
    const parts: Array<RescoreStats | undefined> = [];
    const errors: Array<{ traceId: string; message: string }> = [];
    let order = 0;
    const progress = { sessionsRead: 0, tracesDone: 0, tokens: 0, sentAt: 0 };
    const report = (mode: 'start' | 'step' | 'done') => {
      if (!b.progressId || (mode === 'step' && performance.now() - progress.sentAt < PROGRESS_EVERY_MS)) return;
      const done = mode === 'done';
      progress.sentAt = performance.now();
      events.emit({ type: 'rescore', id: b.progressId, sessions: sessionIds.length, sessionsRead: progress.sessionsRead, tracesDone: progress.tracesDone, tokens: progress.tokens, done });
    };
    // Sessions are read and built one at a time, as the workers need more traces.
    const tokenTextFor = await tokenTextsOf(pool.list().map((e) => e.config));
    function* jobs(): Generator<Job> {
      for (const sid of sessionIds) {
        const session = store.sessions.get(sid);
        const built = buildSessionTraces(b.builder, session, store.completions.listBySession(sid), { tokenText: session?.engineId ? tokenTextFor(session.engineId) : undefined });
        progress.sessionsRead++;
        for (const st of built.traces) yield { st, order: order++ };
      }
    }
    report('start');
    const abort = new AbortController();
    const stop: { paused: EnginePausedError | null } = { paused: null };
    reply.raw.on('close', () => { if (!reply.raw.writableFinished) abort.abort(); });

    await forEachLimit(jobs(), b.concurrency, async ({ st, order: k }) => {
      const { trace, context } = st;
      const base = { traceId: trace.id, sessionId: trace.sessionId, sourceEngine: context.engine ?? null, completionIds: trace.completionIds };
      if (!trace.lossMask.includes(1)) {
        const s = mergeRescoreStats([], { bins: b.bins });
        results[k] = { ...base, positions: [], deltas: [], dropped: 0, summary: summary(s) };
        parts[k] = s;
        progress.tracesDone++;
        return;
      }
      try {
        const scored = await scoreOnPool(pool, engine.config.id, traceSequence(trace), { signal: abort.signal, timeoutMs: b.timeoutMs });
        const r = rescoreTrace(trace, scored.logprobs, { bins: b.bins });
        progress.tokens += r.stats.n;
        results[k] = {
          ...base, replica: scored.replica, positions: r.positions, deltas: r.stats.deltas, dropped: r.dropped,
          ...(b.includeLogprobs ? { sampled: r.sampled, rescored: r.rescored } : {}),
          summary: summary(r.stats),
        };
        parts[k] = r.stats;
      } catch (e) {
        if (abort.signal.aborted || e instanceof EnginePausedError) throw e;
        errors.push({ traceId: trace.id, message: (e as Error).message });
        results[k] = { ...base, error: (e as Error).message };
      }
      progress.tracesDone++;
      report('step');
    }).catch((e: unknown) => {
      if (abort.signal.aborted) return;
      if (e instanceof EnginePausedError) { stop.paused = e; return; }
      throw e;
    });
    report('done');
    if (abort.signal.aborted) return reply;
    if (stop.paused) {
      return reply.code(429).header('retry-after', String(stop.paused.retryAfterSec))
        .send(error('engines_paused', `${stop.paused.message} (re-scoring stopped)`));
    }

    const traces = results.filter((r): r is Record<string, unknown> => r !== undefined);
    const scoredParts = parts.filter((p): p is RescoreStats => p !== undefined);
    const overall = mergeRescoreStats(scoredParts, { bins: b.bins });
    const body = {
      engine: engine.config.id,
      engineKind: engine.config.kind,
      builder: b.builder,
      sessions: sessionIds.length,
      traces,
      overall: { ...summary(overall), histogram: overall.histogram },
      errors,
    };
    if (traces.length > 0 && errors.length === traces.length) {
      return reply.code(502).send({ ...body, error: { message: `re-scoring failed on every trace: ${errors[0].message}`, type: 'engine_error' } });
    }
    return body;
  });
}
