// On a loopback bind, only requests addressed to a loopback name are answered. A web page could otherwise
// reach Rollgate through DNS rebinding (its own hostname re-pointed at 127.0.0.1) and drive the
// unauthenticated loopback control API, e.g. launch a `command` batch. Browsers always send the Host
// they resolved, so that name is what gets checked.
import type { FastifyInstance } from 'fastify';
import { sendDialectError } from './gateway/errors.js';
import { gatewayErrorCodec } from './gateway/routes.js';

export function isLoopbackHostHeader(host: string | undefined): boolean {
  if (host === undefined) return true; // HTTP/1.0 clients; browsers always send Host
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.replace(/:\d*$/, '');
  const lower = name.toLowerCase();
  return lower === 'localhost' || lower.endsWith('.localhost') || lower === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(lower);
}

export function requireLoopbackHost(server: FastifyInstance): void {
  server.addHook('onRequest', async (req, reply) => {
    if (isLoopbackHostHeader(req.headers.host)) return;
    const message = `Rollgate is bound to loopback and answers only requests addressed to localhost or 127.0.0.1 (Host: ${JSON.stringify(req.headers.host).slice(0, 120)})`;
    const codec = gatewayErrorCodec(req);
    if (codec) return sendDialectError(reply, codec, 403, message);
    return reply.code(403).send({ error: { message, type: 'permission_error' } });
  });
}
