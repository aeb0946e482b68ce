// Row <-> record mapping for the two tables. Token arrays go through token-blobs (never JSON).
import type {
  CanonicalResponse,
  CompletionRecord,
  CompletionStatus,
  Dialect,
  FinishReason,
  SessionRecord,
  SessionStatus,
  Usage,
} from '../core/types.js';
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
  request_received: string | null;
  request_served: string | null;
  response: string | null;
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
  prompt_ids: Buffer;
  output_ids: Buffer;
  output_logprobs: Buffer;
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

/** Named parameters for the completions INSERT. Encodes (and so snapshots) the token arrays. */
export function completionParams(rec: CompletionRecord, bodyHash: string | null): Record<string, unknown> {
  if (rec.outputLogprobs.length !== rec.outputIds.length) {
    throw new RangeError(
      `completion ${rec.id}: outputLogprobs.length ${rec.outputLogprobs.length} !== outputIds.length ${rec.outputIds.length}`,
    );
  }
  return {
    id: rec.id,
    session_id: rec.sessionId,
    seq: rec.seq,
    dialect: rec.dialect,
    engine_id: rec.engineId,
    replica: rec.replica,
    policy_version: rec.policyVersion,
    request_received: jsonOrNull(rec.requestReceived),
    request_served: jsonOrNull(rec.requestServed),
    response: jsonOrNull(rec.response),
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
    prompt_ids: int32ToBlob(rec.promptIds),
    output_ids: int32ToBlob(rec.outputIds),
    output_logprobs: float32ToBlob(rec.outputLogprobs),
  };
}

export function rowToCompletion(r: CompletionRow): CompletionRecord {
  return {
    id: r.id,
    sessionId: r.session_id,
    seq: r.seq,
    dialect: r.dialect as Dialect,
    engineId: r.engine_id,
    replica: r.replica,
    policyVersion: r.policy_version,
    requestReceived: parseOrNull<unknown>(r.request_received),
    requestServed: parseOrNull<unknown>(r.request_served),
    response: parseOrNull<CanonicalResponse>(r.response),
    finishReason: r.finish_reason as FinishReason | null,
    usage: parseOrNull<Usage>(r.usage),
    timings: { queueMs: r.queue_ms, ttftMs: r.ttft_ms, totalMs: r.total_ms },
    status: r.status as CompletionStatus,
    error: r.error,
    retryOf: r.retry_of,
    createdAt: r.created_at,
    promptIds: blobToInt32(r.prompt_ids),
    outputIds: blobToInt32(r.output_ids),
    outputLogprobs: blobToFloat32(r.output_logprobs),
  };
}
