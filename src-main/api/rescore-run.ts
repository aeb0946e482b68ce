// One cross-engine re-scoring run (DESIGN §8): build the traces of the chosen sessions, send each to the
// re-scoring engine for prompt logprobs, line them up with the sampled logprobs, and keep the result
// (store.rescores) so it can be listed, reopened token by token and exported. POST /api/traces/rescore
// (traces.ts) is the route; this file is the work.
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { buildSessionTraces, type SessionTrace } from '../core/export/session-traces.js';
import { rescoreTrace, traceSequence } from '../core/trajectory/rescore-align.js';
import { mergeRescoreStats, type RescoreStats } from '../core/trajectory/rescore-stats.js';
import { BUILDERS } from '../core/trajectory/index.js';
import type { BuilderName } from '../core/trajectory/types.js';
import { scoreOnPool } from '../engines/rescore.js';
import { EnginePausedError } from '../engines/pause-gate.js';
import type { RescoreRecord, RescoreSummaryJson, RescoreTraceRecord } from '../store/index.js';
import type { ApiDeps } from './routes.js';

export const rescoreBody = z.object({
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

export type RescoreBody = z.infer<typeof rescoreBody>;

/** How often a long re-scoring reports progress (plus once at the start and once at the end). */
const PROGRESS_EVERY_MS = 200;

function summary(s: RescoreStats): RescoreSummaryJson {
  const { deltas: _d, histogram: _h, ...rest } = s;
  return rest;
}

/** Runs `fn` over `items` (pulled lazily) with at most `limit` in flight. */
async function forEachLimit<T>(items: AsyncIterable<T>, limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  // An async generator queues concurrent next() calls, so workers never receive the same item.
  const it = items[Symbol.asyncIterator]();
  let failed: unknown = null;
  const worker = async () => {
    for (;;) {
      if (failed) return;
      const next = await it.next();
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

export type RescoreOutcome =
  | { kind: 'aborted' }
  | { kind: 'paused'; error: EnginePausedError }
  | { kind: 'done'; body: Record<string, unknown> & { traces: Array<Record<string, unknown>>; errors: Array<{ traceId: string; message: string }> } };

/** Re-scores the traces of `sessionIds` on `b.engine` (which the caller has checked exists) and stores the result. */
export async function runRescore(deps: ApiDeps, b: RescoreBody, sessionIds: string[], signal: AbortSignal): Promise<RescoreOutcome> {
  const { store, pool, events } = deps;
  const engine = pool.get(b.engine)!;
  interface Job { st: SessionTrace; order: number }
  const results: Array<Record<string, unknown> | undefined> = [];
  const kept: Array<RescoreTraceRecord | undefined> = [];
  const parts: Array<RescoreStats | undefined> = [];
  const errors: Array<{ traceId: string; message: string }> = [];
  let order = 0;
  const progress = { sessionsRead: 0, tracesDone: 0, tokens: 0, sentAt: 0 };
  const report = (mode: 'start' | 'step' | 'done') => {
    if (!b.progressId || (mode === 'step' && performance.now() - progress.sentAt < PROGRESS_EVERY_MS)) return;
    progress.sentAt = performance.now();
    events.emit({ type: 'rescore', id: b.progressId, sessions: sessionIds.length, sessionsRead: progress.sessionsRead, tracesDone: progress.tracesDone, tokens: progress.tokens, done: mode === 'done' });
  };
  // Sessions are read and built one at a time, as the workers need more traces.
  async function* jobs(): AsyncGenerator<Job> {
    for (const sid of sessionIds) {
      const session = await store.sessions.get(sid);
      const built = buildSessionTraces(b.builder, session, await store.completions.listBySession(sid), { tokenText: deps.tokenTexts?.get(session?.engineId) });
      progress.sessionsRead++;
      for (const st of built.traces) yield { st, order: order++ };
    }
  }
  report('start');
  let paused: EnginePausedError | null = null;

  await forEachLimit(jobs(), b.concurrency, async ({ st, order: k }) => {
    const { trace, context } = st;
    const base = { traceId: trace.id, sessionId: trace.sessionId, sourceEngine: context.engine ?? null, completionIds: trace.completionIds };
    const record = (r: Partial<RescoreTraceRecord>): RescoreTraceRecord => ({
      ...base, replica: null, positions: new Int32Array(0), tokenIds: new Int32Array(0), sampled: new Float32Array(0), rescored: new Float32Array(0),
      dropped: 0, summary: null, error: null, ...r,
    });
    if (!trace.lossMask.includes(1)) {
      const s = mergeRescoreStats([], { bins: b.bins });
      results[k] = { ...base, positions: [], deltas: [], dropped: 0, summary: summary(s) };
      kept[k] = record({ summary: summary(s) });
      parts[k] = s;
      progress.tracesDone++;
      return;
    }
    try {
      const scored = await scoreOnPool(pool, engine.config.id, traceSequence(trace), { signal, timeoutMs: b.timeoutMs });
      const r = rescoreTrace(trace, scored.logprobs, { bins: b.bins });
      progress.tokens += r.stats.n;
      results[k] = {
        ...base, replica: scored.replica, positions: r.positions, deltas: r.stats.deltas, dropped: r.dropped,
        ...(b.includeLogprobs ? { sampled: r.sampled, rescored: r.rescored } : {}),
        summary: summary(r.stats),
      };
      kept[k] = record({
        replica: scored.replica, positions: Int32Array.from(r.positions), tokenIds: Int32Array.from(r.positions, (p) => trace.responseIds[p]),
        sampled: Float32Array.from(r.sampled), rescored: Float32Array.from(r.rescored), dropped: r.dropped, summary: summary(r.stats),
      });
      parts[k] = r.stats;
    } catch (e) {
      if (signal.aborted || e instanceof EnginePausedError) throw e;
      errors.push({ traceId: trace.id, message: (e as Error).message });
      results[k] = { ...base, error: (e as Error).message };
      kept[k] = record({ error: (e as Error).message });
    }
    progress.tracesDone++;
    report('step');
  }).catch((e: unknown) => {
    if (signal.aborted) return;
    if (e instanceof EnginePausedError) { paused = e; return; }
    throw e;
  });
  report('done');
  if (signal.aborted) return { kind: 'aborted' };
  if (paused) return { kind: 'paused', error: paused };

  const traces = results.filter((r): r is Record<string, unknown> => r !== undefined);
  const overall = mergeRescoreStats(parts.filter((p): p is RescoreStats => p !== undefined), { bins: b.bins });
  const sources = new Set(kept.map((t) => t?.sourceEngine ?? null));
  const run: RescoreRecord = {
    id: `rsc_${randomBytes(8).toString('hex')}`,
    createdAt: Date.now(),
    engine: engine.config.id,
    engineKind: engine.config.kind,
    sourceEngine: sources.size === 1 ? [...sources][0] : null,
    builder: b.builder,
    batchId: b.batchId ?? null,
    sessionId: b.sessionId ?? null,
    sessions: sessionIds.length,
    traces: traces.length,
    overall: { ...summary(overall), histogram: overall.histogram },
    errors,
  };
  // Kept even when every trace failed: the errors are the result.
  await store.rescores.put(run, kept.filter((t): t is RescoreTraceRecord => t !== undefined));
  return {
    kind: 'done',
    body: {
      id: run.id,
      engine: run.engine,
      engineKind: run.engineKind,
      builder: b.builder,
      sessions: sessionIds.length,
      traces,
      overall: run.overall,
      errors,
    },
  };
}
