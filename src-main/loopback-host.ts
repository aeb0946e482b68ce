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

/** A browser request from a page of another site (Origin of a non-allowed host, or Sec-Fetch-Site says so). */
export function isCrossSiteBrowserRequest(req: Pick<FastifyRequest, 'headers'>, allowed: readonly string[] = []): boolean {
  if (req.headers['sec-fetch-site'] === 'cross-site') return true;
  const origin = req.headers.origin;
  if (origin === undefined) return false;
  if (origin === 'null') return true; // sandboxed frames, file: pages
  try {
    return !isLoopbackHostHeader(new URL(origin).host, allowed);
  } catch {
    return true;
  }
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
    } else if (isControlCall(req) && !SAFE_METHODS.has(req.method) && isCrossSiteBrowserRequest(req, allowedHosts)) {
      message = `control API calls from a page of another site are refused (Origin: ${JSON.stringify(req.headers.origin ?? null).slice(0, 120)})`;
    }
    if (message === null) return;
    const codec = gatewayErrorCodec(req);
    if (codec) return sendDialectError(reply, codec, 403, message);
    return reply.code(403).send({ error: { message, type: 'permission_error' } });
  });
}
