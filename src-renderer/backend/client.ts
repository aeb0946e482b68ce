// JSON client for the control API. Relative URLs only: the UI is served from the same origin.
import type {
  BatchDetail,
  BatchHealth,
  CaptureHealthReport,
  RescoreTokens,
  SessionHealth,
  StoredRescore,
  StoredRescoreTrace,
  TaskResult,
  Transcript,
  Verdict,
  BatchesResponse,
  BatchSubmit,
  RuntimesInfo,
  BuilderName,
  CompletionsResponse,
  CreatedSession,
  DatasetInfo,
  EngineKinds,
  EngineSpec,
  EnginesResponse,
  NodesResponse,
  Harness,
  HarnessSnippet,
  PauseMode,
  RescoreResponse,
  SessionRun,
  SessionSummary,
  SessionsResponse,
  TracesResponse,
} from './types.js';

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly path = '',
    readonly method = 'GET',
  ) {
    super(message);
    this.name = 'ApiError';
  }
  /** The route does not exist on this server (yet). */
  get missingRoute(): boolean {
    return (this.status === 404 || this.status === 405) && /no route|route .* not found|method not allowed/i.test(this.message);
  }
}

export async function errorMessage(res: Response): Promise<string> {
  const text = await res.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown };
    const err = body.error;
    if (typeof err === 'string') return err;
    if (err && typeof err === 'object' && typeof (err as { message?: unknown }).message === 'string') {
      return (err as { message: string }).message;
    }
    if (typeof body.message === 'string') return body.message;
  } catch {
    /* not JSON */
  }
  return text.slice(0, 300) || res.statusText;
}

async function request<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(`Cannot reach the Rollgate server (${(err as Error).message})`, 0, path, method);
  }
  if (!res.ok) throw new ApiError(`${res.status} ${await errorMessage(res)}`, res.status, path, method);
  const text = await res.text();
  return (text ? JSON.parse(text) : {}) as T;
}

export const getJson = <T,>(path: string, signal?: AbortSignal) => request<T>('GET', path, undefined, signal);
export const postJson = <T,>(path: string, body: unknown, signal?: AbortSignal) => request<T>('POST', path, body ?? {}, signal);

const enc = encodeURIComponent;

