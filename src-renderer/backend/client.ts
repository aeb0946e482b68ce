// Minimal JSON client for the control API. Relative URLs only: the UI is served from the same origin.
import type { CompletionsResponse, EnginesResponse, SessionSummary, SessionsResponse } from './types.js';

export class ApiError extends Error {
  constructor(message: string, readonly status: number) {
    super(message);
    this.name = 'ApiError';
  }
}

async function errorMessage(res: Response): Promise<string> {
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

export async function getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, { headers: { accept: 'application/json' }, signal });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(`Cannot reach the Rollgate server (${(err as Error).message})`, 0);
  }
  if (!res.ok) throw new ApiError(`${res.status} ${await errorMessage(res)}`, res.status);
  return (await res.json()) as T;
}

const enc = encodeURIComponent;

export const api = {
  sessions: (signal?: AbortSignal) => getJson<SessionsResponse>('/api/sessions', signal),
  session: async (id: string, signal?: AbortSignal): Promise<SessionSummary> => {
    const body = await getJson<SessionSummary | { session: SessionSummary }>(`/api/sessions/${enc(id)}`, signal);
    return 'session' in body && body.session && typeof body.session === 'object' ? body.session : (body as SessionSummary);
  },
  completions: (id: string, signal?: AbortSignal) =>
    getJson<CompletionsResponse>(`/api/sessions/${enc(id)}/completions?pieces=1`, signal),
  engines: (signal?: AbortSignal) => getJson<EnginesResponse>('/api/engines', signal),
};
