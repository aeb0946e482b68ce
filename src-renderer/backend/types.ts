// Shapes of the control API as the renderer sees them (DESIGN §11). JSON over HTTP: token arrays are
// plain number arrays here. Kept local to the renderer: it talks to the API, never imports src-main.

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
  totalTokens?: number;
  createdAt: number;
  finishedAt: number | null;
  metadata?: Record<string, unknown>;
}

export interface Usage { prompt_tokens: number; completion_tokens: number; total_tokens: number }
export interface Timings { queueMs: number; ttftMs: number | null; totalMs: number }

export interface Completion {
  id: string;
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

export interface Replica { url: string; healthy: boolean; inFlight: number }

export interface Engine {
  id: string;
  kind: string;
  model: string;
  mode: string;
  simulated: boolean;
  paused: boolean;
  replicas: Replica[];
}

export interface SessionsResponse { sessions: SessionSummary[] }
export interface CompletionsResponse { completions: Completion[] }
export interface EnginesResponse { engines: Engine[] }
