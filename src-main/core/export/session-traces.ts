// A session's traces with everything the API and the export need around them (DESIGN §6, §8): rewards
// (outcome reward broadcast, or per-trace rewards), group ids for GRPO-style trainers, the engine, and
// the canonical conversation of a trace's last turn (SFT rows). Pure: records and the session in, data out.
import { anthropicCodec } from '../dialects/anthropic.js';
import type { DialectCodec } from '../dialects/codec.js';
import { geminiCodec } from '../dialects/gemini.js';
import { openAIChatCodec } from '../dialects/openai-chat.js';
import { responsesCodec } from '../dialects/responses.js';
import { applyCustody, buildTraces } from '../trajectory/index.js';
import { byTime } from '../trajectory/common.js';
import { chooseEarner, creditedReward, creditPolicyOf, type Credit } from './credit.js';
import type { BuildOptions, BuildResult, BuilderName, Trace } from '../trajectory/types.js';
import type { CompletionRecord, ChatMessage, Dialect, FunctionTool, SessionRecord } from '../types.js';
import { traceFacts } from './row-facts.js';
import { assistantMessage, type TraceContext } from './rows.js';

/** Where a trace's reward came from. */
export type RewardSource = 'trace' | 'session' | null;

/** The session fields the builders' surroundings read (a SessionRecord fits; a future `sampleIndex` column too). */
export type SessionInfo = Pick<SessionRecord, 'id' | 'engineId' | 'harness' | 'taskId' | 'batchId' | 'metadata' | 'status' | 'reward'> & {
  sampleIndex?: number | null;
};

export interface SessionTrace {
  trace: Trace;
  context: TraceContext;
  rewardSource: RewardSource;
}

export interface SessionTracesResult {
  traces: SessionTrace[];
  unplaced: BuildResult['unplaced'];
  stats: BuildResult['stats'];
}

export type SessionBuildOptions = Pick<BuildOptions, 'retries' | 'onPolicyChange' | 'tokenText'> & {
  /** The engine's model and tokenizer ids, for the rows' facts. */
  engineInfo?: { model?: string | null; tokenizer?: string | null };
};

/** The record id inside a response id an agent saw (`chatcmpl-<id>`, `msg_<id>`, `resp_<id>`); other keys as given. */
export function completionIdOf(key: string): string {
  const m = /^(?:chatcmpl-|msg_|resp_)([0-9a-f]{24})$/.exec(key);
  return m ? m[1]! : key;
}

/**
 * Per-trace rewards: `session.metadata.traceRewards`, an object whose keys are trace ids, completion ids or
 * the response ids the agent saw, and whose values are numbers (or null). A trace takes the entry of its
 * own id, else of its last completion, else of its other completions (latest first). Completion-id keys
 * work for every builder (trace ids depend on the builder). Traces without an entry fall back to the
 * session's outcome reward.
 */
export function traceRewardsOf(session: Pick<SessionInfo, 'metadata'>): Map<string, number | null> | null {
  const raw = session.metadata?.traceRewards;
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return null;
  const out = new Map<string, number | null>();
  for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
    if (v === null) out.set(completionIdOf(k), null);
    else if (typeof v === 'number' && Number.isFinite(v)) out.set(completionIdOf(k), v);
  }
  return out;
}

/** Session metadata with more per-trace rewards merged in (later entries win). */
export function withTraceRewards(metadata: Record<string, unknown>, more: Record<string, number | null> | undefined): Record<string, unknown> {
  if (!more || !Object.keys(more).length) return metadata;
  const merged: Record<string, unknown> = {};
  const had = metadata.traceRewards && typeof metadata.traceRewards === 'object' ? metadata.traceRewards as Record<string, unknown> : {};
  // Keys are stored resolved, so `X` and `chatcmpl-X` are one entry and the latest value wins.
  for (const [k, v] of [...Object.entries(had), ...Object.entries(more)]) {
    const key = completionIdOf(k);
    delete merged[key];
    merged[key] = v;
  }
  return { ...metadata, traceRewards: merged };
}

