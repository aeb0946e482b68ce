// Kept re-scoring results (DESIGN §8), written by POST /api/traces/rescore (rescore-run.ts):
//
//   GET /api/rescores?batch=&session=&limit=      → {rescores: [run]} newest first (a session's list includes batch runs that scored it)
//   GET /api/rescores/:id                         → {rescore: run, traces: [{traceId, sessionId, summary, error, …}]}
//   GET /api/rescores/:id/tokens?trace=|session=  → {traces: [{traceId, positions, tokenIds, pieces, sampled, rescored, deltas, …}]}
//   GET /api/rescores/:id/export                  → JSONL, one trace per line (snake_case, like /api/export)
//
// Δ = logprob as sampled (engine A) − logprob re-scored (engine B), on mask-1 tokens only.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { loadTokenizer } from '../engines/tokenizer/index.js';
import type { RescoreTraceRecord } from '../store/index.js';
import type { ApiDeps } from './routes.js';

const notFound = (reply: FastifyReply, what: string) => reply.code(404).send({ error: { message: `${what} not found`, type: 'not_found_error' } });

const deltasOf = (t: RescoreTraceRecord): number[] => Array.from(t.sampled, (a, i) => a - t.rescored[i]);

function traceHead(t: RescoreTraceRecord) {
  return {
    traceId: t.traceId, sessionId: t.sessionId, sourceEngine: t.sourceEngine, replica: t.replica, completionIds: t.completionIds,
    tokens: t.positions.length, dropped: t.dropped, summary: t.summary, error: t.error,
  };
}

export async function registerRescores(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  const { store, pool } = deps;

  app.get('/api/rescores', async (req) => {
    const q = req.query as { batch?: string; session?: string; limit?: string };
    const limit = Math.min(Math.max(Number(q.limit ?? 100) || 100, 1), 1000);
    return { rescores: await store.rescores.list({ batchId: q.batch || undefined, sessionId: q.session || undefined, limit }) };
  });

  app.get('/api/rescores/:id', async (req, reply) => {
    const { id } = req.params as { id: string };
    const run = await store.rescores.get(id);
    if (!run) return notFound(reply, `re-scoring ${id}`);
    return { rescore: run, traces: (await store.rescores.traces(id)).map(traceHead) };
  });

  app.get('/api/rescores/:id/tokens', async (req, reply) => {
    const { id } = req.params as { id: string };
    const q = req.query as { trace?: string; session?: string };
    const run = await store.rescores.get(id);
    if (!run) return notFound(reply, `re-scoring ${id}`);
    if (!q.trace === !q.session) {
      return reply.code(400).send({ error: { message: 'give exactly one of trace and session', type: 'invalid_request_error' } });
    }
    const found = q.trace ? [await store.rescores.trace(id, q.trace)].filter((t): t is RescoreTraceRecord => t !== null) : await store.rescores.tracesOfSession(id, q.session!);
    if (found.length === 0) return notFound(reply, q.trace ? `trace ${q.trace} in re-scoring ${id}` : `session ${q.session} in re-scoring ${id}`);
    const traces = await Promise.all(found.map(async (t) => {
      // Pieces come from the sampling engine's tokenizer: the ids are its ids.
      const tok = await loadTokenizer(pool.get(t.sourceEngine ?? run.engine)?.config.tokenizer ?? 'builtin:qwen3');
      return {
        ...traceHead(t), positions: Array.from(t.positions), tokenIds: Array.from(t.tokenIds), pieces: Array.from(t.tokenIds, (x) => tok.tokenText(x)),
        sampled: Array.from(t.sampled), rescored: Array.from(t.rescored), deltas: deltasOf(t),
      };
    }));
    return { rescore: run, traces };
  });

  app.get('/api/rescores/:id/export', async (req, reply) => {
    const { id } = req.params as { id: string };
    const run = await store.rescores.get(id);
    if (!run) return notFound(reply, `re-scoring ${id}`);
    reply.hijack();
    reply.raw.writeHead(200, {
      'content-type': 'application/x-ndjson; charset=utf-8',
      'content-disposition': `attachment; filename="rollgate-${id}.jsonl"`,
    });
    for (const t of await store.rescores.traces(id)) {
      const line = JSON.stringify({
        rescore_id: id, trace_id: t.traceId, session_id: t.sessionId, batch_id: run.batchId, source_engine: t.sourceEngine,
        rescore_engine: run.engine, builder: run.builder, positions: Array.from(t.positions), token_ids: Array.from(t.tokenIds),
        sampled_logprobs: Array.from(t.sampled), rescored_logprobs: Array.from(t.rescored), deltas: deltasOf(t),
        dropped: t.dropped, summary: t.summary, error: t.error,
      });
      if (!reply.raw.write(`${line}\n`)) await new Promise((r) => reply.raw.once('drain', r));
    }
    reply.raw.end();
    return reply;
  });
}
