// Live updates: one EventSource on /api/events. The server sends `session` {id, status},
// `completion` {sessionId, id}, `batch` {id, status, counts…, phase?} and `engines` {paused?,
// policyVersion?}; listeners patch or refetch what they show. EventSource reconnects by itself.

export interface BatchEvent {
  type: 'batch';
  id: string;
  status: string;
  total?: number;
  done?: number;
  running?: number;
  queued?: number;
  finished?: number;
  failed?: number;
  interrupted?: number;
  meanReward?: number | null;
  phase?: string;
  message?: string;
}

export type ServerEvent =
  | { type: 'session'; id: string; status?: string }
  | { type: 'completion'; sessionId: string; id: string }
  | BatchEvent
  | { type: 'engines'; paused?: boolean; policyVersion?: number }
  | RescoreProgress;

/** Progress of a re-scoring this window started (POST /api/traces/rescore with a progressId). */
export interface RescoreProgress { type: 'rescore'; id: string; sessions: number; sessionsRead: number; tracesDone: number; tokens: number; done: boolean }

export type ConnectionState = 'connecting' | 'open' | 'closed';

export interface EventsHandle { close(): void }

function parse(data: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(data) as unknown;
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Waits before opening a new EventSource after the browser gave up on one (server down or restarting). */
const RETRY_MS = [1000, 2000, 5000, 10_000];

export function connectEvents(
  onEvent: (e: ServerEvent) => void,
  onState: (s: ConnectionState) => void,
  url = '/api/events',
): EventsHandle {
  if (typeof EventSource === 'undefined') {
    onState('closed');
    return { close() {} };
  }
  let source: EventSource | null = null;
  let closed = false;
  let attempt = 0;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const open = () => {
    if (closed) return;
    const es = new EventSource(url);
    source = es;
    onState('connecting');
    es.onopen = () => {
      attempt = 0;
      onState('open');
    };
    es.onerror = () => {
      if (es.readyState !== EventSource.CLOSED) return onState('connecting');
      // EventSource stops retrying after an HTTP error (e.g. a proxy's 502 while the server restarts):
      // open a new one, with a growing wait, so views recover by themselves when the server is back.
      onState('closed');
      es.close();
      timer = setTimeout(open, RETRY_MS[Math.min(attempt++, RETRY_MS.length - 1)]);
    };
    wire(es, onEvent);
  };
  open();
  return {
    close: () => {
      closed = true;
      if (timer) clearTimeout(timer);
      source?.close();
    },
  };
}

function wire(source: EventSource, onEvent: (e: ServerEvent) => void): void {
  const on = (name: string, fn: (d: Record<string, unknown>) => void) =>
    source.addEventListener(name, (m) => {
      const d = parse((m as MessageEvent<string>).data);
      if (d) fn(d);
    });
  on('session', (d) => {
    if (typeof d.id === 'string') onEvent({ type: 'session', id: d.id, status: typeof d.status === 'string' ? d.status : undefined });
  });
  on('completion', (d) => {
    if (typeof d.sessionId === 'string') onEvent({ type: 'completion', sessionId: d.sessionId, id: typeof d.id === 'string' ? d.id : '' });
  });
  on('batch', (d) => {
    if (typeof d.id === 'string') onEvent({ ...(d as unknown as BatchEvent), type: 'batch', status: String(d.status ?? '') });
  });
  on('rescore', (d) => {
    if (typeof d.id !== 'string') return;
    const n = (k: string) => (typeof d[k] === 'number' ? (d[k] as number) : 0);
    onEvent({ type: 'rescore', id: d.id, sessions: n('sessions'), sessionsRead: n('sessionsRead'), tracesDone: n('tracesDone'), tokens: n('tokens'), done: d.done === true });
  });
  on('engines', (d) => {
    onEvent({
      type: 'engines',
      paused: typeof d.paused === 'boolean' ? d.paused : undefined,
      policyVersion: typeof d.policyVersion === 'number' ? d.policyVersion : undefined,
    });
  });
}