export function rewardOf(trace: Pick<Trace, 'id' | 'completionIds'>, session: Pick<SessionInfo, 'reward' | 'metadata'>,
  perTrace: Map<string, number | null> | null = traceRewardsOf(session)): { reward: number | null; source: RewardSource } {
  if (perTrace) {
    if (perTrace.has(trace.id)) return { reward: perTrace.get(trace.id)!, source: 'trace' };
    for (let i = trace.completionIds.length - 1; i >= 0; i--) {
      const id = trace.completionIds[i];
      if (perTrace.has(id)) return { reward: perTrace.get(id)!, source: 'trace' };
    }
  }
  const r = session.reward;
  return typeof r === 'number' && Number.isFinite(r) ? { reward: r, source: 'session' } : { reward: null, source: null };
}

function sampleIndexOf(session: SessionInfo): number | null {
  const v = session.sampleIndex ?? session.metadata?.sampleIndex;
  return typeof v === 'number' && Number.isInteger(v) ? v : null;
}

/** GRPO group: samples of the same task in the same batch. */
export function groupIdOf(session: Pick<SessionInfo, 'batchId' | 'taskId'>): string | null {
  return session.batchId && session.taskId ? `${session.batchId}:${session.taskId}` : null;
}

/** Session metadata for export rows, minus what is already a column (traceRewards, sampleIndex). */
function rowMetadata(session: SessionInfo, rewardSource: RewardSource): Record<string, unknown> {
  const { traceRewards: _tr, sampleIndex: _si, ...rest } = session.metadata ?? {};
  return { ...rest, harness: session.harness, session_status: session.status, reward_source: rewardSource };
}

/**
 * Builds a session's traces and their surroundings. `records` are the session's completions (any
 * order); `session` may be null when the session row is gone (rewards and task fields are then null).
 */
export function buildSessionTraces(
  builder: BuilderName, session: SessionInfo | null, records: readonly CompletionRecord[], opts: SessionBuildOptions = {},
): SessionTracesResult {
  const result = buildTraces(builder, records, { retries: opts.retries, onPolicyChange: opts.onPolicyChange, tokenText: opts.tokenText });
  applyCustody(result.traces, records);
  const engineOf = new Map<string, string>();
  for (const r of records) engineOf.set(r.id, r.engineId);
  const perTrace = session ? traceRewardsOf(session) : null;
  const facts = traceFacts(result.traces, records, opts.engineInfo);
  // Attribution (credit.ts): the outcome reward goes to the earner, the others get what the policy says.
  const policy = creditPolicyOf(session?.metadata);
  const order = new Map([...records].sort(byTime).map((r, i) => [r.id, i]));
  const finalRaw = session?.metadata?.finalResponseId;
  const earner = chooseEarner(result.traces, (id) => order.get(id) ?? -1, typeof finalRaw === 'string' ? completionIdOf(finalRaw) : null);
  const traces = result.traces.map((trace, i): SessionTrace => {
    const { reward, source } = session ? rewardOf(trace, session, perTrace) : { reward: null, source: null as RewardSource };
    const credit: Credit = { policy, source: earner.source, earner: i === earner.index };
    trace.reward = reward;
    if (source === 'session' && reward !== null) {
      if (earner.index < 0) {
        trace.reward = null;
        if (!trace.masked) { trace.masked = true; trace.maskReason = 'unattributed'; trace.maskedBy = null; }
      } else trace.reward = creditedReward(reward, policy, credit.earner, result.traces.length);
    }
    const engine = engineOf.get(trace.completionIds[trace.completionIds.length - 1]) ?? session?.engineId ?? null;
    const context: TraceContext = {
      taskId: session?.taskId ?? null,
      batchId: session?.batchId ?? null,
      groupId: session ? groupIdOf(session) : null,
      sampleIndex: session ? sampleIndexOf(session) : null,
      engine,
      metadata: session ? rowMetadata(session, source) : { reward_source: null },
      facts: facts[i],
      credit,
    };
    return { trace, context, rewardSource: source };
  });
  return { traces, unplaced: result.unplaced, stats: result.stats };
}

/** True when a reward passes [min, max]; with either bound set, a missing reward never passes. */
export function rewardInRange(reward: number | null, min?: number, max?: number): boolean {
  if (min === undefined && max === undefined) return true;
  if (reward === null) return false;
  return (min === undefined || reward >= min) && (max === undefined || reward <= max);
}

