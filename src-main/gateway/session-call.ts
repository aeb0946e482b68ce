// One agent call on a known session: refused when the session has ended or has too many calls in flight,
// else run through the completion flow. Shared by the session routes and the rollout-gateway routes.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { DialectCodec, ParseContext } from '../core/dialects/codec.js';
import type { SessionRecord } from '../core/types.js';
import { handleCompletion } from './completion.js';
import type { GatewayDeps } from './deps.js';
import { sendDialectError } from './errors.js';

export const DEFAULT_MAX_CONCURRENT_PER_SESSION = 64;

export type SessionCall = (codec: DialectCodec, session: SessionRecord, req: FastifyRequest, reply: FastifyReply, ctx?: ParseContext) => Promise<void>;

export function sessionCaller(deps: GatewayDeps): SessionCall {
  const limit = Math.max(1, deps.maxConcurrentPerSession ?? DEFAULT_MAX_CONCURRENT_PER_SESSION);
  /** Agent calls in flight per session id. */
  const inFlight = new Map<string, number>();
  return async (codec, session, req, reply, ctx = {}) => {
    if (session.status !== 'active') return sendDialectError(reply, codec, 409, `session ${session.id} is ${session.status}; create a new session`);
    const running = inFlight.get(session.id) ?? 0;
    if (running >= limit) {
      return sendDialectError(reply, codec, 429, `too many concurrent requests for this session (${running} in flight, limit ${limit}); retry when one finishes`);
    }
    inFlight.set(session.id, running + 1);
    try {
      await handleCompletion(deps, codec, session, req, reply, ctx);
    } finally {
      const left = (inFlight.get(session.id) ?? 1) - 1;
      if (left > 0) inFlight.set(session.id, left);
      else inFlight.delete(session.id);
    }
  };
}
