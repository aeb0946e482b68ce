// The cluster as any node sees it (DESIGN §12): `GET /api/nodes` lists the nodes (engines, load, liveness);
// `GET /api/topology` adds what the store is and which node answered. A single process is a one-node list.
import type { FastifyInstance } from 'fastify';
import { poolSnapshot, type NodeInfo } from '../cluster/nodes.js';
import type { ApiDeps } from './routes.js';

export async function registerNodeRoutes(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  const { pool, store, cluster } = deps;

  const startedAt = Date.now();
  /** This process alone, shaped like a cluster's node row. */
  const self = (activeSessions: number): NodeInfo => ({
    id: 'local', advertiseUrl: deps.baseUrl(), startedAt, heartbeatAt: Date.now(), status: 'live', alive: true, heartbeatAgeMs: 0,
    ...poolSnapshot(pool), load: { activeSessions, runningTasks: deps.rollouts?.runningSamples ?? 0, inFlightCalls: pool.inFlightCount },
  });
  const nodes = async (): Promise<NodeInfo[]> => (cluster ? cluster.nodes() : [self(await store.sessions.count({ status: 'active' }))]);

  app.get('/api/nodes', async () => ({ self: cluster?.nodeId ?? 'local', nodes: await nodes() }));

  app.get('/api/topology', async () => ({
    mode: cluster ? 'cluster' : 'single',
    store: { kind: store.kind, location: store.location },
    self: cluster?.nodeId ?? 'local',
    nodes: await nodes(),
  }));
}
