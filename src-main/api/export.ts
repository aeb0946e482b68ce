// Streaming JSONL export (DESIGN §8, §11) in constant memory: completions are read from SQLite one row at
// a time (ordered by session, then seq), grouped per session, built into traces, encoded, and written
// with backpressure; only one session's records are held at once. Shared by `GET /api/export` and
// `rollgate export` (which runs on the data folder directly, no server).
//
//   GET /api/export?batch=&engine=&session=&format=train|sft&preset=verl|slime|verifiers|trl-sft
//                  &builder=prefix-merge|per-request&minReward=&maxReward=&status=finished,…|all&hasReward=1&messages=1&includeMasked=1
//
// Sessions that are not finished (active, interrupted, failed) are left out unless `status` names them;
// `hasReward=1` keeps only traces with a reward. An unknown batch or session is a 404, not an empty file.
// preset: the trainer's own row (core/export/presets/), mapped from the train row (trl-sft: the sft row).
//
// Traces masked by custody (DESIGN §9: they include or depend on an incomplete call) are left out unless
// includeMasked=1; the count goes to the progress (the CLI prints it; GET /api/capture-health has the figures).
//
// format=train: one DESIGN §8 row per trace (snake_case; `messages` only with messages=1).
// format=sft: one row per distinct conversation: each trace's canonical conversation (ending with its last
// turn); a conversation that is a prefix of a longer one of the same session and reward is folded into it
// (listed in the kept row's metadata.folded_trace_ids); traces whose conversation cannot be recovered are
// skipped. Both are counted in the progress.
import { once } from 'node:events';
import { Readable, type Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { mapSftRow, mapTrainRow, PresetState, PRESETS, presetBase, type PresetName } from '../core/export/presets/index.js';
import { encodeJsonlRow, toSftRow, toTrainRow, type SftRow, type TrainRow } from '../core/export/rows.js';
import { buildSessionTraces, canonicalConversation, foldConversations, rewardInRange, type SessionInfo, type SessionTrace } from '../core/export/session-traces.js';
import { BUILDERS } from '../core/trajectory/index.js';
import type { BuilderName } from '../core/trajectory/types.js';
import type { ChatMessage, CompletionRecord, FunctionTool, SessionStatus } from '../core/types.js';
import type { EngineTokenTexts } from '../engines/token-text.js';
import type { CompletionIterateFilter } from '../store/index.js';
import type { ApiDeps } from './routes.js';

export type ExportFormat = 'train' | 'sft';
export const EXPORT_FORMATS: readonly ExportFormat[] = ['train', 'sft'];
export const SESSION_STATUSES: readonly SessionStatus[] = ['finished', 'failed', 'interrupted', 'active'];
/** Only finished samples are training data unless asked otherwise. */
export const DEFAULT_EXPORT_STATUSES: readonly SessionStatus[] = ['finished'];

export interface ExportOptions {
  format?: ExportFormat;
  builder?: BuilderName;
  batchId?: string;
  engineId?: string;
  sessionId?: string;
  minReward?: number;
  maxReward?: number;
  /** Train rows: include the canonical conversation as `messages`. */
  messages?: boolean;
  /** A trainer's row shape instead of the base row (sets the format). */
  preset?: PresetName;
  /** Session statuses to export (default: finished only). */
  statuses?: readonly SessionStatus[];
  /** Only traces with a reward. */
  hasReward?: boolean;
  /** Keep traces masked by custody (left out by default; counted in the progress either way). */
  includeMasked?: boolean;
}

/** What the export reads: the store's repositories fit. */
export interface ExportSource {
  sessions: { get(id: string): Promise<SessionInfo | null>; list?(filter: { batchId?: string; limit?: number }): Promise<unknown[]> };
  batches?: { get(id: string): Promise<unknown> };
  completions: { iterateAll(filter?: CompletionIterateFilter): AsyncIterable<CompletionRecord> };
  /** Token texts of the engines' ids, so chat-mode re-renders merge (engines/token-text.ts). */
  tokenTexts?: Pick<EngineTokenTexts, 'get' | 'info'>;
}

export interface ExportProgress {
  sessions: number;
  completions: number;
  traces: number;
  /** Lines written. */
  rows: number;
  bytes: number;
  /** Traces left out by the reward range or the has-reward filter. */
  filtered: number;
  /** Sessions left out for their status (not finished, unless asked for). */
  skippedSessions: number;
  /** SFT: traces without a recoverable conversation. */
  noConversation: number;
  /** Why the export stopped early (a row that could not be read); its last line says so too. */
  error?: string;
  /** SFT: traces whose conversation is a prefix of a longer one of the same session (folded into it). */
  folded: number;
  /** Traces masked by custody (incomplete calls, no attributable reward): left out unless includeMasked. */
  masked: number;
  maskReasons: Record<string, number>;
}

export function newProgress(): ExportProgress {
  return { sessions: 0, completions: 0, traces: 0, rows: 0, bytes: 0, filtered: 0, skippedSessions: 0, noConversation: 0, folded: 0, masked: 0, maskReasons: {} };
}

/** Consecutive records of the same session (the input is ordered by session). */
async function* bySession(records: AsyncIterable<CompletionRecord>): AsyncGenerator<CompletionRecord[]> {
  let current: CompletionRecord[] = [];
  for await (const r of records) {
    if (current.length > 0 && current[0].sessionId !== r.sessionId) {
      yield current;
      current = [];
    }
    current.push(r);
  }
  if (current.length > 0) yield current;
}

/** JSONL lines, one per exported trace, produced lazily (pull one line → at most one session is read). */
/** Why an export cannot run (an unknown batch or session), or null. */
export async function exportScopeError(source: ExportSource, opts: ExportOptions): Promise<string | null> {
  if (opts.sessionId !== undefined && !(await source.sessions.get(opts.sessionId))) return `unknown session ${opts.sessionId}`;
  if (opts.batchId !== undefined && !(await source.batches?.get(opts.batchId)) && ((await source.sessions.list?.({ batchId: opts.batchId, limit: 1 }))?.length ?? 0) === 0) {
    return `unknown batch ${opts.batchId}`;
  }
  return null;
}

/**
 * The export's JSONL lines. A row that cannot be read (a corrupt record) ends the export with one last line,
 * `{"error": {...}}`, so a reader knows the file is incomplete rather than finding it merely shorter.
 */
export async function* exportLines(source: ExportSource, opts: ExportOptions = {}, progress: ExportProgress = newProgress()): AsyncGenerator<string> {
  try {
    yield* exportRows(source, opts, progress);
  } catch (e) {
    progress.error = `export stopped after ${progress.rows} rows: ${(e as Error).message}; this file is incomplete`;
    yield `${JSON.stringify({ error: { message: progress.error, type: 'export_incomplete' } })}\n`;
  }
}

async function* exportRows(source: ExportSource, opts: ExportOptions, progress: ExportProgress): AsyncGenerator<string> {
  const preset = opts.preset;
  const format = preset ? presetBase(preset) : (opts.format ?? 'train');
  const presetState = new PresetState();
  const statuses = new Set(opts.statuses ?? DEFAULT_EXPORT_STATUSES);
  const encodeTrain = (row: TrainRow) => encodeJsonlRow(preset && preset !== 'trl-sft' ? mapTrainRow(preset, row, presetState) : row);
  const encodeSft = (row: SftRow) => encodeJsonlRow(preset === 'trl-sft' ? mapSftRow(preset, row) : row);
  const builder = opts.builder ?? 'prefix-merge';
  const filter: CompletionIterateFilter = {};
  if (opts.batchId !== undefined) filter.batchId = opts.batchId;
  if (opts.engineId !== undefined) filter.engineId = opts.engineId;
  if (opts.sessionId !== undefined) filter.sessionId = opts.sessionId;
  for await (const records of bySession(source.completions.iterateAll(filter))) {
    const session = await source.sessions.get(records[0].sessionId);
    if (!session || !statuses.has(session.status)) {
      progress.skippedSessions++;
      continue;
    }
    progress.sessions++;
    progress.completions += records.length;
    const engineId = records[0].engineId;
    const built = buildSessionTraces(builder, session, records, {
      tokenText: source.tokenTexts?.get(engineId), engineInfo: source.tokenTexts?.info(engineId),
    });
    const byId = format === 'sft' || opts.messages ? new Map(records.map((r) => [r.id, r])) : null;
    const sft: Array<{ id: string; reward: number | null; messages: ChatMessage[]; tools?: FunctionTool[]; st: SessionTrace }> = [];
    for (const st of built.traces) {
      progress.traces++;
      if (st.trace.masked) {
        progress.masked++;
        const why = st.trace.maskReason ?? 'masked';
        progress.maskReasons[why] = (progress.maskReasons[why] ?? 0) + 1;
        if (!opts.includeMasked) continue;
      }
      if (!rewardInRange(st.trace.reward, opts.minReward, opts.maxReward) || (opts.hasReward && st.trace.reward === null)) {
        progress.filtered++;
        continue;
      }
      const last = byId?.get(st.trace.completionIds[st.trace.completionIds.length - 1]);
      const conv = last ? canonicalConversation(last) : null;
      if (format === 'sft') {
        if (conv) sft.push({ id: st.trace.id, reward: st.trace.reward, messages: conv.messages, tools: conv.tools, st });
        else progress.noConversation++;
        continue;
      }
      yield count(progress, encodeTrain(toTrainRow(st.trace, conv ? { ...st.context, messages: conv.messages } : st.context)));
    }
    for (const { item, folded } of foldConversations(sft)) {
      progress.folded += folded.length;
      const metadata = folded.length ? { ...item.st.context.metadata, folded_trace_ids: folded } : item.st.context.metadata;
      yield count(progress, encodeSft(toSftRow(item.st.trace, { ...item.st.context, metadata, messages: item.messages, tools: item.tools })));
    }
  }
}

function count(progress: ExportProgress, line: string): string {
  progress.rows++;
  progress.bytes += Buffer.byteLength(line);
  return line;
}

/** Lines joined into chunks of about `chunkBytes` (fewer, larger writes); a chunk never splits a line. */
export async function* chunked(lines: AsyncIterable<string>, chunkBytes = 64 * 1024): AsyncGenerator<string> {
  let buf: string[] = [];
  let size = 0;
  for await (const line of lines) {
    buf.push(line);
    size += line.length;
    if (size >= chunkBytes) {
      yield buf.join('');
      buf = [];
      size = 0;
    }
  }
  if (buf.length) yield buf.join('');
}

/**
 * Writes chunks to `out`, waiting for 'drain' whenever it asks to (backpressure). Does not end `out`.
 * Rejects on a write error (e.g. EPIPE); the chunk generator is closed either way.
 */
export async function writeChunks(chunks: AsyncIterable<string>, out: Writable, onChunk?: () => void): Promise<void> {
  let failure: Error | null = null;
  const onError = (e: Error) => { failure ??= e; };
  out.on('error', onError);
  try {
    for await (const chunk of chunks) {
      if (failure) throw failure;
      const more = out.write(chunk);
      onChunk?.();
      if (!more && !failure) await once(out, 'drain');
    }
    if (failure) throw failure;
  } finally {
    out.off('error', onError);
  }
}

export function exportFilename(opts: ExportOptions): string {
  const parts = ['rollgate', opts.batchId ?? opts.sessionId ?? 'all', opts.engineId, opts.preset ?? opts.format ?? 'train', opts.builder ?? 'prefix-merge']
    .filter((p): p is string => !!p)
    .map((p) => p.replace(/[^A-Za-z0-9._-]+/g, '_'));
  return `${parts.join('-')}.jsonl`;
}

const num = z.string().trim().min(1).transform((v, ctx) => {
  const n = Number(v);
  if (!Number.isFinite(n)) {
    ctx.addIssue({ code: 'custom', message: 'must be a number' });
    return z.NEVER;
  }
  return n;
});

const exportQuery = z.object({
  batch: z.string().min(1).optional(),
  engine: z.string().min(1).optional(),
  session: z.string().min(1).optional(),
  format: z.enum(EXPORT_FORMATS as [ExportFormat, ...ExportFormat[]]).default('train'),
  builder: z.enum(BUILDERS as [BuilderName, ...BuilderName[]]).default('prefix-merge'),
  minReward: num.optional(),
  maxReward: num.optional(),
  messages: z.enum(['0', '1', 'true', 'false']).optional(),
  preset: z.enum(PRESETS as [PresetName, ...PresetName[]]).optional(),
  status: z.string().optional(),
  hasReward: z.enum(['0', '1', 'true', 'false']).optional(),
  includeMasked: z.enum(['0', '1', 'true', 'false']).optional(),
});

/** `finished,failed` or `all` → statuses; throws with the unknown name. */
export function parseStatuses(v: string): SessionStatus[] {
  if (v.trim() === 'all') return [...SESSION_STATUSES];
  const out = v.split(',').map((x) => x.trim()).filter(Boolean);
  for (const x of out) if (!(SESSION_STATUSES as readonly string[]).includes(x)) throw new Error(`unknown session status ${x}; use ${SESSION_STATUSES.join(', ')} or all`);
  if (out.length === 0) throw new Error('status: name at least one status, or all');
  return out as SessionStatus[];
}

export function parseExportQuery(query: unknown): { ok: true; opts: ExportOptions } | { ok: false; message: string } {
  const q = exportQuery.safeParse(query ?? {});
  if (!q.success) return { ok: false, message: q.error.issues.map((i) => `${i.path.join('.') || 'query'}: ${i.message}`).join('; ') };
  const d = q.data;
  if (d.minReward !== undefined && d.maxReward !== undefined && d.minReward > d.maxReward) return { ok: false, message: 'minReward is greater than maxReward' };
  let statuses: SessionStatus[] | undefined;
  try { statuses = d.status === undefined ? undefined : parseStatuses(d.status); } catch (e) { return { ok: false, message: (e as Error).message }; }
  return {
    ok: true,
    opts: {
      format: d.format, builder: d.builder, batchId: d.batch, engineId: d.engine, sessionId: d.session,
      minReward: d.minReward, maxReward: d.maxReward, messages: d.messages === '1' || d.messages === 'true',
      preset: d.preset, statuses, hasReward: d.hasReward === '1' || d.hasReward === 'true',
      includeMasked: d.includeMasked === '1' || d.includeMasked === 'true',
    },
  };
}

export async function registerExport(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  const { store } = deps;
  app.get('/api/export', async (req, reply) => {
    const parsed = parseExportQuery(req.query);
    if (!parsed.ok) return reply.code(400).send({ error: { message: parsed.message, type: 'invalid_request_error' } });
    const opts = parsed.opts;
    const source: ExportSource = { sessions: store.sessions, batches: store.batches, completions: store.completions, tokenTexts: deps.tokenTexts };
    const scope = await exportScopeError(source, opts);
    if (scope) return reply.code(404).send({ error: { message: scope, type: 'not_found_error' } });
    // Readable.from pulls the generator only as fast as the socket drains; a client that goes away
    // destroys the stream, which closes the generator and with it the SQLite read cursor.
    const body = Readable.from(chunked(exportLines(source, opts)), { objectMode: false, highWaterMark: 64 * 1024 });
    return reply
      .header('content-type', 'application/x-ndjson; charset=utf-8')
      .header('content-disposition', `attachment; filename="${exportFilename(opts)}"`)
      .header('cache-control', 'no-store')
      .send(body);
  });
}
