// Wires /api/events to the stores: batch events patch the batch list at once; everything else causes
// a debounced refetch of what is on screen, so a batch's burst of completions causes one refetch, not
// hundreds. Views that need raw events subscribe with `onServerEvent`.
import { create } from 'zustand';
import { connectEvents, type ConnectionState, type ServerEvent } from '../backend/events.js';
import { useBatches } from './batches.js';
import { useEngines } from './engines.js';
import { useSessionDetail } from './sessionDetail.js';
import { useSessions } from './sessions.js';

export const useConnection = create<{ state: ConnectionState }>(() => ({ state: 'connecting' }));

const listeners = new Set<(e: ServerEvent) => void>();

/** Subscribe to every server event (after the stores have seen it). Returns the unsubscribe. */
export function onServerEvent(fn: (e: ServerEvent) => void): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

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
  // Only while the sessions list is on screen: a 512-sample batch must not refetch it hundreds of times.
  const refreshSessions = debounce(() => {
    if (useSessions.getState().data !== null && useSessions.getState().watching > 0) void useSessions.getState().fetch({ quiet: true });
  }, 400);
  const refreshDetail = debounce(() => void useSessionDetail.getState().refresh(), 400);
  const refreshEngines = debounce(() => void useEngines.getState().fetch(), 250);
  const refreshBatches = debounce(() => {
    if (useBatches.getState().data !== null) void useBatches.getState().fetch({ quiet: true });
  }, 500);
  let wasOpen = false;
  const handle = connectEvents(
    (e) => {
      if (e.type === 'batch') useBatches.getState().applyEvent(e);
      else if (e.type === 'engines') refreshEngines();
      else if (e.type === 'rescore') {
        // progress for the view that asked for it (onServerEvent); nothing to refetch
      } else {
        useBatches.getState().noteSession(e.type === 'session' ? e.id : e.sessionId);
        refreshSessions();
        const openId = useSessionDetail.getState().id;
        if (openId && (e.type === 'session' ? e.id === openId : e.sessionId === openId)) refreshDetail();
      }
      for (const fn of listeners) fn(e);
    },
    (state) => {
      useConnection.setState({ state });
      // After a reconnect, catch up on whatever was missed while disconnected (views in an error
      // state retry by themselves too: components/States.tsx).
      if (state === 'open' && wasOpen) {
        refreshSessions();
        refreshDetail();
        refreshEngines();
        refreshBatches();
        const b = useBatches.getState();
        for (const [id, d] of Object.entries(b.details)) if (d.data || d.error) void b.fetchDetail(id, { quiet: true });
      }
      if (state === 'open') wasOpen = true;
    },
  );
  return () => handle.close();
}