const CODECS: Record<Dialect, DialectCodec> = {
  'openai-chat': openAIChatCodec as DialectCodec,
  'openai-responses': responsesCodec as DialectCodec,
  anthropic: anthropicCodec as DialectCodec,
  gemini: geminiCodec as DialectCodec,
};

function chatMessages(body: unknown): { messages: ChatMessage[]; tools?: FunctionTool[] } | null {
  if (!body || typeof body !== 'object') return null;
  const b = body as { messages?: unknown; tools?: unknown };
  if (!Array.isArray(b.messages)) return null;
  return { messages: b.messages as ChatMessage[], tools: Array.isArray(b.tools) && b.tools.length ? (b.tools as FunctionTool[]) : undefined };
}

/**
 * The canonical (OpenAI chat) conversation of one completion, ending with its assistant turn:
 * - chat mode: the messages the engine was served (`requestServed.messages`, what the model saw);
 * - token mode / other dialects: the agent's request (`requestReceived`) parsed by its dialect codec,
 *   i.e. the canonical request the gateway rendered the prompt from.
 * Null when there is no response or the request cannot be parsed.
 */
export function canonicalConversation(rec: Pick<CompletionRecord, 'dialect' | 'requestServed' | 'requestReceived' | 'response'>):
  { messages: ChatMessage[]; tools?: FunctionTool[] } | null {
  if (!rec.response) return null;
  let req = chatMessages(rec.requestServed);
  if (!req) {
    const codec = CODECS[rec.dialect];
    if (!codec || rec.requestReceived == null) return null;
    try {
      const body = rec.requestReceived as { model?: unknown };
      const { canonical } = codec.parseRequest(rec.requestReceived, rec.dialect === 'gemini' && typeof body.model !== 'string' ? { urlModel: 'unknown' } : {});
      req = { messages: canonical.messages, tools: canonical.tools?.length ? canonical.tools : undefined };
    } catch {
      return null;
    }
  }
  return { messages: [...req.messages, assistantMessage(rec.response.message)], tools: req.tools };
}

function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v as object).sort().map((k) => `${JSON.stringify(k)}:${stableJson((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

function argumentsKey(args: string): string {
  try {
    return stableJson(JSON.parse(args));
  } catch {
    return args;
  }
}

/**
 * A message as SFT folding compares it: role, text content (trimmed), tool calls (id, name, arguments
 * as parsed JSON), tool_call_id, name. Reasoning and dialect extras are left out: agents often drop
 * reasoning when they echo an assistant turn back.
 */
export function messageKey(m: ChatMessage): string {
  const text = typeof m.content === 'string' ? m.content
    : Array.isArray(m.content) ? m.content.map((p) => (p.type === 'text' && typeof p.text === 'string' ? p.text : stableJson(p))).join('')
    : '';
  return stableJson({
    r: m.role, c: text.trim(), i: m.tool_call_id ?? null, n: m.name ?? null,
    t: (m.tool_calls ?? []).map((c) => [c.id, c.function?.name, argumentsKey(c.function?.arguments ?? '')]),
  });
}

/**
 * SFT rows of one session, one per distinct conversation: a conversation that is a prefix of another
 * one with the same reward (chat mode re-renders history, so a chain can break while the conversation
 * simply went on) is folded into the longest conversation containing it. Returns the kept items in
 * their input order, each with the ids it absorbed.
 */
export function foldConversations<T extends { id: string; reward: number | null; messages: ChatMessage[] }>(items: readonly T[]): Array<{ item: T; folded: string[] }> {
  const keyed = items.map((item, order) => ({ item, order, keys: item.messages.map(messageKey), folded: [] as string[] }));
  const byLength = [...keyed].sort((a, b) => b.keys.length - a.keys.length || a.order - b.order);
  const kept: typeof keyed = [];
  for (const x of byLength) {
    const host = kept.find((k) => k.item.reward === x.item.reward && x.keys.every((key, i) => k.keys[i] === key));
    if (host) host.folded.push(x.item.id, ...x.folded);
    else kept.push(x);
  }
  return kept.sort((a, b) => a.order - b.order).map((k) => ({ item: k.item, folded: k.folded }));
}
