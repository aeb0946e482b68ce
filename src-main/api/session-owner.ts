// Calls for a session another node owns (DESIGN §12): a node answers a session's control and agent calls
// only if it owns the session; otherwise it forwards the call to the owner and streams the answer back,
// or says clearly that the owner is gone. Single-process Rollgate has no owner routing (null).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ClusterNode } from '../cluster/index.js';
import { forwardToOwner, OwnerUnavailableError } from '../cluster/forward.js';

/** Names the node that answered a forwarded call (the session's owner). */
export const SERVED_BY_HEADER = 'x-rollgate-served-by';

/** Resolves true when the call was answered here on the owner's behalf (forwarded, or refused). */
export type OwnerRouting = (req: FastifyRequest, reply: FastifyReply, sessionId: string) => Promise<boolean>;

export function ownerRouting(cluster: ClusterNode): OwnerRouting {
  return async (req, reply, sessionId) => {
    // No "already forwarded" shortcut: that header would be the caller's to set, and a session served by two
    // nodes at once could race on its seqs. The owner is stored, so every node agrees and a call cannot loop.
    const owner = await cluster.ownerOf(sessionId);
    if (!owner || owner.id === cluster.nodeId) return false;
    if (!owner.alive) throw new OwnerUnavailableError(sessionId, owner.id, owner.status === 'stopped' ? 'was stopped' : 'is not answering (no heartbeat)');
    const abort = new AbortController();
    req.raw.on('close', () => { if (!reply.raw.writableEnded) abort.abort(); });
    let res;
    try {
      res = await forwardToOwner(owner, cluster.nodeId, { method: req.method, url: req.url, headers: req.headers, body: req.body, signal: abort.signal });
    } catch (err) {
      throw new OwnerUnavailableError(sessionId, owner.id, `could not be reached at ${owner.advertiseUrl} (${(err as Error).message})`);
    }
    reply.hijack();
    reply.raw.writeHead(res.status, { ...res.headers, [SERVED_BY_HEADER]: owner.id });
    try {
      for await (const chunk of res.body) reply.raw.write(chunk);
    } catch {
      // The owner went away mid-answer: the agent sees a cut stream, as it would from the owner itself.
    }
    reply.raw.end();
    return true;
  };
}
