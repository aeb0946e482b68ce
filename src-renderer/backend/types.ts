// Shapes of the control API as the renderer sees them (DESIGN §11). JSON over HTTP: token arrays are
// plain number arrays here. Kept local to the renderer: it talks to the API, never imports src-main.
// Fields the server may not send yet are optional, and every view copes with their absence.

export type SessionStatus = 'active' | 'finished' | 'interrupted' | 'failed' | (string & {});
export type CompletionStatus = 'ok' | 'error' | 'aborted' | (string & {});

export interface SessionSummary {
  id: string;
  engineId: string | null;
  harness: string | null;
  taskId: string | null;
  batchId: string | null;
  status: SessionStatus;
  reward: number | null;
  completionCount: number;
  promptTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  createdAt: number;
  finishedAt: number | null;
  metadata?: Record<string, unknown>;
}

export interface Usage { prompt_tokens: number; completion_tokens: number; total_tokens: number }
export interface Timings { queueMs: number; ttftMs: number | null; totalMs: number }

export interface Completion {
  id: string;
  sessionId?: string;
  seq: number;
  dialect: string;
  engineId: string;
  replica: string;
  policyVersion: number;
  status: CompletionStatus;
  error: string | null;
  finishReason: string | null;
  usage: Usage | null;
  timings: Timings;
  requestReceived: unknown;
  requestServed: unknown;
  response: unknown;
  promptIds: number[];
  outputIds: number[];
  outputLogprobs: number[];
  promptPieces?: string[];
  outputPieces?: string[];
  retryOf: string | null;
  createdAt: number;
}

// ---- engines (GET /api/engines) ----

export interface Replica {
  url: string;
  healthy: boolean;
  inFlight: number;
  engineLoad?: number | null;
  lastCheckedAt?: number | null;
  requestsPerSec?: number;
  tokensPerSec?: number;
  p50LatencyMs?: number | null;
  p99LatencyMs?: number | null;
  p50TtftMs?: number | null;
  p99TtftMs?: number | null;
  errors?: number;
  completed?: number;
}

export interface Engine {
  id: string;
  kind: string;
  model: string;
  mode: string;
  tokenizer?: string;
  /** Token mode: the model family (null when detected from the tokenizer). */
  family?: string | null;
  developerRole?: 'system' | 'developer';
  dataParallelSize?: number;
  router?: EngineRouter;
  simulated: boolean;
  paused: boolean;
  policyVersion?: number;
  failovers?: number;
  /** Calls for this engine held by a pause right now. */
  queued?: number;
  replicas: Replica[];
}

export type PauseMode = 'queue' | 'reject' | 'abort';

/** A Rollgate node (GET /api/nodes): a single process is one node, `local`. */
export interface ClusterNodeInfo {
  id: string;
  advertiseUrl: string;
  status: 'live' | 'dead' | 'stopped';
  alive: boolean;
  heartbeatAgeMs: number;
  engines: Array<{ id: string; kind: string; model: string; replicas: number; healthy: number }>;
  load: { activeSessions: number; runningTasks: number; inFlightCalls: number };
  drained: boolean;
}

export interface NodesResponse { self: string; nodes: ClusterNodeInfo[] }

export interface EnginesResponse {
  engines: Engine[];
  policyVersion?: number;
  pause?: { mode: PauseMode | null; queued: number; since: number | null };
}

/** Body of the topology routes (POST /api/engines, PUT /api/engines/:id). */
export interface EngineSpec {
  id: string;
  /** One of GET /api/engine-kinds. */
  kind: string;
  replicas: string[];
  model: string;
  mode: 'chat' | 'token';
  tokenizer?: string;
  /** Token mode's model family (GET /api/engine-kinds); absent: detected from the tokenizer. */
  family?: string;
  developerRole?: 'system' | 'developer';
  dataParallelSize?: number;
  router?: EngineRouter;
}

/** The router in front of an engine's replicas (vllm-router | sglang-router); header: its session header (always set in GET /api/engines). */
export interface EngineRouter { kind: string; header?: string }

/** GET /api/engine-kinds: what the topology form can offer. */
export interface EngineKinds {
  kinds: Array<{ kind: string; label: string; modes: Array<'chat' | 'token'>; defaultMode: 'chat' | 'token' }>;
  families: Array<{ name: string; description: string; defaultTokenizer: string }>;
  tokenizers: Array<{ spec: string; note: string }>;
}

// ---- rollouts ----

export interface Harness {
  name: string;
  description: string;
  kind: 'builtin' | 'cli' | 'command' | (string & {});
  dialect: string;
  agent: { package: string; version: string; bin: string } | null;
  defaultTimeoutMs: number;
}

