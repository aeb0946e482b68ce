// Baseline (b): a bare pass-through HTTP proxy on undici, no parsing, no capture, no storage.
// Same transport choices as Rollgate (node:http in front, an undici keep-alive Pool to the engine), so
// the difference between this and Rollgate is what Rollgate does per request.
//   node --import tsx bench/proxy.ts --upstream http://127.0.0.1:PORT [--port 0]
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { Pool } from 'undici';

const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'host']);

function forwardHeaders(h: IncomingHttpHeaders | Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined && !HOP.has(k.toLowerCase())) out[k] = v;
  return out;
}

export async function startProxy(upstream: string, port = 0): Promise<{ url: string; close(): Promise<void> }> {
  const pool = new Pool(upstream, { connections: 1024, pipelining: 1, keepAliveTimeout: 60_000 });
  const server = createServer(async (req, res) => {
    const abort = new AbortController();
    res.on('close', () => { if (!res.writableFinished) abort.abort(); });
    try {
      const up = await pool.request({
        path: req.url ?? '/',
        method: (req.method ?? 'GET') as 'GET',
        headers: forwardHeaders(req.headers),
        body: req.method === 'GET' || req.method === 'HEAD' ? undefined : req,
        signal: abort.signal,
      });
      res.writeHead(up.statusCode, forwardHeaders(up.headers));
      res.flushHeaders();
      await pipeline(up.body, res);
    } catch (err) {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `proxy: ${(err as Error).message}` } }));
    }
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  const addr = server.address();
  const url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : port}`;
  return {
    url,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await pool.close();
    },
  };
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  const arg = (name: string) => { const i = process.argv.indexOf(name); return i >= 0 ? process.argv[i + 1] : undefined; };
  const upstream = arg('--upstream');
  if (!upstream) { console.error('usage: proxy.ts --upstream URL [--port P]'); process.exit(2); }
  const p = await startProxy(upstream, Number(arg('--port') ?? 0));
  const stop = () => { void p.close().finally(() => process.exit(0)); };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  console.log(`listening on ${p.url}`);
}
