// What the workbench asks to answer a researcher's questions without reading whole batches (DESIGN §8):
//
//   GET /api/batches/:id/health            → BatchHealth: traces, chain breaks and masked traces (with reasons),
//                                             per task, and mean reward per policy version with its standard error
//   GET /api/trace-health?sessions=a,b,…   → {sessions: [SessionHealth]} (at most 500 ids)
//   GET /api/batches/:id/samples?sessions=a,b,… → {tasks: [TaskResult]}: the tasks those sessions belong to, as in
//                                             GET /api/batches/:id — a live view patches what changed instead of refetching 512 samples
//   GET /api/batches/:id/verdicts          → {verdicts: {sessionId: {outcome, evaluator, reward, output, error, finalAnswer}}}
//   GET /api/sessions/:id/transcript       → {conversations: [{traceId, completionId, messages, tools?}]}: each trace's
//                                             conversation as the agent sent it, ending with the model's answer
import type { FastifyInstance, FastifyReply } from 'fastify';
import { buildSessionTraces, canonicalConversation } from '../core/export/session-traces.js';
import { buildBatchView } from '../rollouts/results.js';
import type { ApiDeps } from './routes.js';
import { batchHealth, TraceHealth } from './trace-health.js';

const MAX_IDS = 500;
/** Evaluator output and final answers are cut to this many characters in the verdicts list. */
const OUTPUT_CHARS = 600;

const notFound = (reply: FastifyReply, what: string) => reply.code(404).send({ error: { message: `${what} not found`, type: 'not_found_error' } });

function idList(raw: unknown): string[] {
  return typeof raw === 'string' ? [...new Set(raw.split(',').map((s) => s.trim()).filter(Boolean))].slice(0, MAX_IDS) : [];
}

const cut = (s: string | null | undefined) => (s == null ? null : s.length > OUTPUT_CHARS ? `${s.slice(0, OUTPUT_CHARS)}…` : s);

export async function registerInsights(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  const { store } = deps;
  const health = new TraceHealth(store, deps.tokenTexts);

  app.get('/api/batches/:id/health', async (req, reply) => {
    const { id } = req.params as { id: string };
    if (!(await store.batches.get(id))) return notFound(reply, 'batch');
    return batchHealth(health, id, await store.sessions.list({ batchId: id }));
  });

  app.get('/api/trace-health', async (req) => {
    const ids = idList((req.query as { sessions?: string }).sessions);
    const out = [];
    for (const id of ids) {
      const s = await store.sessions.getSummary(id);
      if (s) out.push(await health.of(s));
    }
    return { sessions: out };
  });

  app.get('/api/batches/:id/samples', async (req, reply) => {
    const { id } = req.params as { id: string };
    const batch = await store.batches.get(id);
    if (!batch) return notFound(reply, 'batch');
    const taskIds = new Set<string>();
    for (const sid of idList((req.query as { sessions?: string }).sessions)) {
      const s = await store.sessions.get(sid);
      if (s?.batchId === id && s.taskId) taskIds.add(s.taskId);
    }
    if (taskIds.size === 0) return { tasks: [] };
    const sessions = await store.slices.sessionsOfTasks(id, [...taskIds]);
    const runs = await store.slices.runs(id, sessions.map((s) => s.id));
    const view = buildBatchView({ ...batch, taskIds: batch.taskIds.filter((t) => taskIds.has(t)) }, sessions, runs);
    return { tasks: view.tasks };
  });

  app.get('/api/batches/:id/verdicts', async (req, reply) => {
    const { id } = req.params as { id: string };
    if (!(await store.batches.get(id))) return notFound(reply, 'batch');
    const verdicts: Record<string, unknown> = {};
    for (const r of await store.slices.runs(id)) {
      verdicts[r.sessionId] = {
        outcome: r.outcome, exitCode: r.exitCode, evaluator: r.evaluator?.type ?? null, reward: r.evaluator?.reward ?? null,
        output: cut(r.evaluator?.output), error: r.evaluator?.error ?? r.error ?? null, finalAnswer: cut(r.finalAnswer),
      };
    }
    return { verdicts };
  });

  app.get('/api/sessions/:id/transcript', async (req, reply) => {
    const { id } = req.params as { id: string };
    const session = await store.sessions.get(id);
    if (!session) return notFound(reply, 'session');
    const records = await store.completions.listBySession(id);
    const byId = new Map(records.map((r) => [r.id, r]));
    const conversations = [];
    for (const { trace } of buildSessionTraces('prefix-merge', session, records, { tokenText: deps.tokenTexts?.get(session.engineId) }).traces) {
      const last = byId.get(trace.completionIds[trace.completionIds.length - 1]);
      if (!last) continue;
      // The agent's own request (not the served one): the messages as the agent kept them.
      const conv = canonicalConversation({ ...last, requestServed: null });
      if (conv) conversations.push({ traceId: trace.id, completionId: last.id, ...conv });
    }
    return { conversations };
  });
}
