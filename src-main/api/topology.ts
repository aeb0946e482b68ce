// Topology editing (issue 6): engines added, replaced or removed through the control API, persisted in
// the store. Simulated engines are wired by the app and are not editable.
import type { FastifyInstance } from 'fastify';
import type { EngineConfig } from '../engines/types.js';
import { createAdapter } from '../engines/pool.js';
import { parseEngineConfig } from '../engines/topology.js';
import { checkTokenFormat } from '../engines/token-format.js';
import { engineJson } from './engines.js';
import type { ApiDeps } from './routes.js';

function fail(reply: import('fastify').FastifyReply, status: number, message: string) {
  return reply.code(status).send({ error: { message, type: status === 404 ? 'not_found_error' : 'invalid_request_error' } });
}

async function validated(body: unknown): Promise<EngineConfig> {
  const config = parseEngineConfig(body);
  createAdapter(config);
  await checkTokenFormat(config);
  return config;
}

export async function registerTopologyRoutes(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  const { pool, store, events } = deps;

  app.post('/api/engines', async (req, reply) => {
    let config: EngineConfig;
    try { config = await validated(req.body); } catch (err) { return fail(reply, 400, (err as Error).message); }
    if (pool.get(config.id)) return fail(reply, 409, `engine ${config.id} already exists; use PUT /api/engines/${config.id}`);
    pool.add(config);
    await store.engines.upsert(config);
    await deps.tokenTexts?.load([config]);
    void pool.checkHealth(true);
    events.emit({ type: 'engines' });
    return reply.code(201).send(engineJson(pool.get(config.id)!, pool));
  });

  app.put('/api/engines/:id', async (req, reply) => {
    const id = (req.params as { id: string }).id;
    const existing = pool.get(id);
    if (!existing) return fail(reply, 404, `unknown engine ${id}`);
    if (existing.config.simulated) return fail(reply, 400, `engine ${id} is simulated and wired by the app; add a new engine instead`);
    let config: EngineConfig;
    try { config = await validated({ ...(req.body as object), id }); } catch (err) { return fail(reply, 400, (err as Error).message); }
    pool.remove(id);
    pool.add(config);
    await store.engines.upsert(config);
    await deps.tokenTexts?.load([config]);
    void pool.checkHealth(true);
    events.emit({ type: 'engines' });
    return engineJson(pool.get(id)!, pool);
  });

  app.delete('/api/engines/:id', async (req, reply) => {
    const id = (req.params as { id: string }).id;
    const existing = pool.get(id);
    if (!existing) return fail(reply, 404, `unknown engine ${id}`);
    if (existing.config.simulated) return fail(reply, 400, `engine ${id} is simulated and wired by the app; start with --no-sim to drop it`);
    pool.remove(id);
    await store.engines.delete(id);
    events.emit({ type: 'engines' });
    return { deleted: id };
  });
}
