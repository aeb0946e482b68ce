// Calls for a session another node owns go to that node (DESIGN §12): the same method, path, body and the
// headers that matter (content type, the control token or the session key as API key — passed through,
// never logged). The answer (status, headers, body, streamed) comes back unchanged.
import { request } from 'undici';
import type { NodeInfo } from './nodes.js';

/** Headers worth carrying to the owner; hop-by-hop and host headers are not. */
const PASSED = ['content-type', 'accept', 'authorization', 'x-api-key', 'x-goog-api-key', 'anthropic-version', 'anthropic-beta', 'x-stainless-retry-count', 'cookie', 'user-agent'];
/** Names the node a forwarded call came through (for the owner's logs; never trusted for routing). */
export const FORWARDED_HEADER = 'x-rollgate-forwarded-by';

export interface ForwardedResponse {
  status: number;
  headers: Record<string, string>;
  body: AsyncIterable<Uint8Array> & { destroy(err?: Error): void };
}

export class OwnerUnavailableError extends Error {
  readonly statusCode = 503;
  constructor(sessionId: string, owner: string, why: string) {
    super(`session ${sessionId} belongs to node ${owner}, which ${why}; its run cannot continue elsewhere (batch samples are re-run by the queue)`);
    this.name = 'OwnerUnavailableError';
  }
}

export async function forwardToOwner(owner: NodeInfo, from: string, call: {
  method: string; url: string; headers: Record<string, string | string[] | undefined>; body?: unknown; signal?: AbortSignal;
}): Promise<ForwardedResponse> {
  const headers: Record<string, string> = { [FORWARDED_HEADER]: from };
  for (const name of PASSED) {
    const v = call.headers[name];
    if (typeof v === 'string') headers[name] = v;
  }
  const body = call.body === undefined || call.method === 'GET' || call.method === 'HEAD' ? undefined
    : typeof call.body === 'string' || Buffer.isBuffer(call.body) ? call.body : JSON.stringify(call.body);
  const res = await request(new URL(call.url, owner.advertiseUrl), {
    method: call.method as 'POST', headers, body, signal: call.signal, headersTimeout: 300_000, bodyTimeout: 300_000,
  });
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) {
    if (k === 'connection' || k === 'transfer-encoding' || k === 'keep-alive' || k === 'content-length') continue;
    if (typeof v === 'string') out[k] = v;
  }
  return { status: res.statusCode, headers: out, body: res.body };
}