export interface DatasetInfo { name: string; tasks: number; error?: string }

export interface HarnessSnippet {
  sessionId: string;
  engine: string | null;
  model: string;
  harness: string;
  env: Record<string, string>;
  files: Array<{ path: string; content: string }>;
  install: string;
  command: string;
  shell: string;
}

export type BatchStatus = 'queued' | 'running' | 'completed' | 'failed' | 'cancelled' | 'interrupted' | (string & {});

export interface BatchCounts {
  total: number;
  queued: number;
  running: number;
  finished: number;
  failed: number;
  interrupted: number;
  done: number;
}

export interface BatchSpec {
  dataset?: string;
  harness?: string;
  engine?: string;
  model?: string;
  n?: number;
  concurrency?: number;
  timeoutMs?: number;
  simulated?: boolean;
  name?: string;
  [k: string]: unknown;
}

export interface SampleResult {
  sampleIndex: number;
  sessionId: string;
  status: string;
  reward: number | null;
  outcome: string | null;
  exitCode: number | null;
  durationMs: number | null;
  completionCount: number;
  error: string | null;
}

export interface TaskResult {
  usage?: UsageTotals;
  taskId: string;
  groupId: string;
  scored: number;
  meanReward: number | null;
  rewards: Array<number | null>;
  passAtK: Record<string, number>;
  samples: SampleResult[];
}

export interface BatchSummary {
  id: string;
  status: BatchStatus;
  error: string | null;
  spec: BatchSpec;
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  counts: BatchCounts;
  meanReward: number | null;
  passAtK: Record<string, number>;
  /** Recorded engine calls and tokens, summed on the server. */
  usage?: UsageTotals;
}

export interface BatchDetail extends BatchSummary {
  tasks: TaskResult[];
}

export interface BatchSubmit {
  dataset?: string;
  tasks?: unknown[];
  harness: string;
  engine?: string;
  n: number;
  concurrency: number;
  name?: string;
  command?: string;
  /** Where agents run (auto = bwrap on Linux when installed, else local: unsandboxed). */
  runtime?: RuntimeChoice;
}

export type RuntimeChoice = 'auto' | 'bwrap' | 'docker' | 'local';

/** GET /api/runtimes */
export interface RuntimesInfo {
  default: RuntimeChoice;
  resolved: 'bwrap' | 'docker' | 'local' | null;
  warning?: string;
  error?: string;
  runtimes: Array<{ name: 'bwrap' | 'docker' | 'local'; available: boolean; reason?: string }>;
}

// ---- traces ----

export interface TraceBreak {
  reason: string;
  atCompletionId: string;
  tokenIndex?: number;
  continuedIn?: string;
}

export interface Trace {
  id: string;
  sessionId: string;
  builder: string;
  completionIds: string[];
  promptIds: number[];
  responseIds: number[];
  lossMask: number[];
  responseLogprobs: number[];
  reward: number | null;
  policyVersions: number[];
  breaks: TraceBreak[];
  proof?: { ok: boolean; turns: Array<{ completionId: string; promptLength: number; outputLength: number; rerendered?: number; outputStart?: number }> };
  /** Chat-mode re-renders: sampled ids the engine later read as `served` (same text but whitespace). */
  rerendered?: Array<{ at: number; sampled: number[]; served: number[]; completionId: string; servedIn: string }>;
  origin?: { kind: string; fromTraceId?: string; afterCompletionId?: string; tokenIndex?: number; samePromptAs?: string; reason?: string };
  skipped?: Array<{ completionId: string; reason: string; replacedBy?: string }>;
  taskId?: string | null;
  batchId?: string | null;
  groupId?: string | null;
  sampleIndex?: number | null;
  engine?: string | null;
  rewardSource?: string;
  /** Custody: masked out of training, and why. */
  masked?: boolean;
  maskReason?: string | null;
}

export type BuilderName = 'prefix-merge' | 'per-request';

export interface TracesResponse {
  sessionId: string;
  builder: BuilderName;
  reward?: number | null;
  traces: Trace[];
  unplaced?: Array<{ completionId: string; reason: string }>;
}

export interface HistogramBin { lo: number; hi: number; count: number }

export interface RescoreSummary {
  n: number;
  meanDelta: number;
  meanAbsDelta: number;
  maxAbsDelta: number;
  klEstimate: number;
  klK3?: number;
  shareAbove0_5: number;
}

