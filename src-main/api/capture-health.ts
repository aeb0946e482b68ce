// GET /api/capture-health?batch=&engine=&builder= (issue 14; shape in README.md, "Capture health"): streams the
// sessions' completions (constant memory, one session at a time), builds their traces with custody applied,
// and tallies per engine and overall. Yields to the event loop between sessions so the gateway keeps serving.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { CaptureHealthTally, type CaptureHealth } from '../core/export/capture-health.js';
import { buildSessionTraces } from '../core/export/session-traces.js';
import { BUILDERS } from '../core/trajectory/index.js';
import type { BuilderName } from '../core/trajectory/types.js';
import type { CompletionRecord } from '../core/types.js';
import type { EnginePool } from '../engines/pool.js';
import type { CompletionIterateFilter, Store } from '../store/index.js';
import type { ApiDeps } from './routes.js';

export interface CaptureHealthReport {
  scope: { batchId: string | null; engineId: string | null; builder: BuilderName };
  overall: CaptureHealth;
  byEngine: Record<string, CaptureHealth>;
}

const YIELD_EVERY = 16;

export async function captureHealth(store: Pick<Store, 'sessions' | 'completions'>, pool: Pick<EnginePool, 'get'> | null,
  scope: { batchId?: string; engineId?: string; builder?: BuilderName } = {}, tokenTexts?: ApiDeps['tokenTexts']): Promise<CaptureHealthReport> {
  const builder = scope.builder ?? 'prefix-merge';
  const tally = new CaptureHealthTally((id) => pool?.get(id)?.config.mode === 'token');
  const filter: CompletionIterateFilter = {};
  if (scope.batchId) filter.batchId = scope.batchId;
  if (scope.engineId) filter.engineId = scope.engineId;
  let current: CompletionRecord[] = [];
  let n = 0;
  const flush = async () => {
    if (!current.length) return;
    const session = await store.sessions.get(current[0]!.sessionId);
    // The same traces GET /api/sessions/:id/traces shows (chat-mode re-renders joined), so its break counts agree.
    const built = buildSessionTraces(builder, session, current, { tokenText: tokenTexts?.get(session?.engineId ?? current[0]!.engineId) });
    tally.add(current, built.traces.map((t) => t.trace));
    current = [];
    if (++n % YIELD_EVERY === 0) await new Promise((r) => setImmediate(r));
  };
  for await (const r of store.completions.iterateAll(filter)) {
    if (current.length && current[0]!.sessionId !== r.sessionId) await flush();
    current.push(r);
  }
  await flush();
  return { scope: { batchId: scope.batchId ?? null, engineId: scope.engineId ?? null, builder }, ...tally.result() };
}

const query = z.object({
  batch: z.string().min(1).optional(),
  engine: z.string().min(1).optional(),
  builder: z.enum(BUILDERS as [BuilderName, ...BuilderName[]]).default('prefix-merge'),
});

export async function registerCaptureHealth(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  app.get('/api/capture-health', async (req, reply) => {
    const q = query.safeParse(req.query ?? {});
    if (!q.success) return reply.code(400).send({ error: { message: q.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '), type: 'invalid_request_error' } });
    if (q.data.batch && !(await deps.store.batches.get(q.data.batch))) return reply.code(404).send({ error: { message: 'batch not found', type: 'not_found_error' } });
    return captureHealth(deps.store, deps.pool, { batchId: q.data.batch, engineId: q.data.engine, builder: q.data.builder }, deps.tokenTexts);
  });
}
