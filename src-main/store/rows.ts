// Row <-> record mapping for the two tables. Token arrays go through token-blobs (never JSON).
import type {
  CanonicalResponse,
  CompletionRecord,
  CompletionStatus,
  Dialect,
  FinishReason,
  IncompleteReason,
  SessionRecord,
  SessionStatus,
  Usage,
} from '../core/types.js';
import type { ChosenBase } from './delta-bases.js';
import { columnNeedsBase, decodeJsonColumn, encodeJsonColumn, type DeltaBase, type JsonColumn } from './json-columns.js';
import { blobToFloat32, blobToInt32, float32ToBlob, int32ToBlob } from './token-blobs.js';

export interface SessionRow {
  id: string;
  key_hash: Buffer;
  engine_id: string | null;
  harness: string | null;
  task_id: string | null;
  batch_id: string | null;
  metadata: string;
  status: string;
  reward: number | null;
  created_at: number;
  finished_at: number | null;
}

export interface CompletionRow {
  id: string;
  session_id: string;
  seq: number;
  dialect: string;
  engine_id: string;
  replica: string;
  policy_version: number;
  /** JSON text, or a tagged BLOB (delta against the parent's column and/or deflated; json-columns.ts). */
  request_received: JsonColumn;
  request_served: JsonColumn;
  response: JsonColumn;
  finish_reason: string | null;
  usage: string | null;
  queue_ms: number;
  ttft_ms: number | null;
  total_ms: number;
  status: string;
  error: string | null;
  retry_of: string | null;
  created_at: number;
  body_hash: string | null;
  n_prompt: number;
  n_output: number;
  /** status 'incomplete': the reason (schema 8). */
  incomplete_reason?: string | null;
  /** Delta storage: the completion this row is stored against (schema 7; null = stored in full). */
  parent_id: string | null;
  /** Leading prompt ids taken from the parent's tip (prompt ids ++ output ids); prompt_ids holds the rest. */
  prompt_base: number;
  prompt_ids: Buffer;
  output_ids: Buffer;
  output_logprobs: Buffer;
}

/** What the writer needs to insert a completion: delta params, and full params should the parent be missing. */
export interface EncodedCompletion {
  params: Record<string, unknown>;
  full(): Record<string, unknown>;
}

/** Where the new row's own values go once written: the base of its children's deltas. */
export interface NextBases {
  received: DeltaBase;
  served: DeltaBase;
}

/** JSON text or NULL (undefined and null both become NULL and read back as null). */
export function jsonOrNull(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  return JSON.stringify(v);
}

function parseOrNull<T>(s: string | null): T | null {
  return s === null ? null : (JSON.parse(s) as T);
}

export function rowToSession(r: SessionRow): SessionRecord {
  return {
    id: r.id,
    engineId: r.engine_id,
    harness: r.harness,
    taskId: r.task_id,
    batchId: r.batch_id,
    metadata: r.metadata ? (JSON.parse(r.metadata) as Record<string, unknown>) : {},
    status: r.status as SessionStatus,
    reward: r.reward,
    createdAt: r.created_at,
    finishedAt: r.finished_at,
  };
}

/**
 * Named parameters for the completions INSERT. Encodes (and so snapshots) the token arrays. With a base,
 * the prompt ids after `base.promptBase` and the requests as deltas against the parent's (DESIGN §9).
 */
