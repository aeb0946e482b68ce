// Control API for the renderer and trainers (DESIGN §11). JSON, camelCase.
import type { EngineTokenTexts } from '../engines/token-text.js';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { withTraceRewards } from '../core/export/session-traces.js';
import type { EnginePool } from '../engines/pool.js';
import { CREDIT_POLICIES, type CreditPolicy } from '../core/export/credit.js';
import type { ClusterNode, EngineControl } from '../cluster/index.js';
import type { RolloutManager } from '../rollouts/manager.js';
import type { Store } from '../store/index.js';
import type { EventBus } from './events.js';
import type { OwnerRouting } from './session-owner.js';
import { completionJson, newSession, sessionUrls } from './sessions.js';
import { VERSION } from './version.js';

export interface ApiDeps {
  store: Store;
  pool: EnginePool;
  events: EventBus;
  baseUrl: () => string;
  /** Token texts per engine, for merging chat-mode traces across re-renders (absent: exact merging only). */
  tokenTexts?: EngineTokenTexts;
  /** Batches and harness runs (src-main/rollouts); the batch routes are absent without it. */
  rollouts?: RolloutManager;
  /** Pause, resume and policy version: this process's pool alone, or every node of a cluster. */
  control?: EngineControl;
  /** In a cluster: this node (topology, nodes) and the routing of a session's calls to its owner. */
  cluster?: ClusterNode;
  routeToOwner?: OwnerRouting;
}

const createSessionBody = z.object({
  engine: z.string().optional(),
  harness: z.string().optional(),
  taskId: z.string().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
}).strict();

const finishBody = z.object({
  reward: z.number().finite().nullable().optional(),
  /**
   * Per-trace rewards, keyed by trace id, completion id, or the response id the agent saw (`chatcmpl-…`,
   * `msg_…`, `resp_…`); merged into the session's `metadata.traceRewards` (DESIGN §6).
   */
  traceRewards: z.record(z.string().min(1), z.number().finite().nullable()).optional(),
  /** A finished session's reward changes only when the caller says so (a retried finish must not). */
  overwrite: z.boolean().optional(),
  /** The response the final answer came from (record id or the id the agent saw): its trace earns the reward. */
  finalResponseId: z.string().min(1).optional(),
  /** What the other traces get: final | broadcast (default) | split (core/export/credit.ts). */
  credit: z.enum(CREDIT_POLICIES as [CreditPolicy, ...CreditPolicy[]]).optional(),
}).strict();

function badRequest(message: string) {
  return { error: { message, type: 'invalid_request_error' } };
}

export async function registerApi(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  const { store, pool, events } = deps;

  app.get('/api/health', async () => ({ ok: true, version: VERSION }));

  app.post('/api/sessions', async (req, reply) => {
    const parsed = createSessionBody.safeParse(req.body ?? {});
    if (!parsed.success) return reply.code(400).send(badRequest(parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ')));
    const engineId = parsed.data.engine ?? pool.defaultEngineId ?? null;
    if (engineId && !pool.get(engineId)) return reply.code(400).send(badRequest(`unknown engine ${engineId}; known: ${pool.list().map((e) => e.config.id).join(', ')}`));
    const session = newSession({ engineId, harness: parsed.data.harness ?? null, taskId: parsed.data.taskId ?? null, metadata: parsed.data.metadata ?? {} });
    await store.writer.putSession(session);
    events.emit({ type: 'session', id: session.id, status: session.status });
    return reply.code(201).send({ id: session.id, key: session.key, engine: engineId, urls: sessionUrls(deps.baseUrl(), session.key) });
  });

  app.get('/api/sessions', async (req) => {
    const q = req.query as { limit?: string; offset?: string; batch?: string };
    const sessions = await store.sessions.list({ limit: Math.min(Number(q.limit ?? 200) || 200, 1000), offset: Number(q.offset ?? 0) || 0, batchId: q.batch });
    return { total: await store.sessions.count({ batchId: q.batch }), sessions: sessions };
  });

  app.get('/api/sessions/:id', async (req, reply) => {
    const s = await store.sessions.getSummary((req.params as { id: string }).id);
    if (!s) return reply.code(404).send({ error: { message: 'session not found', type: 'not_found_error' } });
    return { ...s, incompleteCalls: s.incompleteCount ? await store.completions.incompleteCalls(s.id) : [] };
  });

  app.get('/api/sessions/:id/completions', async (req, reply) => {
    const id = (req.params as { id: string }).id;
    if (!(await store.sessions.get(id))) return reply.code(404).send({ error: { message: 'session not found', type: 'not_found_error' } });
    const withPieces = (req.query as { pieces?: string }).pieces === '1';
    const records = await store.completions.listBySession(id);
    return { completions: await Promise.all(records.map((r) => completionJson(r, pool, withPieces))) };
  });

  app.post('/api/sessions/:id/finish', async (req, reply) => {
    const id = (req.params as { id: string }).id;
    if (!(await store.sessions.get(id))) return reply.code(404).send({ error: { message: 'session not found', type: 'not_found_error' } });
    if (await deps.routeToOwner?.(req, reply, id)) return reply;
    // A batch run's rewards come from its evaluator: nothing may set them while its agent runs (issue 18.1).
    if ((await store.runs.get(id))?.status === 'running') {
      return reply.code(409).send({ error: { message: `session ${id} is a batch run still in progress: its reward comes from the evaluator; set rewards after the run ends`, type: 'invalid_request_error' } });
    }
    const parsed = finishBody.safeParse(req.body ?? {});
    if (!parsed.success) return reply.code(400).send(badRequest(parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ')));
    const body = parsed.data;
    // Read, merge and write in one store transaction, so concurrent finishes (on any node) cannot drop each other.
    const done = await store.sessions.modify(id, (session) => {
      if (session.status === 'finished' && !body.overwrite) return { refuse: session.reward };
      const metadata = withTraceRewards({
        ...session.metadata,
        ...(body.finalResponseId ? { finalResponseId: body.finalResponseId } : {}),
        ...(body.credit ? { credit: body.credit } : {}),
      }, body.traceRewards);
      return { patch: { status: 'finished', reward: body.reward ?? session.reward, finishedAt: Date.now(), metadata } };
    });
    if (!done) return reply.code(404).send({ error: { message: 'session not found', type: 'not_found_error' } });
    if ('refused' in done) {
      return reply.code(409).send({ error: {
        message: `session ${id} is already finished (reward ${done.refused ?? 'none'}); pass "overwrite": true to change its rewards`, type: 'conflict_error',
      } });
    }
    events.emit({ type: 'session', id, status: 'finished' });
    return (await store.sessions.getSummary(id))!;
  });

  app.get('/api/events', (req, reply) => {
    reply.hijack();
    reply.raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
    reply.raw.write(': connected\n\n');
    const unsubscribe = events.subscribe((ev) => reply.raw.write(`event: ${ev.type}\ndata: ${JSON.stringify(ev)}\n\n`));
    const heartbeat = setInterval(() => reply.raw.write(': ping\n\n'), 15_000);
    req.raw.on('close', () => { clearInterval(heartbeat); unsubscribe(); });
  });
}
