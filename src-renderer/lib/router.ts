// Hash router. Works from any origin or file path, needs no server-side routes, and keeps back/forward
// working in a browser and in Electron.
//   #/                      dashboard          #/launch               launch a batch
//   #/topology (#/engines)  topology           #/batches/<id>[/tasks/<taskId>][?q=<filter>]   batch / task detail
//   #/sessions              sessions list      #/sessions/<id>        session inspector
//   #/compare?a=<id>&b=<id>[&task=<taskId>]    #/export[?batch=<id>]  #/manual[/<sessionId>]
import { useSyncExternalStore } from 'react';

export type Route =
  | { view: 'dashboard' }
  | { view: 'topology' }
  | { view: 'launch' }
  | { view: 'batch'; id: string; taskId?: string; q?: string }
  | { view: 'sessions' }
  | { view: 'session'; id: string }
  | { view: 'compare'; a?: string; b?: string; task?: string }
  | { view: 'export'; batch?: string }
  | { view: 'manual'; id?: string };

export function parseRoute(hash: string): Route {
  const raw = hash.replace(/^#\/?/, '');
  const [path, query = ''] = raw.split('?', 2);
  const parts = path.split('/').filter(Boolean).map((p) => {
    try {
      return decodeURIComponent(p);
    } catch {
      return p;
    }
  });
  const q = new URLSearchParams(query);
  const opt = (k: string) => q.get(k) || undefined;
  switch (parts[0]) {
    case 'engines':
    case 'topology':
      return { view: 'topology' };
    case 'launch':
      return { view: 'launch' };
    case 'batches':
      if (parts[1]) return { view: 'batch', id: parts[1], ...(parts[2] === 'tasks' && parts[3] ? { taskId: parts[3] } : {}), ...(opt('q') ? { q: opt('q') } : {}) };
      return { view: 'dashboard' };
    case 'sessions':
      return parts[1] ? { view: 'session', id: parts[1] } : { view: 'sessions' };
    case 'compare':
      return { view: 'compare', a: opt('a'), b: opt('b'), task: opt('task') };
    case 'export':
      return { view: 'export', batch: opt('batch') };
    case 'manual':
      return parts[1] ? { view: 'manual', id: parts[1] } : { view: 'manual' };
    default:
      return { view: 'dashboard' };
  }
}

function withQuery(path: string, params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

export function routeHref(route: Route): string {
  const enc = encodeURIComponent;
  switch (route.view) {
    case 'topology':
      return '#/topology';
    case 'launch':
      return '#/launch';
    case 'batch':
      return withQuery(route.taskId ? `#/batches/${enc(route.id)}/tasks/${enc(route.taskId)}` : `#/batches/${enc(route.id)}`, { q: route.q });
    case 'sessions':
      return '#/sessions';
    case 'session':
      return `#/sessions/${enc(route.id)}`;
    case 'compare':
      return withQuery('#/compare', { a: route.a, b: route.b, task: route.task });
    case 'export':
      return withQuery('#/export', { batch: route.batch });
    case 'manual':
      return route.id ? `#/manual/${enc(route.id)}` : '#/manual';
    default:
      return '#/';
  }
}

export function navigate(route: Route, opts: { replace?: boolean } = {}): void {
  const href = routeHref(route);
  if (window.location.hash === href) return;
  if (opts.replace) {
    window.history.replaceState(null, '', href);
    window.dispatchEvent(new HashChangeEvent('hashchange'));
  } else window.location.hash = href;
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
