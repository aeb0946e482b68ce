// Hash router: #/sessions, #/sessions/<id>, #/engines. Works from any origin or file path, needs no
// server-side routes, and keeps back/forward working in a browser and in Electron.
import { useSyncExternalStore } from 'react';

export type Route =
  | { view: 'sessions' }
  | { view: 'session'; id: string }
  | { view: 'engines' };

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] === 'engines') return { view: 'engines' };
  if (parts[0] === 'sessions' && parts[1]) return { view: 'session', id: parts[1] };
  return { view: 'sessions' };
}

export function routeHref(route: Route): string {
  switch (route.view) {
    case 'engines':
      return '#/engines';
    case 'session':
      return `#/sessions/${encodeURIComponent(route.id)}`;
    default:
      return '#/sessions';
  }
}

export function navigate(route: Route): void {
  const href = routeHref(route);
  if (window.location.hash !== href) window.location.hash = href;
}

function subscribe(cb: () => void): () => void {
  window.addEventListener('hashchange', cb);
  return () => window.removeEventListener('hashchange', cb);
}

const getHash = () => window.location.hash;

export function useRoute(): Route {
  const hash = useSyncExternalStore(subscribe, getHash, getHash);
  return parseRoute(hash);
}