export interface RescoreTrace {
  traceId: string;
  sessionId: string;
  sourceEngine: string | null;
  completionIds?: string[];
  replica?: string;
  positions?: number[];
  deltas?: number[];
  dropped?: number;
  summary?: RescoreSummary;
  error?: string;
}

export interface RescoreResponse {
  /** The kept result (GET /api/rescores/:id). */
  id?: string;
  engine: string;
  engineKind?: string;
  builder: string;
  sessions?: number;
  traces: RescoreTrace[];
  overall: RescoreSummary & { histogram: HistogramBin[] };
  errors: Array<{ traceId: string; message: string }>;
}

export interface SessionRun {
  sessionId: string;
  batchId: string | null;
  status: string;
  outcome: string | null;
  exitCode: number | null;
  durationMs: number | null;
  stdout?: string;
  stderr?: string;
  finalAnswer?: string | null;
  evaluator?: { type: string; reward: number | null; output?: string; error?: string; rewards?: Record<string, number>; diff?: string } | null;
  error: string | null;
}

export interface CreatedSession {
  id: string;
  key: string;
  engine?: string | null;
  urls: { openai: string; anthropic: string; gemini: string };
}

/** `total`: how many sessions match, of which `sessions` holds the loaded ones. */
export interface SessionsResponse { sessions: SessionSummary[]; total: number }
export interface CompletionsResponse { completions: Completion[] }
export interface BatchesResponse { batches: BatchSummary[] }

// ---- workbench insights (src-main/api/insights.ts, rescores.ts) ----

export interface UsageTotals { completions: number; promptTokens: number; outputTokens: number }

export interface PolicyPoint { version: number; sessions: number; scored: number; mean: number | null; stderr: number | null }

export interface BatchHealth {
  batchId: string;
  sessions: number;
  traces: number;
  breaks: number;
  sessionsWithBreaks: number;
  breakRate: number | null;
  breakReasons: Record<string, number>;
  masked: number;
  maskedFraction: number | null;
  maskedReasons: Record<string, number>;
  byTask: Record<string, { traces: number; breaks: number; masked: number }>;
  bySession: Record<string, { traces: number; breaks: number; masked: number }>;
  byPolicy: PolicyPoint[];
  reward?: { mean: number | null; stderr: number | null; scored: number };
}

export interface SessionHealth {
  sessionId: string;
  traces: number;
  breaks: number;
  breakReasons: Record<string, number>;
  masked: number;
  maskedReasons: Record<string, number>;
  policyVersion: number | null;
}

export interface Verdict {
  outcome: string | null;
  exitCode: number | null;
  evaluator: string | null;
  reward: number | null;
  output: string | null;
  error: string | null;
  finalAnswer: string | null;
}

export interface TranscriptMessage {
  role: string;
  content: string | Array<{ type: string; text?: string; [k: string]: unknown }> | null;
  name?: string;
  reasoning?: string | null;
  tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

export interface Transcript {
  conversations: Array<{ traceId: string; completionId: string; messages: TranscriptMessage[]; tools?: Array<{ function: { name: string; description?: string } }> }>;
}

export interface StoredRescore {
  id: string;
  createdAt: number;
  engine: string;
  engineKind: string | null;
  sourceEngine: string | null;
  builder: string;
  batchId: string | null;
  sessionId: string | null;
  sessions: number;
  traces: number;
  overall: RescoreSummary & { histogram: HistogramBin[] };
  errors: Array<{ traceId: string; message: string }>;
}

export interface StoredRescoreTrace {
  traceId: string;
  sessionId: string;
  sourceEngine: string | null;
  replica: string | null;
  completionIds: string[];
  tokens: number;
  dropped: number;
  summary: RescoreSummary | null;
  error: string | null;
}

export interface RescoreTokens extends StoredRescoreTrace {
  positions: number[];
  tokenIds: number[];
  pieces: string[];
  sampled: number[];
  rescored: number[];
  deltas: number[];
}

// ---- capture health (GET /api/capture-health, custody: src-main/api/capture-health.ts) ----

export interface CaptureHealth {
  sessions: number;
  incompleteSessions: number;
  completions: number;
  incompleteCompletions: number;
  traces: number;
  maskedTraces: number;
  maskedFraction: number | null;
  maskReasons: Record<string, number>;
  chainBreaks: { total: number; perTrace: number | null; reasons: Record<string, number> };
  promptReuse: { turns: number; reused: number; rate: number | null };
  retries: number;
  meanCompletionsPerTrace: number | null;
}

export interface CaptureHealthReport {
  scope: { batchId: string | null; engineId: string | null; builder: string };
  overall: CaptureHealth;
  byEngine: Record<string, CaptureHealth>;
}
