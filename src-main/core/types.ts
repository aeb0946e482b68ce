// Canonical model (DESIGN §3). The canonical request is OpenAI chat completions; every dialect codec
// maps to and from these types. Pure data: no IO, no classes.

export type Role = 'system' | 'developer' | 'user' | 'assistant' | 'tool';

export interface TextPart { type: 'text'; text: string; [extra: string]: unknown }
export interface ImagePart { type: 'image_url'; image_url: { url: string; detail?: string }; [extra: string]: unknown }
export type ContentPart = TextPart | ImagePart | { type: string; [extra: string]: unknown };

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: Role;
  content: string | ContentPart[] | null;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  /** Reasoning text of an assistant turn (vLLM `reasoning`); sent back to the engine as-is. */
  reasoning?: string | null;
  /** Opaque dialect data that must survive a round trip (thinking signatures, encrypted reasoning, ids). */
  dialect_extras?: Record<string, unknown>;
}

export interface FunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

export type ToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

export interface CanonicalRequest {
  model: string;
  messages: ChatMessage[];
  tools?: FunctionTool[];
  tool_choice?: ToolChoice;
  max_tokens?: number;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  /** vLLM and SGLang sampling extras, under the names both engines use. */
  min_p?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
  repetition_penalty?: number;
  stop?: string[];
  seed?: number;
  n?: number;
  stream: boolean;
  /** Structured output (OpenAI `response_format`), e.g. Gemini's responseJsonSchema mapped here. */
  response_format?: { type: 'json_object' } | { type: 'json_schema'; json_schema: { name: string; schema: Record<string, unknown> } };
  /** enable_thinking and friends, forwarded to the chat template. */
  chat_template_kwargs?: Record<string, unknown>;
  /** The agent asked for the sampled tokens' logprobs in the answer (OpenAI chat `logprobs: true`). */
  logprobs?: boolean;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'abort' | 'error';

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Of completion_tokens, those of the think block (through its closing tag). */
  reasoning_tokens?: number;
}

export interface AssistantMessage {
  role: 'assistant';
  content: string | null;
  reasoning: string | null;
  tool_calls: ToolCall[];
}

export interface CanonicalResponse {
  id: string;
  model: string;
  created: number;
  message: AssistantMessage;
  finish_reason: FinishReason;
  usage: Usage;
  /** The agent's stop string that ended generation (finish_reason 'stop'); null or absent otherwise. */
  stop_sequence?: string | null;
  /**
   * The sampled tokens' recorded logprobs, in the answer only when the agent asked (never stored: the
   * completion record holds them as outputIds / outputLogprobs).
   */
  logprobs?: Array<{ token: string; logprob: number }>;
}

/** What an engine adapter yields while generating; dialect encoders turn these into SSE events. */
export type CanonicalDelta =
  | { kind: 'content'; text: string }
  | { kind: 'reasoning'; text: string }
  /** A tool call's first delta carries id and name; later ones only argument text. */
  | { kind: 'tool_call'; index: number; id?: string; name?: string; arguments: string };

/** Token-level facts an engine reported for one completion. Ids are never re-tokenized text. */
export interface TokenCapture {
  promptIds: Int32Array;
  outputIds: Int32Array;
  outputLogprobs: Float32Array;
}

export type Dialect = 'openai-chat' | 'openai-responses' | 'anthropic' | 'gemini';
/**
 * `incomplete` (custody, DESIGN §9): the call happened but its capture cannot be trusted — lost in a crash
 * between the engine call and its commit, or malformed (see IncompleteReason). Traces depending on it are masked.
 */
export type CompletionStatus = 'ok' | 'error' | 'aborted' | 'incomplete';

export type IncompleteReason =
  /** The process ended between the engine call (its intent was recorded) and the completion's commit. */
  | 'lost-in-crash'
  /** The engine reported no prompt ids, or no output ids for an answer with content. */
  | 'missing-ids'
  /** The engine reported a different number of logprobs than output ids. */
  | 'logprob-count'
  /** The engine failed after the agent had already received part of the answer. */
  | 'engine-error-mid-stream';

export const INCOMPLETE_REASONS: readonly IncompleteReason[] = ['lost-in-crash', 'missing-ids', 'logprob-count', 'engine-error-mid-stream'];

export interface Timings { queueMs: number; ttftMs: number | null; totalMs: number }

export interface CompletionRecord extends TokenCapture {
  id: string;
  sessionId: string;
  seq: number;
  dialect: Dialect;
  engineId: string;
  replica: string;
  policyVersion: number;
  /** Request as received from the agent, secrets removed. */
  requestReceived: unknown;
  /** Request as sent to the engine. */
  requestServed: unknown;
  /** Canonical response as returned to the agent (null when none was produced). */
  response: CanonicalResponse | null;
  finishReason: FinishReason | null;
  usage: Usage | null;
  timings: Timings;
  status: CompletionStatus;
  error: string | null;
  /** id of the earlier record this one retries (SDK retry with identical body). */
  retryOf: string | null;
  createdAt: number;
  /** status 'incomplete': why the capture cannot be trusted (absent otherwise). */
  incompleteReason?: IncompleteReason;
}

export type SessionStatus = 'active' | 'finished' | 'interrupted' | 'failed';

export interface SessionRecord {
  id: string;
  engineId: string | null;
  harness: string | null;
  taskId: string | null;
  batchId: string | null;
  metadata: Record<string, unknown>;
  status: SessionStatus;
  reward: number | null;
  createdAt: number;
  finishedAt: number | null;
}

/**
 * A session as created: with its key (128-bit random, hex), which the agent uses as its API key. The key
 * is handed out once, in the creation response; the store keeps only its sha256, and it is never logged.
 */
export interface NewSession extends SessionRecord {
  key: string;
}
