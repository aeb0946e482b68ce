// Every control-API module, registered in one place (each module owns its routes).
import type { FastifyInstance } from 'fastify';
import { registerApi, type ApiDeps } from './routes.js';

export type { ApiDeps } from './routes.js';

export async function registerControlApi(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  await registerApi(app, deps);
}
