// Training traces (DESIGN §6). Pure data. Token arrays are plain number arrays everywhere in a Trace
// (they go straight to JSON in the API and the JSONL export).
import type { CompletionRecord, IncompleteReason } from '../types.js';

/** The fields of a completion record the builders read. Any CompletionRecord fits. */
export type TrajectoryInput = Pick<
  CompletionRecord,
  'id' | 'sessionId' | 'seq' | 'promptIds' | 'outputIds' | 'outputLogprobs' | 'status' | 'policyVersion' | 'retryOf' | 'createdAt'
> &
  Partial<Pick<CompletionRecord, 'finishReason' | 'incompleteReason'>>;

export type BuilderName = 'per-request' | 'prefix-merge';

export type BreakReason =
  | 'prompt-diverged' // the next prompt re-rendered the last turn's output / end of turn differently
  | 'rewritten-history' // the next prompt changed an earlier turn (e.g. stripped reasoning, edited a message)
  | 'compaction' // the next prompt is a shortened history (summary, pruned tool results)
  | 'aborted' // the chain's last attempt was aborted, nothing continued it
  | 'error' // the chain's last attempt failed, nothing continued it
  | 'incomplete' // the chain's last attempt was captured incompletely (custody), nothing continued it
  | 'policy-changed' // split on a policy version change (option onPolicyChange: 'split')
  | 'proof-failed'; // a turn's prompt did not equal the concatenation built so far

/**
 * Why this trace stopped where it did. Recorded on the trace that ended; `atCompletionId` is the
 * completion that did not (or could not) continue it, and `tokenIndex` the index into the full token
 * sequence (promptIds ++ responseIds) — equally into that completion's promptIds — where they diverge.
 */
export interface TraceBreak {
  reason: BreakReason;
  atCompletionId: string;
  tokenIndex?: number;
  /** The trace holding `atCompletionId` (where the conversation went on), when it has one. */
  continuedIn?: string;
}

/** How a trace relates to the others of its session. */
export type TraceOrigin =
  /** The first prompt extends no earlier completion. */
  | { kind: 'root'; samePromptAs?: string }
  /**
   * The first prompt extends `afterCompletionId` (of trace `fromTraceId`), but that trace went on with a
   * different completion: a sibling (retry, n>1, parallel sub-agent, a fork of the history).
   * `tokenIndex` = length of the shared prefix (the parent's prompt + output).
   */
  | { kind: 'branch'; fromTraceId: string; afterCompletionId: string; tokenIndex: number; samePromptAs?: string }
  /** Started because the previous trace was split (policy change or failed proof). */
  | { kind: 'split'; fromTraceId: string; afterCompletionId: string; reason: 'policy-changed' | 'proof-failed' };

/**
 * One turn of a trace: its engine prompt is full[0:promptLength]; its sampled ids follow. When earlier
 * outputs of the trace were re-rendered (chat mode, see rerender.ts), its engine prompt is that prefix
 * with the first `rerendered` spans of the trace swapped for their served ids, and its sampled ids start
 * at `outputStart` in full (= promptLength minus the served ids' surplus).
 */
export interface ProofTurn {
  completionId: string;
  promptLength: number;
  outputLength: number;
  rerendered?: number;
  outputStart?: number;
}

/**
 * Sampled ids that later engine prompts of the same trace held in another form with the same text but
 * for whitespace (chat mode: the template re-renders the turn from the message the agent sent back).
 * The trace keeps the sampled ids (mask 1); `served` is what the engine read in their place. The later
 * turns' logprobs were computed with `served` in the context.
 */
export interface RerenderedSpan {
  /** Index into the trace's full sequence (promptIds ++ responseIds) of the first sampled id. */
  at: number;
  sampled: number[];
  served: number[];
  completionId: string;
  /** The completion whose prompt first held `served`. */
  servedIn: string;
}

/**
 * Checked while building: at every turn boundary, the concatenation built so far equals that turn's
 * engine promptIds, and each turn's output sits right after its prompt with mask 1.
 */
