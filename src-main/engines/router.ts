// Engines behind a router (DESIGN §12): a vLLM production-stack router or the SGLang model gateway sits in
// front of the replicas and picks one per request. Rollgate sends the session id in the router's
// session-affinity header, so every call of a session reaches the same engine replica (and its prefix
// cache) whichever Rollgate node serves it. Sources for each router's behaviour: engines/README.md.
import { z } from 'zod';
import { CaptureError } from './types.js';

interface RouterKind {
  label: string;
  /** The header the router hashes for session affinity, unless the topology names another. */
  defaultHeader: string;
  /** What to change or check when the engine's token fields do not come through it. */
  passThrough: string;
}

const VLLM_ROUTER: RouterKind = {
  label: 'vLLM production-stack router',
  defaultHeader: 'x-user-id',
  passThrough: 'Production-stack\'s router passes the engine\'s bytes through unchanged, so check that every replica is '
    + 'vLLM >= 0.10.2 (return_token_ids) and that no request rewriter (`--request-rewriter`) or other proxy in between rewrites the request or the answer',
};

const SGLANG_GATEWAY: RouterKind = {
  label: 'SGLang model gateway',
  defaultHeader: 'x-smg-routing-key',
  passThrough: 'Run the gateway with HTTP workers, whose answers it passes through unchanged '
    + '(in gRPC mode it builds answers itself, without the engine\'s token fields)',
};

/** Router kinds; `sglang-gateway` is the SGLang router's newer name (sgl-router became sgl-model-gateway). */
const ROUTERS = {
  'vllm-router': VLLM_ROUTER,
  'sglang-router': SGLANG_GATEWAY,
  'sglang-gateway': SGLANG_GATEWAY,
} as const satisfies Record<string, RouterKind>;

export type RouterKindName = keyof typeof ROUTERS;
export const ROUTER_KINDS = Object.keys(ROUTERS) as [RouterKindName, ...RouterKindName[]];

export interface RouterConfig {
  kind: RouterKindName;
  /** Header carrying the session id (default: the router's own, see ROUTERS). */
  header?: string;
}

/**
 * Headers Rollgate must never set on an engine call: credentials (an agent's keys never leave Rollgate,
 * and the SGLang gateway hashes `authorization` as an implicit routing key), and the ones HTTP itself owns.
 */
const RESERVED_HEADERS = new Set([
  'authorization', 'proxy-authorization', 'cookie', 'x-api-key', 'x-goog-api-key',
  'host', 'connection', 'content-length', 'content-type', 'transfer-encoding', 'te', 'upgrade', 'keep-alive',
  'x-data-parallel-rank',
]);

export const routerConfigSchema = z.object({
  kind: z.enum(ROUTER_KINDS, { error: () => `router kind must be one of ${ROUTER_KINDS.join(', ')}` }),
  header: z.string()
    .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'router header must be an HTTP header name (letters, digits, dash)')
    .refine((h) => !RESERVED_HEADERS.has(h.toLowerCase()), { error: (iss) => `router header ${String(iss.input)} is reserved: name the router's session header (e.g. x-user-id, x-smg-routing-key)` })
    .optional(),
}).strict();

export function routerHeader(router: RouterConfig): string {
  return (router.header ?? ROUTERS[router.kind].defaultHeader).toLowerCase();
}

/** The routing key of one session's engine calls: its id (never its key, which is a credential). */
export function routingHeaders(router: RouterConfig | undefined, sessionId: string): Record<string, string> | undefined {
  return router ? { [routerHeader(router)]: sessionId } : undefined;
}

/** A router in front of the engine: the capture failure names it, the field it dropped, and what to change. */
export function explainCaptureBehindRouter(engineId: string, router: RouterConfig, err: CaptureError): CaptureError {
  const r = ROUTERS[router.kind];
  const what = err.field ? `dropped \`${err.field}\` from the engine's answer` : `did not pass the engine's token ids through (${err.message})`;
  const message = `engine ${engineId} is behind a ${router.kind} (${r.label}) that ${what}; `
    + `the call is recorded incomplete, since its token ids cannot be rebuilt from text. ${r.passThrough}`;
  return new CaptureError(message, err.reason, err.field);
}
