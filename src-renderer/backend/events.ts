// Live updates: one EventSource on /api/events. The server sends `session` {id} and `completion`
// {sessionId, id}; listeners refetch what they show. Reconnects are handled by EventSource itself.

export type ServerEvent =
  | { type: 'session'; id: string }
  | { type: 'completion'; sessionId: string; id: string };

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

export function connectEvents(
  onEvent: (e: ServerEvent) => void,
  onState: (s: ConnectionState) => void,
  url = '/api/events',
): EventsHandle {
  if (typeof EventSource === 'undefined') {
    onState('closed');
    return { close() {} };
  }
  const source = new EventSource(url);
  onState('connecting');
  source.onopen = () => onState('open');
  source.onerror = () => onState(source.readyState === EventSource.CLOSED ? 'closed' : 'connecting');
  source.addEventListener('session', (m) => {
    const d = parse((m as MessageEvent<string>).data);
    if (d && typeof d.id === 'string') onEvent({ type: 'session', id: d.id });
  });
  source.addEventListener('completion', (m) => {
    const d = parse((m as MessageEvent<string>).data);
    if (d && typeof d.sessionId === 'string') {
      onEvent({ type: 'completion', sessionId: d.sessionId, id: typeof d.id === 'string' ? d.id : '' });
    }
  });
  return { close: () => source.close() };
}
