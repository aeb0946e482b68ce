// A stand-in for an engine router, for testing ROLLGATE's side of DESIGN §12: a loopback HTTP proxy that
// forwards every request to one engine (a sim), records the headers each request arrived with, and, in
// `strip` mode, re-serialises the engine's answers without their token fields, the way a router that
// parses answers into its own types would. It is NOT the vLLM production-stack router or the SGLang model
// gateway, and passing tests here say nothing about those routers themselves.
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';

export interface SeenRequest { method: string; path: string; headers: IncomingHttpHeaders }

export interface RoutingProxy {
  url: string;
  seen: SeenRequest[];
  close(): Promise<void>;
}

/** Hop-by-hop headers a proxy does not pass on (as production-stack's router drops them). */
const HOP_BY_HOP = new Set(['host', 'connection', 'keep-alive', 'transfer-encoding', 'content-length', 'te', 'upgrade', 'trailer']);

/** The fields vLLM and SGLang carry token ids and logprobs in. */
function stripTokenFields(value: unknown): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  const obj = { ...(value as Record<string, unknown>) };
  delete obj.prompt_token_ids;
  delete obj.output_ids;
  if (Array.isArray(obj.choices)) obj.choices = obj.choices.map((c: Record<string, unknown>) => { const { token_ids: _ids, ...rest } = c; return rest; });
  return obj;
}

/** Rewrites each complete SSE `data:` line of a chunk stream; a partial last line waits for the next chunk. */
function sseLineRewriter(rewrite: (line: string) => string) {
  let pending = '';
  return {
    push(chunk: string): string {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop()!;
      return lines.map((l) => rewrite(l) + '\n').join('');
    },
    end(): string { return pending ? rewrite(pending) : ''; },
  };
}

function rewriteDataLine(line: string): string {
  if (!line.startsWith('data: ') || line === 'data: [DONE]') return line;
  return `data: ${JSON.stringify(stripTokenFields(JSON.parse(line.slice(6))))}`;
}

export async function startRoutingProxy(target: string, opts: { strip?: boolean } = {}): Promise<RoutingProxy> {
  const seen: SeenRequest[] = [];
  const upstream = new URL(target);
  const server = createServer((req, res) => {
    seen.push({ method: req.method ?? 'GET', path: req.url ?? '/', headers: { ...req.headers } });
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !HOP_BY_HOP.has(k)));
    const out = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers }, (up) => {
      const isPost = req.method === 'POST';
      if (!opts.strip || !isPost || (up.statusCode ?? 500) !== 200) {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
        return;
      }
      const { 'content-length': _len, ...rest } = up.headers;
      res.writeHead(200, rest);
      const rewriter = sseLineRewriter(rewriteDataLine);
      up.setEncoding('utf8');
      up.on('data', (chunk: string) => res.write(rewriter.push(chunk)));
      up.on('end', () => res.end(rewriter.end()));
    });
    out.on('error', () => { if (!res.headersSent) res.writeHead(502); res.end(); });
    req.pipe(out);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    seen,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
