// Errors shaped in the caller's dialect (DESIGN §5).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { DialectCodec } from '../core/dialects/codec.js';

export function sendDialectError(reply: FastifyReply, codec: DialectCodec, status: number, message: string, type?: string, retryAfterSec = 1): void {
  const { status: code, body } = codec.encodeError(status, message, type);
  // Both mean "not now": rate limits and pauses (429), and a store that is busy elsewhere (503).
  if (status === 429 || status === 503) reply.header('retry-after', String(retryAfterSec));
  if (status >= 500) logServerError(reply.request, status, message);
  reply.code(code).send(body);
}

/**
 * Every 5xx an agent or client gets is written to stderr with its request id (also sent as `x-request-id`), so
 * a user's report can be matched to what the server saw. The route pattern is logged, never the URL: agent URLs
 * carry session keys.
 */
export function logServerError(req: FastifyRequest, status: number, message: string): void {
  console.error(`rollgate: ${status} on ${req.method} ${req.routeOptions?.url ?? '(no route)'} (request ${req.id}): ${message}`);
}
