// What one engine kind knows (DESIGN §4 "Engine drivers"). Shared code asks the driver; it never
// switches on `kind`. Adding a kind is one folder with one of these, registered in drivers/index.ts.
import type { Usage } from '../../core/types.js';
import type { PauseMode } from '../pause-gate.js';
import type { CaptureFields } from '../token-accumulator.js';
import type { EngineAdapter, EngineConfig, EngineMode } from '../types.js';

export interface EngineRoute { path: string; body?: unknown }

/** One token-mode generation request, engine-neutral; the wire turns it into the engine's body. */
export interface TokenRequest {
  model: string;
  promptIds: Int32Array;
  maxTokens: number;
  /** The agent's sampler settings under the names both engines use (samplerFields). */
  sampler: Record<string, unknown>;
  seed?: number;
  stopTokenIds: number[];
  dataParallelRank?: number;
}

/** What one stream event said, engine-neutral. */
export interface TokenChunk {
  /** Output ids in this event: new ones, or (cumulative) all so far. */
  ids?: readonly number[];
  logprobs?: readonly number[];
  cumulative?: boolean;
  finish?: 'stop' | 'length' | 'abort';
  /** The engine's word for what stopped it (a stop string, a token id, or null). */
  matched?: unknown;
  usage?: Usage;
  responseId?: string;
}

/** Token mode's wire for one engine kind: where to send, what body, how to read each stream event. */
export interface TokenWire {
  path: string;
  /** Where its answers carry the sampled ids and logprobs (named when one is missing). */
  fields: CaptureFields;
  body(req: TokenRequest): Record<string, unknown>;
  /** A fresh reader per call (some engines need state across events). */
  reader(): (event: unknown) => TokenChunk;
}

/** Prompt-logprob scoring of a token sequence (cross-engine re-scoring). */
export interface ScoreWire {
  path: string;
  /** Bodies to try in order: the next one only after a 4xx (an engine refusing a variant). */
  bodies(model: string, ids: ArrayLike<number>): Array<Record<string, unknown>>;
  /** logprob of ids[i] given ids[0..i); null at 0. */
  parse(json: unknown, ids: ArrayLike<number>, engineId: string): Array<number | null>;
}

export interface EngineDriver {
  readonly kind: string;
  readonly label: string;
  readonly modes: readonly EngineMode[];
  readonly defaultMode: EngineMode;
  /** Why a mode this kind lacks is missing (shown when a topology asks for it). */
  readonly missingModes?: Partial<Record<EngineMode, string>>;
  /** Chat mode's adapter (token mode shares one adapter over `token`). */
  chatAdapter?(config: EngineConfig): EngineAdapter;
  readonly token: TokenWire;
  readonly scoring: ScoreWire;
  /** How long its health route may take (SGLang's runs a one-token generation). */
  readonly healthTimeoutMs: number;
  pauseRoute(mode: PauseMode): EngineRoute;
  resumeRoute(): EngineRoute;
  /** Prometheus gauges of running and waiting requests on /metrics. */
  readonly loadMetrics: { running: string; waiting: string };
  /** Where the replica tells its context length, and how to read it. */
  readonly contextLength: { path: string; read(json: unknown): number | null };
  /** Headers that pin a call to a data-parallel rank behind one URL. */
  rankHeaders(rank: number): Record<string, string>;
}
