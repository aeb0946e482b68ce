// Agent-facing routes (DESIGN §5), mounted at `/s/:key` and at the bare origin (key as API key).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DialectCodec } from '../core/dialects/codec.js';
import { anthropicCodec } from '../core/dialects/anthropic.js';
import { countAnthropicTokens } from './count-tokens.js';
import type { GatewayDeps } from './deps.js';
import { codecForUrl, dialectRoutes } from './dialects.js';
import { sendDialectError } from './errors.js';
import type { SessionRecord } from '../core/types.js';
import { StoreUnavailableError } from '../store/index.js';
import { registerRolloutGateway } from './rollout-gateway.js';
import { resolveSession } from './session-auth.js';
import { sessionCaller } from './session-call.js';

const PREFIXES = ['/s/:key', ''];

export async function registerGateway(app: FastifyInstance, deps: GatewayDeps): Promise<void> {
  const call = sessionCaller(deps);
  registerRolloutGateway(app, deps, call);
  for (const prefix of PREFIXES) {
    // Agents probe their base URL (Claude Code sends `HEAD /`); fastify answers HEAD from GET routes,
    // and the bare origin's GET / is the UI.
    if (prefix) {
      for (const path of [prefix, `${prefix}/`]) app.get(path, async (_req, reply) => reply.code(200).send({ ok: true }));
    }

    for (const route of dialectRoutes) {
      app.post(prefix + route.path, async (req, reply) => {
        const session = await sessionOrAnswer(deps, req, reply, route.codec);
        if (!session) return;
        if (await deps.routeToOwner?.(req, reply, session.id)) return;
        const ctx = route.parseContext?.(req) ?? {};
        if ('error' in ctx) return sendDialectError(reply, route.codec, 404, ctx.error);
        await call(route.codec, session, req, reply, ctx);
      });
    }

    app.post(prefix + '/v1/messages/count_tokens', async (req, reply) => {
      const session = await sessionOrAnswer(deps, req, reply, anthropicCodec as DialectCodec);
      if (!session) return;
      if (await deps.routeToOwner?.(req, reply, session.id)) return;
      return countAnthropicTokens(deps, session, req, reply);
    });

    app.get(prefix + '/v1/models', async (req, reply) => {
      const session = await sessionOrAnswer(deps, req, reply, codecForUrl(req.url));
      if (!session) return;
      const engines = deps.pool.list().filter((e) => !session.engineId || e.config.id === session.engineId);
      return {
        object: 'list',
        data: engines.map((e) => ({ id: e.config.model, object: 'model', created: 0, owned_by: `rollgate:${e.config.id}` })),
      };
    });
  }
}

function unknownKeyMessage(req: FastifyRequest): string {
  return (req.params as { key?: string }).key || req.headers.authorization || req.headers['x-api-key'] || req.headers['x-goog-api-key']
    ? 'Unknown session key. Create a session with POST /api/sessions and use its URLs.'
    : 'Missing session key. Use the URLs from POST /api/sessions or pass the session key as the API key.';
}

/** Bad JSON, oversized bodies and other framework-level failures on agent routes, in the caller's dialect. */
export function gatewayErrorCodec(req: FastifyRequest): DialectCodec | null {
  return req.url.startsWith('/s/') || req.url.startsWith('/v1') ? codecForUrl(req.url, req.headers) : null;
}

/** A route no handler owns, on the agent side: a 404 in the caller's dialect (null: not an agent URL). */
export function sendGatewayNotFound(req: FastifyRequest, reply: FastifyReply): boolean {
  const codec = gatewayErrorCodec(req);
  if (!codec) return false;
  const path = req.url.split('?')[0]!.replace(/^\/s\/[^/]+/, '/s/<key>');
  sendDialectError(reply, codec, 404, `Unknown route ${req.method} ${path}`, 'not_found_error');
  return true;
}

/**
 * The call's session, or null once the call is answered in its dialect: an unknown key (401), or a store that
 * cannot be read now (503 with Retry-After: Postgres unreachable) — never a 500 for either.
 */
async function sessionOrAnswer(deps: GatewayDeps, req: FastifyRequest, reply: FastifyReply, codec: DialectCodec): Promise<SessionRecord | null> {
  try {
    const session = await resolveSession(deps.store, req);
    if (!session) sendDialectError(reply, codec, 401, unknownKeyMessage(req));
    return session;
  } catch (err) {
    if (!(err instanceof StoreUnavailableError)) throw err;
    sendDialectError(reply, codec, 503, `the session store cannot be read now: ${err.message}`, undefined, err.retryAfterSec);
    return null;
  }
}