export function completionParams(rec: CompletionRecord, bodyHash: string | null, base: ChosenBase | null = null, next?: NextBases): Record<string, unknown> {
  if (rec.outputLogprobs.length !== rec.outputIds.length) {
    throw new RangeError(
      `completion ${rec.id}: outputLogprobs.length ${rec.outputLogprobs.length} !== outputIds.length ${rec.outputIds.length}`,
    );
  }
  const received = encodeJsonColumn(rec.requestReceived, base?.entry.received ?? null, next?.received);
  const served = encodeJsonColumn(rec.requestServed, base?.entry.served ?? null, next?.served);
  const promptBase = base ? base.promptBase : 0;
  const parent = base && (promptBase > 0 || received.usesBase || served.usesBase) ? base.entry.id : null;
  return {
    id: rec.id,
    session_id: rec.sessionId,
    seq: rec.seq,
    dialect: rec.dialect,
    engine_id: rec.engineId,
    replica: rec.replica,
    policy_version: rec.policyVersion,
    request_received: received.column,
    request_served: served.column,
    response: encodeJsonColumn(rec.response, null).column,
    finish_reason: rec.finishReason ?? null,
    usage: jsonOrNull(rec.usage),
    queue_ms: rec.timings?.queueMs ?? 0,
    ttft_ms: rec.timings?.ttftMs ?? null,
    total_ms: rec.timings?.totalMs ?? 0,
    status: rec.status,
    error: rec.error ?? null,
    retry_of: rec.retryOf ?? null,
    created_at: rec.createdAt,
    body_hash: bodyHash,
    n_prompt: rec.promptIds.length,
    n_output: rec.outputIds.length,
    incomplete_reason: rec.status === 'incomplete' ? (rec.incompleteReason ?? null) : null,
    parent_id: parent,
    prompt_base: parent ? promptBase : 0,
    prompt_ids: int32ToBlob(parent && promptBase > 0 ? rec.promptIds.subarray(promptBase) : rec.promptIds),
    output_ids: int32ToBlob(rec.outputIds),
    output_logprobs: float32ToBlob(rec.outputLogprobs),
  };
}

/** The full prompt ids of a row: the parent's tip up to prompt_base, then the stored suffix. */
export function promptIdsOf(
  r: Pick<CompletionRow, 'id' | 'prompt_base' | 'prompt_ids' | 'n_prompt'>,
  parent: () => Pick<CompletionRecord, 'id' | 'promptIds' | 'outputIds'>,
): Int32Array {
  const suffix = blobToInt32(r.prompt_ids);
  if (!r.prompt_base) return suffix;
  const p = parent();
  const base = r.prompt_base;
  if (base + suffix.length !== r.n_prompt || base > p.promptIds.length + p.outputIds.length) {
    throw new Error(`completion ${r.id}: stored prompt (${base} from ${p.id} + ${suffix.length}) does not make ${r.n_prompt} ids`);
  }
  const out = new Int32Array(r.n_prompt);
  const P = p.promptIds.length;
  if (base <= P) out.set(p.promptIds.subarray(0, base));
  else {
    out.set(p.promptIds);
    out.set(p.outputIds.subarray(0, base - P), P);
  }
  out.set(suffix, base);
  return out;
}

/** True when reading this row needs its parent record. */
export function rowNeedsParent(r: Pick<CompletionRow, 'parent_id' | 'prompt_base' | 'request_received' | 'request_served'>): boolean {
  return r.parent_id !== null && (r.prompt_base > 0 || columnNeedsBase(r.request_received) || columnNeedsBase(r.request_served));
}

/**
 * A row as a record. `parent` resolves the row's parent record (already decoded) when the row is stored
 * as a delta; values it shares with the parent are shared objects (treat records as read-only).
 */
export function rowToCompletion(r: CompletionRow, parent: (id: string) => CompletionRecord = noParent): CompletionRecord {
  let p: CompletionRecord | undefined;
  const par = (): CompletionRecord => (p ??= parent(r.parent_id!));
  return {
    id: r.id,
    sessionId: r.session_id,
    seq: r.seq,
    dialect: r.dialect as Dialect,
    engineId: r.engine_id,
    replica: r.replica,
    policyVersion: r.policy_version,
    requestReceived: decodeJsonColumn(r.request_received, () => par().requestReceived),
    requestServed: decodeJsonColumn(r.request_served, () => par().requestServed),
    response: decodeJsonColumn(r.response, () => null) as CanonicalResponse | null,
    finishReason: r.finish_reason as FinishReason | null,
    usage: parseOrNull<Usage>(r.usage),
    timings: { queueMs: r.queue_ms, ttftMs: r.ttft_ms, totalMs: r.total_ms },
    status: r.status as CompletionStatus,
    error: r.error,
    retryOf: r.retry_of,
    createdAt: r.created_at,
    ...(r.incomplete_reason ? { incompleteReason: r.incomplete_reason as IncompleteReason } : {}),
    promptIds: promptIdsOf(r, par),
    outputIds: blobToInt32(r.output_ids),
    outputLogprobs: blobToFloat32(r.output_logprobs),
  };
}

function noParent(id: string): never {
  throw new Error(`completion row needs its parent ${id}, and none was given`);
}
