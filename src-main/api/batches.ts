// Control API for rollouts (DESIGN §7, §11): batches (trainer + GUI), harness presets, manual-session
// snippets, demo datasets, and a session's run record (agent stdout/stderr, evaluator verdict).
import type { FastifyInstance, FastifyReply } from 'fastify';
import { getHarness, harnessJson, listHarnesses, manualSnippet } from '../rollouts/harnesses/index.js';
import { BatchSpecError } from '../rollouts/manager.js';
import { getTaskCheck, startTaskCheck } from '../rollouts/task-check.js';
import { DatasetError, listDemoDatasets, loadDataset } from '../rollouts/tasks.js';
import type { ApiDeps } from './routes.js';
import { sessionUrls } from './sessions.js';

const notFound = (reply: FastifyReply, what: string) => reply.code(404).send({ error: { message: `${what} not found`, type: 'not_found_error' } });
const badRequest = (reply: FastifyReply, message: string, extra: Record<string, unknown> = {}) =>
  reply.code(400).send({ error: { message, type: 'invalid_request_error', ...extra } });

export async function registerBatchesApi(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  const { store, pool } = deps;

  app.get('/api/harnesses', async () => ({ harnesses: listHarnesses().map(harnessJson) }));

  app.get('/api/datasets', async () => ({
    datasets: listDemoDatasets().map((name) => {
      try {
        return { name: `demo:${name}`, tasks: loadDataset(`demo:${name}`).tasks.length };
      } catch (e) {
        return { name: `demo:${name}`, tasks: 0, error: (e as Error).message };
      }
    }),
  }));

  // Ready-to-paste env/config for running a harness by hand against a session (manual sessions). The store
  // keeps only a hash of the key, so the caller brings the key it was given at creation; it must match.
  app.post('/api/harnesses/:name/snippet', async (req, reply) => {
    const { name } = req.params as { name: string };
    const body = (req.body ?? {}) as { sessionId?: unknown; key?: unknown; command?: unknown; workDir?: unknown };
    const h = getHarness(name);
    if (!h) return notFound(reply, `harness ${name}`);
    if (h.kind === 'reference') return badRequest(reply, `${h.name} checks a task's own solution; it runs only in batches`);
    if (typeof body.sessionId !== 'string' || !body.sessionId) return badRequest(reply, 'sessionId is required (create one with POST /api/sessions)');
    if (typeof body.key !== 'string' || !body.key) return badRequest(reply, 'key is required: the session key returned once by POST /api/sessions');
    const s = await store.sessions.get(body.sessionId);
    if (!s) return notFound(reply, 'session');
    if ((await store.sessions.getByKey(body.key))?.id !== s.id) return badRequest(reply, `key does not belong to session ${s.id}`);
    const engineId = s.engineId ?? pool.defaultEngineId;
    const model = (engineId && pool.get(engineId)?.config.model) || 'default';
    const snippet = manualSnippet(h, {
      taskId: s.taskId, sessionId: s.id, key: body.key, urls: sessionUrls(deps.baseUrl(), body.key), model,
      workDir: typeof body.workDir === 'string' ? body.workDir : process.cwd(), options: { command: typeof body.command === 'string' ? body.command : undefined },
    });
    return { sessionId: s.id, engine: engineId ?? null, model, ...snippet };
  });

  app.get('/api/sessions/:id/run', async (req, reply) => {
    const { id } = req.params as { id: string };
    if (!(await store.sessions.get(id))) return notFound(reply, 'session');
    const run = await store.runs.get(id);
    if (!run) return notFound(reply, 'run (this session was not started by a batch)');
    return run;
  });

  const rollouts = deps.rollouts;
  if (!rollouts) return;

  // Where batch agents can run here: bwrap / docker / local, and what `auto` (or `serve --runtime`) gives.
  app.get('/api/runtimes', async () => rollouts.runtimes());

  app.post('/api/batches', async (req, reply) => {
    try {
      // `runtime` says where the agents run; `warning` is set when they run unsandboxed (auto fell back to local).
      return reply.code(201).send(await rollouts.submit(req.body ?? {}));
    } catch (e) {
      if (e instanceof DatasetError) return badRequest(reply, e.message, { problems: e.problems });
      if (e instanceof BatchSpecError) return badRequest(reply, e.message);
      throw e;
    }
  });

  // Task folder validation (`rollgate tasks check`): the oracle and nop batches; the id names both.
  app.post('/api/tasks/check', async (req, reply) => {
    const body = (req.body ?? {}) as { dataset?: unknown; runtime?: unknown; concurrency?: unknown; engine?: unknown };
    if (typeof body.dataset !== 'string' || !body.dataset) return badRequest(reply, 'dataset is required: a Harbor task folder, a folder of them, or a JSONL file');
    try {
      const started = await startTaskCheck(rollouts, {
        dataset: body.dataset,
        ...(typeof body.runtime === 'string' ? { runtime: body.runtime } : {}),
        ...(typeof body.concurrency === 'number' ? { concurrency: body.concurrency } : {}),
        ...(typeof body.engine === 'string' ? { engine: body.engine } : {}),
      });
      return reply.code(201).send(started);
    } catch (e) {
      if (e instanceof DatasetError) return badRequest(reply, e.message, { problems: e.problems });
      if (e instanceof BatchSpecError) return badRequest(reply, e.message);
      throw e;
    }
  });

  app.get('/api/tasks/check/:id', async (req, reply) => {
    const report = await getTaskCheck(rollouts, (req.params as { id: string }).id);
    return report ?? notFound(reply, 'task check');
  });

  app.get('/api/batches', async (req) => {
    const q = req.query as { limit?: string; offset?: string };
    return { batches: await rollouts.list({ limit: Math.min(Number(q.limit ?? 100) || 100, 1000), offset: Number(q.offset ?? 0) || 0 }) };
  });

  app.get('/api/batches/:id', async (req, reply) => {
    const view = await rollouts.get((req.params as { id: string }).id);
    return view ?? notFound(reply, 'batch');
  });

  app.post('/api/batches/:id/cancel', async (req, reply) => {
    const { id } = req.params as { id: string };
    const before = await rollouts.get(id);
    if (!before) return notFound(reply, 'batch');
    if (!(await rollouts.isActive(id))) {
      return reply.code(409).send({ error: { message: `batch ${id} is ${before.status}; only a queued or running batch can be cancelled`, type: 'invalid_request_error' } });
    }
    return rollouts.cancel(id);
  });
}