function qs(params: Record<string, string | number | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

export interface ExportQuery {
  batch?: string;
  engine?: string;
  session?: string;
  format: 'train' | 'sft';
  builder: BuilderName;
  minReward?: number;
  maxReward?: number;
  messages?: boolean;
  /** A trainer's row shape (the server maps the base row). */
  preset?: 'verl' | 'slime' | 'verifiers' | 'trl-sft';
  /** Session statuses, comma-separated or 'all' (server default: finished). */
  status?: string;
  hasReward?: boolean;
}

export function exportUrl(q: ExportQuery): string {
  return `/api/export${qs({
    batch: q.batch,
    engine: q.engine,
    session: q.session,
    format: q.format,
    builder: q.builder,
    minReward: q.minReward,
    maxReward: q.maxReward,
    messages: q.messages ? '1' : undefined,
    preset: q.preset,
    status: q.status,
    hasReward: q.hasReward ? '1' : undefined,
  })}`;
}

/** The most sessions GET /api/sessions returns per request. */
export const SESSIONS_PAGE = 1000;

export const api = {
  /** Newest first, page by page (the server sends at most SESSIONS_PAGE at a time), up to `upTo` sessions. */
  sessions: async (signal?: AbortSignal, opts: { batch?: string; upTo?: number } = {}): Promise<SessionsResponse> => {
    const byId = new Map<string, SessionSummary>();
    const upTo = opts.upTo ?? Infinity;
    for (let offset = 0; ; offset += SESSIONS_PAGE) {
      const page = await getJson<Partial<SessionsResponse>>(`/api/sessions${qs({ batch: opts.batch, limit: SESSIONS_PAGE, offset: offset || undefined })}`, signal);
      const rows = page.sessions ?? [];
      const before = byId.size;
      // A session created between two pages shifts the offsets: a row may come twice, never be lost twice.
      for (const s of rows) byId.set(s.id, s);
      const total = page.total ?? byId.size;
      // A page with nothing new (a server that ignores offset) ends the walk too.
      const done = rows.length < SESSIONS_PAGE || byId.size >= Math.min(total, upTo) || byId.size === before;
      if (done) return { sessions: [...byId.values()], total: Math.max(total, byId.size) };
    }
  },
  session: async (id: string, signal?: AbortSignal): Promise<SessionSummary> => {
    const body = await getJson<SessionSummary | { session: SessionSummary }>(`/api/sessions/${enc(id)}`, signal);
    return 'session' in body && body.session && typeof body.session === 'object' ? body.session : (body as SessionSummary);
  },
  createSession: (body: { engine?: string; harness?: string }) => postJson<CreatedSession>('/api/sessions', body),
  completions: (id: string, signal?: AbortSignal) =>
    getJson<CompletionsResponse>(`/api/sessions/${enc(id)}/completions?pieces=1`, signal),
  traces: (id: string, builder: BuilderName, signal?: AbortSignal) =>
    getJson<TracesResponse>(`/api/sessions/${enc(id)}/traces${qs({ builder })}`, signal),
  run: (id: string, signal?: AbortSignal) => getJson<SessionRun>(`/api/sessions/${enc(id)}/run`, signal),

  engines: (signal?: AbortSignal) => getJson<EnginesResponse>('/api/engines', signal),
  nodes: (signal?: AbortSignal) => getJson<NodesResponse>('/api/nodes', signal),
  pause: (mode: PauseMode, timeoutMs: number, forward = false) =>
    postJson<{ paused: boolean }>('/api/engines/pause', forward ? { mode, timeoutMs, forward } : { mode, timeoutMs }),
  resume: (forward = false) => postJson<{ paused: boolean; released?: number }>('/api/engines/resume', forward ? { forward } : {}),
  setPolicyVersion: (version: number) => postJson<{ policyVersion: number }>('/api/policy-version', { version }),
  engineKinds: (signal?: AbortSignal) => getJson<EngineKinds>('/api/engine-kinds', signal),
  addEngine: (spec: EngineSpec) => request<unknown>('POST', '/api/engines', spec),
  updateEngine: (id: string, spec: EngineSpec) => request<unknown>('PUT', `/api/engines/${enc(id)}`, spec),
  removeEngine: (id: string) => request<unknown>('DELETE', `/api/engines/${enc(id)}`),

  harnesses: (signal?: AbortSignal) => getJson<{ harnesses: Harness[] }>('/api/harnesses', signal),
  datasets: (signal?: AbortSignal) => getJson<{ datasets: DatasetInfo[] }>('/api/datasets', signal),
  snippet: (harness: string, session: { id: string; key: string }, signal?: AbortSignal) =>
    postJson<HarnessSnippet>(`/api/harnesses/${enc(harness)}/snippet`, { sessionId: session.id, key: session.key }, signal),

  batches: (signal?: AbortSignal) => getJson<BatchesResponse>('/api/batches?limit=1000', signal),
  batch: (id: string, signal?: AbortSignal) => getJson<BatchDetail>(`/api/batches/${enc(id)}`, signal),
  submitBatch: (body: BatchSubmit) => postJson<{ id: string; runtime: string; warning?: string }>('/api/batches', body),
  runtimes: (signal?: AbortSignal) => getJson<RuntimesInfo>('/api/runtimes', signal),
  cancelBatch: (id: string) => postJson<unknown>(`/api/batches/${enc(id)}/cancel`, {}),

  captureHealth: (q: { batch?: string }, signal?: AbortSignal) => getJson<CaptureHealthReport>(`/api/capture-health${qs(q)}`, signal),
  batchHealth: (id: string, signal?: AbortSignal) => getJson<BatchHealth>(`/api/batches/${enc(id)}/health`, signal),
  /** The tasks the given sessions belong to, as in the batch detail (live patches). */
  batchSamples: (id: string, sessionIds: string[], signal?: AbortSignal) =>
    getJson<{ tasks: TaskResult[] }>(`/api/batches/${enc(id)}/samples${qs({ sessions: sessionIds.join(',') })}`, signal),
  verdicts: (id: string, signal?: AbortSignal) => getJson<{ verdicts: Record<string, Verdict> }>(`/api/batches/${enc(id)}/verdicts`, signal),
  sessionHealth: (ids: string[], signal?: AbortSignal) => getJson<{ sessions: SessionHealth[] }>(`/api/trace-health${qs({ sessions: ids.join(',') })}`, signal),
  transcript: (id: string, signal?: AbortSignal) => getJson<Transcript>(`/api/sessions/${enc(id)}/transcript`, signal),
  rescores: (q: { batch?: string; session?: string }, signal?: AbortSignal) => getJson<{ rescores: StoredRescore[] }>(`/api/rescores${qs(q)}`, signal),
  storedRescore: (id: string, signal?: AbortSignal) => getJson<{ rescore: StoredRescore; traces: StoredRescoreTrace[] }>(`/api/rescores/${enc(id)}`, signal),
  rescoreTokens: (id: string, q: { trace?: string; session?: string }, signal?: AbortSignal) =>
    getJson<{ rescore: StoredRescore; traces: RescoreTokens[] }>(`/api/rescores/${enc(id)}/tokens${qs(q)}`, signal),
  rescoreExportUrl: (id: string) => `/api/rescores/${enc(id)}/export`,

  rescore: (body: { batchId?: string; sessionId?: string; engine: string; builder?: BuilderName; bins?: number; progressId?: string }, signal?: AbortSignal) =>
    postJson<RescoreResponse>('/api/traces/rescore', body, signal),
};
