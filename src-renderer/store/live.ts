// Wires /api/events to the stores: refetch what is on screen, debounced so a batch's burst of
// completions causes one refetch, not hundreds.
import { create } from 'zustand';
import { connectEvents, type ConnectionState } from '../backend/events.js';
import { useSessionDetail } from './sessionDetail.js';
import { useSessions } from './sessions.js';

export const useConnection = create<{ state: ConnectionState }>(() => ({ state: 'connecting' }));

function debounce(fn: () => void, ms: number): () => void {
  let t: ReturnType<typeof setTimeout> | null = null;
  return () => {
    if (t) return;
    t = setTimeout(() => {
      t = null;
      fn();
    }, ms);
  };
}

export function startLiveUpdates(): () => void {
  const refreshSessions = debounce(() => void useSessions.getState().fetch({ quiet: true }), 300);
  const refreshDetail = debounce(() => void useSessionDetail.getState().refresh(), 400);
  let wasOpen = false;
  const handle = connectEvents(
    (e) => {
      refreshSessions();
      const openId = useSessionDetail.getState().id;
      if (openId && (e.type === 'session' ? e.id === openId : e.sessionId === openId)) refreshDetail();
    },
    (state) => {
      useConnection.setState({ state });
      // After a reconnect, catch up on whatever was missed while disconnected.
      if (state === 'open' && wasOpen) {
        refreshSessions();
        refreshDetail();
      }
      if (state === 'open') wasOpen = true;
    },
  );
  return () => handle.close();
}
