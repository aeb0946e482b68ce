// Every control-API module, registered in one place (each module owns its routes).
import type { FastifyInstance } from 'fastify';
import { registerEngineRoutes } from './engines.js';
import { registerTopologyRoutes } from './topology.js';
import { registerBatchesApi } from './batches.js';
import { registerApi, type ApiDeps } from './routes.js';
import { registerTraces } from './traces.js';
import { registerExport } from './export.js';
import { registerInsights } from './insights.js';
import { registerRescores } from './rescores.js';
import { registerCaptureHealth } from './capture-health.js';
import { registerNodeRoutes } from './nodes.js';

export type { ApiDeps } from './routes.js';

export async function registerControlApi(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  await registerApi(app, deps);
  await registerBatchesApi(app, deps);
  await registerEngineRoutes(app, deps);
  await registerTopologyRoutes(app, deps);
  await registerTraces(app, deps);
  await registerExport(app, deps);
  await registerRescores(app, deps);
  await registerInsights(app, deps);
  await registerCaptureHealth(app, deps);
  await registerNodeRoutes(app, deps);
}
