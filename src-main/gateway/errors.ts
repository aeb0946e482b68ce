// Errors shaped in the caller's dialect (DESIGN §5).
import type { FastifyReply } from 'fastify';
import type { DialectCodec } from '../core/dialects/codec.js';

export function sendDialectError(reply: FastifyReply, codec: DialectCodec, status: number, message: string, type?: string, retryAfterSec = 1): void {
  const { status: code, body } = codec.encodeError(status, message, type);
  if (status === 429) reply.header('retry-after', String(retryAfterSec));
  reply.code(code).send(body);
}
