// A sandboxed run's only way out (DESIGN §7, §9): a Unix socket (mode 0600, in a 0700 folder) on which
// Rollgate serves ONLY that run's session routes, `/s/<key>/…`, plus `HEAD /` (agents probe their base
// URL). Every other path, every other key and the whole control API answer 404 here, before any route
// or hook of the main server sees the request. What passes is handed to the main server's router, so
// the agent gets exactly the gateway it would get over TCP.
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { dirname } from 'node:path';

export type Router = (req: IncomingMessage, res: ServerResponse) => void;

function notFound(res: ServerResponse): void {
  const body = JSON.stringify({ error: { message: 'not found: this socket serves only its own session\'s agent routes', type: 'not_found_error' } });
  res.writeHead(404, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
}

/** Whether `rawUrl` is one of `key`'s agent routes: `/s/<key>` or below it, with no dot segments or encoded separators. */
export function isOwnSessionPath(rawUrl: string, key: string): boolean {
  const path = rawUrl.split('?')[0];
  const prefix = `/s/${key}`;
  if (path !== prefix && !path.startsWith(`${prefix}/`)) return false;
  // Routers and proxies disagree on `..`, `%2e`, `%2f` and `\`: refuse them outright (agents never send them).
  if (/%2e|%2f|%5c|\\/i.test(path)) return false;
  return !path.split('/').some((seg) => seg === '.' || seg === '..');
}

/** Serves `key`'s agent routes on a fresh Unix socket at `path`; resolves to a closer once listening. */
export async function serveRunSocket(route: Router, key: string, path: string): Promise<() => Promise<void>> {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  chmodSync(dirname(path), 0o700);
  rmSync(path, { force: true });
  const server = createServer((req, res) => {
    if (req.method === 'HEAD' && (req.url === '/' || req.url === '')) { res.writeHead(200).end(); return; }
    if (!isOwnSessionPath(req.url ?? '', key)) {
      req.resume();
      notFound(res);
      return;
    }
    route(req, res);
  });
  // The folder (0700) keeps others out from the start; the socket itself is tightened once it exists.
  // (Never process.umask here: it is process-wide, and other runs create their folders meanwhile.)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => { server.off('error', reject); resolve(); });
  });
  chmodSync(path, 0o600);
  return async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(path, { force: true });
  };
}
