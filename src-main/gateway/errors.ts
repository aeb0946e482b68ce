// Errors shaped in the caller's dialect (DESIGN §5).
import type { FastifyReply } from 'fastify';
import type { DialectCodec } from '../core/dialects/codec.js';

export function sendDialectError(reply: FastifyReply, codec: DialectCodec, status: number, message: string, type?: string, retryAfterSec = 1): void {
  const { status: code, body } = codec.encodeError(status, message, type);
  // Both mean "not now": rate limits and pauses (429), and a store that is busy elsewhere (503).
  if (status === 429 || status === 503) reply.header('retry-after', String(retryAfterSec));
  reply.code(code).send(body);
}
