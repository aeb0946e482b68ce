// On a loopback bind the control API has no token, so only the local user's own tools may drive it:
//  - requests must be addressed to a loopback name (or one the operator allowed): a web page could
//    otherwise reach Rollgate through DNS rebinding (its own hostname re-pointed at 127.0.0.1);
//  - state-changing control calls from a browser page of another origin are refused: a page can send
//    a "simple" cross-origin POST (no preflight) to 127.0.0.1, e.g. to pause the engines or launch a
//    `command` batch. Browsers say where a request comes from (Origin, Sec-Fetch-Site); agents and
//    trainers send neither.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { sendDialectError } from './gateway/errors.js';
import { ROLLOUT_CONTROL_ROUTES } from './gateway/rollout-gateway.js';
import { gatewayErrorCodec } from './gateway/routes.js';

/** Bind addresses Rollgate treats as loopback (no control token needed). */
export const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['127.0.0.1', 'localhost', '::1']);

function hostName(host: string): string {
  return (host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.replace(/:\d*$/, '')).toLowerCase();
}

function isLoopbackName(name: string): boolean {
  return name === 'localhost' || name.endsWith('.localhost') || name === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}

export function isLoopbackHostHeader(host: string | undefined, allowed: readonly string[] = []): boolean {
  if (host === undefined) return true; // HTTP/1.0 clients; browsers always send Host
  const name = hostName(host);
  return isLoopbackName(name) || allowed.some((a) => a.toLowerCase() === name);
}

/**
 * A browser request from a page of another origin: Sec-Fetch-Site says so, or the Origin is not exactly
 * this server's own (scheme, host AND port: a dev server on localhost:3000 is another site, issue 18.4).
 */
export function isCrossSiteBrowserRequest(req: Pick<FastifyRequest, 'headers'>): boolean {
  const site = req.headers['sec-fetch-site'];
  if (site === 'cross-site' || site === 'same-site') return true;
  const origin = req.headers.origin;
  if (origin === undefined) return false;
  if (origin === 'null') return true; // sandboxed frames, file: pages
  try {
    const o = new URL(origin);
    const host = req.headers.host;
    return o.protocol !== 'http:' || host === undefined || o.host.toLowerCase() !== host.toLowerCase();
  } catch {
    return true;
  }
}

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH']);

/**
 * State-changing control calls must say they send JSON (issue 18.4). A page of another site can send a
 * "simple" POST (text/plain, form data) without asking first; one with `application/json` needs a CORS
 * preflight, which Rollgate never grants. Applies with and without a control token.
 */
export function requireJsonControlCalls(server: FastifyInstance): void {
  server.addHook('onRequest', async (req, reply) => {
    if (!STATE_CHANGING.has(req.method) || !req.url.startsWith('/api/')) return;
    const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    if (type === 'application/json') return;
    return reply.code(415).send({ error: { message: `control API calls that change state need content-type: application/json (got ${JSON.stringify(req.headers['content-type'] ?? null).slice(0, 80)})`, type: 'invalid_request_error' } });
  });
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The control API, and the rollout-gateway routes a trainer calls (gateway/rollout-gateway.ts). */
function isControlCall(req: FastifyRequest): boolean {
  return req.url.startsWith('/api/') || ROLLOUT_CONTROL_ROUTES.has(req.routeOptions?.url ?? '');
}

export function guardLoopback(server: FastifyInstance, allowedHosts: readonly string[] = []): void {
  server.addHook('onRequest', async (req, reply) => {
    let message: string | null = null;
    if (!isLoopbackHostHeader(req.headers.host, allowedHosts)) {
      message = `Rollgate is bound to loopback and answers only requests addressed to localhost or 127.0.0.1 (Host: ${JSON.stringify(req.headers.host).slice(0, 120)}); allow another name with --allowed-host`;
    } else if (isControlCall(req) && !SAFE_METHODS.has(req.method) && isCrossSiteBrowserRequest(req)) {
      message = `control API calls from a page of another site are refused (Origin: ${JSON.stringify(req.headers.origin ?? null).slice(0, 120)})`;
    }
    if (message === null) return;
    const codec = gatewayErrorCodec(req);
    if (codec) return sendDialectError(reply, codec, 403, message);
    return reply.code(403).send({ error: { message, type: 'permission_error' } });
  });
}
