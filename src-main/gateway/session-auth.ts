// Finds the session an agent call belongs to: the key in the path (`/s/<key>/…`) or as the API key.
import type { FastifyRequest } from 'fastify';
import type { SessionRecord } from '../core/types.js';
import type { Store } from '../store/index.js';

export function sessionKeyOf(req: FastifyRequest): string | null {
  const fromPath = (req.params as { key?: string }).key;
  if (fromPath) return fromPath;
  const auth = req.headers.authorization;
  if (typeof auth === 'string' && /^bearer\s+/i.test(auth)) return auth.replace(/^bearer\s+/i, '').trim();
  for (const h of ['x-api-key', 'x-goog-api-key'] as const) {
    const v = req.headers[h];
    if (typeof v === 'string' && v) return v;
  }
  const q = (req.query as { key?: string } | undefined)?.key;
  return q ?? null;
}

/** The session for this call, or null for an unknown key (never minted on the fly). */
export async function resolveSession(store: Store, req: FastifyRequest): Promise<SessionRecord | null> {
  const key = sessionKeyOf(req);
  if (!key || !/^[0-9a-f]{32}$/.test(key)) return null;
  return store.sessions.getByKey(key);
}