export interface TraceProof {
  ok: boolean;
  turns: ProofTurn[];
}

/** A completion that belongs with this trace but contributed no tokens. */
export interface SkippedCompletion {
  completionId: string;
  reason: 'aborted' | 'error' | 'incomplete' | 'retried';
  /** For 'retried': the completion that replaced it. */
  replacedBy?: string;
}

export interface Trace {
  /** Stable: `<sessionId>/<pm|pr>/<first completion id>`. */
  id: string;
  sessionId: string;
  builder: BuilderName;
  completionIds: string[];
  /** The first turn's engine prompt. */
  promptIds: number[];
  /** Everything after the first prompt: sampled ids (mask 1) and interstitial ids (mask 0). */
  responseIds: number[];
  lossMask: number[];
  /** Real logprobs on mask-1 tokens, 0 on mask-0 tokens. */
  responseLogprobs: number[];
  reward: number | null;
  /** One entry per completion, aligned with completionIds (a chain may span versions). */
  policyVersions: number[];
  breaks: TraceBreak[];
  proof: TraceProof;
  origin: TraceOrigin;
  skipped: SkippedCompletion[];
  /** Chat-mode re-renders the trace merged across (empty when every prompt extends the trace exactly). */
  rerendered: RerenderedSpan[];
  /**
   * Custody (DESIGN §9; set by applyCustody, absent straight out of a builder): true when the trace
   * includes or depends on an incomplete call, or no reward could be attributed to it. Masked traces are
   * left out of training exports by default.
   */
  masked?: boolean;
  maskReason?: MaskReason | null;
  /** The incomplete call that masked the trace (null for 'unattributed'). */
  maskedBy?: string | null;
}

export type MaskReason = IncompleteReason | 'unattributed';

export interface BuildOptions {
  /** A number or null is broadcast to every trace; a function gives per-trace rewards. */
  reward?: number | null | ((trace: Trace) => number | null);
  /**
   * prefix-merge: what an ok SDK retry does to the ok record it retries (same prompt).
   * 'separate' (default): both stay, as sibling traces. 'replace': the retried record is dropped and
   * listed in the retry's trace as skipped {reason:'retried'}.
   */
  retries?: 'separate' | 'replace';
  /** prefix-merge: 'record' (default) lets a chain span versions (see policyVersions); 'split' breaks it. */
  onPolicyChange?: 'record' | 'split';
  /**
   * prefix-merge: the engine tokenizer's text of one id. With it, a prompt that re-renders the previous
   * turn's output with only whitespace changed (chat mode) continues the trace, the difference recorded
   * in `rerendered`; without it such a prompt is a 'prompt-diverged' break.
   */
  tokenText?: (id: number) => string;
}

/** A non-ok completion that extends no ok completion (so it has no trace to be listed in). */
export interface UnplacedCompletion {
  completionId: string;
  reason: 'aborted' | 'error' | 'incomplete';
}

export interface BuildResult {
  traces: Trace[];
  unplaced: UnplacedCompletion[];
  /** Work counters (structure, not timing). */
  stats: BuildStats;
}

export interface BuildStats {
  /** Prompt + output tokens of the input. */
  inputTokens: number;
  /** All per-token work (comparisons, index steps and writes, trace writes, proof checks): linear in inputTokens. */
  tokenOps: number;
  /**
   * prefix-merge: the part of tokenOps that reads tokens already seen — exact comparisons of prompts against
   * the earlier tips and against the trace built so far (the proof), plus index vertex steps. Every prompt
   * token is compared about twice; nothing is hashed or mapped per token.
   */
  compareOps?: number;
  /** prefix-merge: tokens of ok tips not shared with any earlier tip (what the index stores). */
  newTokens?: number;
  /** prefix-merge: index writes — tokens stored plus vertices created (≤ newTokens + 3 per completion + 1 per session). */
  indexOps?: number;
}
