// Contract between the gateway and engine adapters (DESIGN §4).
import type { CanonicalDelta, CanonicalRequest, FinishReason, TokenCapture, Usage } from '../core/types.js';
import type { EngineTimeouts } from './http.js';
import type { RouterConfig } from './router.js';

export type { EngineKind } from './drivers/index.js';
import type { EngineKind } from './drivers/index.js';
export type EngineMode = 'chat' | 'token';

export interface EngineConfig {
  id: string;
  kind: EngineKind;
  replicas: string[];
  model: string;
  mode: EngineMode;
  /** 'builtin:…' or a local Hugging Face model folder (token mode; default: the family's). */
  tokenizer?: string;
  /** Token mode: the model family (core/families); default detected from the tokenizer, else qwen3. */
  family?: string;
  simulated?: boolean;
  /** vLLM/SGLang data-parallel ranks behind one URL; sessions get a sticky rank. */
  dataParallelSize?: number;
  /**
   * How agents' `developer` messages reach the chat template, in place (never hoisted or merged):
   * 'system' (default; Qwen3 and most open templates know no developer role and would drop them) or
   * 'developer' (the template handles that role). Chat mode shows the choice in the request as served.
   */
  developerRole?: DeveloperRole;
  /** The replicas URL is a router's (vLLM production-stack, SGLang model gateway): sessions pin through its header. */
  router?: RouterConfig;
}

export type DeveloperRole = 'system' | 'developer';
export const DEFAULT_DEVELOPER_ROLE: DeveloperRole = 'system';

export interface EngineCallInput {
  request: CanonicalRequest;
  replica: string;
  signal: AbortSignal;
  /** vLLM `X-data-parallel-rank` / SGLang `data_parallel_rank`. */
  dataParallelRank?: number;
  /** Headers for this call beyond the body's (a router's session key); never anything the agent sent. */
  headers?: Readonly<Record<string, string>>;
  /** How long the engine may take to answer and to go silent mid-stream (set by the pool). */
  timeouts?: EngineTimeouts;
  /** Previous completions of the same session, newest last, for token-mode prefix reuse. */
  sessionHistory?: ReadonlyArray<{ request: CanonicalRequest; capture: TokenCapture }>;
}

export interface EngineResult extends TokenCapture {
  finishReason: FinishReason;
  usage: Usage;
  /** The exact body sent to the engine. */
  requestServed: unknown;
  engineResponseId: string;
  /** The request's stop string the engine matched (vLLM `stop_reason`, SGLang `matched`), else null. */
  stopSequence: string | null;
  reasoning: string | null;
  content: string | null;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
}

/** A running engine call: iterate deltas as the engine produces them; the generator's return value is the result. */
export type EngineRun = AsyncGenerator<CanonicalDelta, EngineResult, void>;

export interface EngineAdapter {
  readonly config: EngineConfig;
  generate(input: EngineCallInput): EngineRun;
  /** Probe the replica's own health route. */
  health(replica: string, signal?: AbortSignal): Promise<boolean>;
}

/** An engine answered with an error (HTTP status and message as the engine gave them). */
export class EngineError extends Error {
  constructor(message: string, readonly status: number, readonly midStream = false) {
    super(message);
    this.name = 'EngineError';
  }
}

/**
 * The engine answered, but what it reported cannot be captured faithfully (custody: recorded `incomplete`).
 * `field` names the wire field that was missing, when one was.
 */
export class CaptureError extends EngineError {
  constructor(message: string, readonly reason: 'missing-ids' | 'logprob-count', readonly field?: string) {
    super(message, 502, true);
    this.name = 'CaptureError';
  }
}
