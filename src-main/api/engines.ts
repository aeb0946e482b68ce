// Engine panel data and weight-sync control (DESIGN §4, §11).
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { EnginePool, PoolEngine } from '../engines/pool.js';
import { listFamilies } from '../core/families/index.js';
import { listEngineKinds } from '../engines/drivers/index.js';
import { routerHeader } from '../engines/router.js';
import { BUILTIN_TOKENIZERS } from '../engines/tokenizer/files.js';
import { tokenizerSpecOf } from '../engines/token-format.js';
import { localEngineControl } from '../cluster/control.js';
import type { ApiDeps } from './routes.js';

const pauseBody = z.object({
  mode: z.enum(['queue', 'reject', 'abort']).default('queue'),
  timeoutMs: z.number().int().min(0).max(600_000).default(30_000),
  /** Also call the engines' own pause routes once Rollgate's calls have drained. */
  forward: z.boolean().default(false),
}).strict();

const resumeBody = z.object({ forward: z.boolean().default(false) }).strict();

const policyBody = z.object({ version: z.number().int().min(0) }).strict();

function issues(err: z.ZodError): string {
  return err.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ');
}

export function engineJson(e: PoolEngine, pool: EnginePool) {
  return {
    id: e.config.id, kind: e.config.kind, model: e.config.model, mode: e.config.mode,
    ...(e.config.developerRole ? { developerRole: e.config.developerRole } : {}),
    ...(e.config.dataParallelSize ? { dataParallelSize: e.config.dataParallelSize } : {}),
    // The header in effect (the router kind's own when the topology names none).
    ...(e.config.router ? { router: { ...e.config.router, header: routerHeader(e.config.router) } } : {}),
    tokenizer: tokenizerSpecOf(e.config), ...(e.config.mode === 'token' || e.config.family ? { family: e.config.family ?? null } : {}), simulated: e.config.simulated ?? false,
    paused: pool.gate.mode !== null, policyVersion: pool.policyVersion, failovers: e.failovers, queued: e.queued,
    replicas: e.replicas.map((r) => ({
      url: r.url, healthy: r.healthy, inFlight: r.inFlight, engineLoad: r.engineLoad, lastCheckedAt: r.lastCheckedAt,
      ...r.stats.figures(),
    })),
  };
}

export async function registerEngineRoutes(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  const { pool, events } = deps;
  const control = deps.control ?? localEngineControl(pool, deps.store.settings);

  app.get('/api/engines', async () => ({
    policyVersion: pool.policyVersion,
    pause: { mode: pool.gate.mode, queued: pool.gate.queued, since: pool.gate.pausedAt },
    engines: pool.list().map((e) => engineJson(e, pool)),
  }));

  // What the topology form offers, from the registries (engine drivers, model families, builtin tokenizers).
  app.get('/api/engine-kinds', async () => ({
    kinds: listEngineKinds(),
    families: listFamilies(),
    tokenizers: Object.entries(BUILTIN_TOKENIZERS).map(([spec, b]) => ({ spec, note: b.note })),
  }));

  app.post('/api/engines/pause', async (req, reply) => {
    const parsed = pauseBody.safeParse(req.body ?? {});
    if (!parsed.success) return reply.code(400).send({ error: { message: issues(parsed.error), type: 'invalid_request_error' } });
    const result = await control.pause(parsed.data.mode, parsed.data.timeoutMs, parsed.data.forward);
    events.emit({ type: 'engines', paused: true });
    return { paused: true, ...result };
  });

  app.post('/api/engines/resume', async (req, reply) => {
    const parsed = resumeBody.safeParse(req.body ?? {});
    if (!parsed.success) return reply.code(400).send({ error: { message: issues(parsed.error), type: 'invalid_request_error' } });
    const { released, forwarded } = await control.resume(parsed.data.forward);
    events.emit({ type: 'engines', paused: false });
    return { paused: false, released, forwarded };
  });

  app.post('/api/policy-version', async (req, reply) => {
    const parsed = policyBody.safeParse(req.body ?? {});
    if (!parsed.success) return reply.code(400).send({ error: { message: issues(parsed.error), type: 'invalid_request_error' } });
    await control.setPolicyVersion(parsed.data.version);
    events.emit({ type: 'engines', policyVersion: pool.policyVersion });
    return { policyVersion: pool.policyVersion };
  });
}
