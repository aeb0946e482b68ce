// Export row encoders (DESIGN §8): pure functions from a trace (+ its session context) to JSONL rows.
// Field names are snake_case; token arrays are plain JSON number arrays (the export format, not the store).
import type { Trace } from '../trajectory/types.js';
import type { Credit } from './credit.js';
import type { TraceFacts } from './row-facts.js';
import type { AssistantMessage, CanonicalResponse, ChatMessage, FunctionTool } from '../types.js';

/** What the trace alone does not know: where its session came from. */
export interface TraceContext {
  taskId?: string | null;
  batchId?: string | null;
  /** Samples of the same prompt/task in a batch (GRPO group). Default: `<batchId>:<taskId>` when both are known. */
  groupId?: string | null;
  sampleIndex?: number | null;
  /** Engine id that produced the trace. */
  engine?: string | null;
  /** Conversation in canonical (OpenAI chat) messages, when wanted in the row. */
  messages?: ChatMessage[] | null;
  tools?: FunctionTool[] | null;
  /** How the trace's reward was attributed (credit policy, what chose the earner, whether this trace is it). */
  credit?: Credit;
  /** Extra metadata (session metadata, evaluator details); merged under the trace facts. */
  metadata?: Record<string, unknown>;
  /** Sample-level facts every row carries (row-facts.ts). */
  facts?: TraceFacts;
}

export interface TrainRow extends Partial<TraceFacts> {
  trace_id: string;
  session_id: string;
  task_id: string | null;
  batch_id: string | null;
  group_id: string | null;
  sample_index: number | null;
  engine: string | null;
  policy_versions: number[];
  prompt_ids: number[];
  response_ids: number[];
  loss_mask: number[];
  response_logprobs: number[];
  reward: number | null;
  /** Custody (DESIGN §9): a masked trace includes or depends on an incomplete call; kept only on request. */
  masked: boolean;
  mask_reason: string | null;
  /** Reward attribution: {policy: final|broadcast|split, source: final-response|main-chain|unattributed, earner}. */
  credit: Credit | null;
  messages?: ChatMessage[];
  metadata: Record<string, unknown>;
}

export interface SftRow extends Partial<TraceFacts> {
  trace_id: string;
  session_id: string;
  task_id: string | null;
  batch_id: string | null;
  reward: number | null;
  messages: ChatMessage[];
  tools?: FunctionTool[];
  metadata: Record<string, unknown>;
}

function groupId(ctx: TraceContext): string | null {
  if (ctx.groupId !== undefined) return ctx.groupId;
  return ctx.batchId && ctx.taskId ? `${ctx.batchId}:${ctx.taskId}` : null;
}

function traceMetadata(trace: Trace, ctx: TraceContext): Record<string, unknown> {
  return {
    ...(ctx.metadata ?? {}),
    builder: trace.builder,
    completion_ids: trace.completionIds,
    origin: trace.origin,
    breaks: trace.breaks,
    skipped: trace.skipped,
    proof_ok: trace.proof.ok,
    rerendered: trace.rerendered,
  };
}

export function toTrainRow(trace: Trace, ctx: TraceContext = {}): TrainRow {
  const row: TrainRow = {
    trace_id: trace.id,
    session_id: trace.sessionId,
    task_id: ctx.taskId ?? null,
    batch_id: ctx.batchId ?? null,
    group_id: groupId(ctx),
    sample_index: ctx.sampleIndex ?? null,
    engine: ctx.engine ?? null,
    policy_versions: trace.policyVersions,
    prompt_ids: trace.promptIds,
    response_ids: trace.responseIds,
    loss_mask: trace.lossMask,
    response_logprobs: trace.responseLogprobs,
    reward: trace.reward,
    masked: trace.masked === true,
    mask_reason: trace.maskReason ?? null,
    credit: ctx.credit ?? null,
    ...ctx.facts,
    metadata: traceMetadata(trace, ctx),
  };
  if (ctx.messages) row.messages = ctx.messages;
  return row;
}

/** Messages of the conversation ending with the trace's last turn (caller supplies them). */
export function toSftRow(trace: Trace, ctx: TraceContext & { messages: ChatMessage[] }): SftRow {
  const row: SftRow = {
    trace_id: trace.id,
    session_id: trace.sessionId,
    task_id: ctx.taskId ?? null,
    batch_id: ctx.batchId ?? null,
    reward: trace.reward,
    messages: ctx.messages,
    ...ctx.facts,
    metadata: traceMetadata(trace, ctx),
  };
  if (ctx.tools && ctx.tools.length > 0) row.tools = ctx.tools;
  return row;
}

/** One JSONL line (with the trailing newline). */
export function encodeJsonlRow(row: TrainRow | SftRow | Record<string, unknown>): string {
  return `${JSON.stringify(row)}\n`;
}

/** The assistant turn of a canonical response as a chat message (reasoning kept as `reasoning`). */
export function assistantMessage(msg: AssistantMessage): ChatMessage {
  const m: ChatMessage = { role: 'assistant', content: msg.content };
  if (msg.reasoning) m.reasoning = msg.reasoning;
  if (msg.tool_calls && msg.tool_calls.length > 0) m.tool_calls = msg.tool_calls;
  return m;
}

function messagesOf(body: unknown): { messages: ChatMessage[]; tools?: FunctionTool[] } | null {
  if (!body || typeof body !== 'object') return null;
  const b = body as { messages?: unknown; tools?: unknown };
  if (!Array.isArray(b.messages)) return null;
  return { messages: b.messages as ChatMessage[], tools: Array.isArray(b.tools) ? (b.tools as FunctionTool[]) : undefined };
}

/**
 * SFT conversation of one completion: the OpenAI-chat messages it was served with (requestServed in
 * chat mode, else requestReceived when the agent spoke OpenAI chat) plus the response's assistant turn.
 * Null when neither request carries chat messages (e.g. token mode with another dialect).
 */
export function sftConversation(rec: {
  requestServed: unknown;
  requestReceived: unknown;
  response: CanonicalResponse | null;
}): { messages: ChatMessage[]; tools?: FunctionTool[] } | null {
  const req = messagesOf(rec.requestServed) ?? messagesOf(rec.requestReceived);
  if (!req || !rec.response) return null;
  return { messages: [...req.messages, assistantMessage(rec.response.message)], tools: req.tools };
}
