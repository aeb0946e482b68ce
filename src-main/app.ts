// Composition root (DESIGN §2): store, engines, gateway, control API and UI in one process.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Fastify, { type FastifyInstance } from 'fastify';
import fastifyCookie from '@fastify/cookie';
import fastifyStatic from '@fastify/static';
import { registerControlApi } from './api/index.js';
import { EngineTokenTexts } from './engines/token-text.js';
import { EventBus } from './api/events.js';
import { closeEnginePools, DEFAULT_ENGINE_TIMEOUTS, type EngineTimeouts } from './engines/http.js';
import { EnginePool } from './engines/pool.js';
import { getFamily } from './core/families/index.js';
import { SIM_MODELS, startSimEngine } from './engines/sim/index.js';
import { closePromptPool } from './engines/prompt-pool.js';
import { checkTokenFormat } from './engines/token-format.js';
import { parseEngineConfig } from './engines/topology.js';
import type { EngineConfig } from './engines/types.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './core/dialects/validate.js';
import { logServerError, sendDialectError } from './gateway/errors.js';
import { ROLLOUT_CONTROL_ROUTES } from './gateway/rollout-gateway.js';
import { gatewayErrorCodec, registerGateway, sendGatewayNotFound } from './gateway/routes.js';
import { serveRunSocket } from './gateway/run-socket.js';
import { SessionTurnCache } from './gateway/session-cache.js';
import { guardLoopback, LOOPBACK_HOSTS, requireJsonControlCalls } from './loopback-host.js';
import { RolloutManager, type RolloutManagerOptions } from './rollouts/manager.js';
import type { ClusterNode } from './cluster/index.js';
import { ownerRouting } from './api/session-owner.js';
import { lockDataFolder, openStore, POLICY_VERSION_SETTING, type Store } from './store/index.js';

export interface AppConfig {
  host?: string;
  port?: number;
  dataDir: string;
  /** Who holds the data folder, shown to a second writer that is refused (default `rollgate serve`). */
  owner?: string;
  /** Start the embedded simulated vLLM and SGLang engines (ids sim-vllm, sim-sglang). */
  sim?: boolean;
  simSeed?: number;
  /** Probability that the sim policy answers right (default 0.8, so demo rewards vary). */
  simSkill?: number;
  /** The model family the embedded sim engines speak (core/families). Default qwen3. */
  simFamily?: string;
  engines?: EngineConfig[];
  /** Required when binding a non-loopback host. */
  controlToken?: string;
  /** On a loopback bind: more Host names to answer (port forwarders, host.docker.internal); loopback names always. */
  allowedHosts?: string[];
  bodyLimitBytes?: number;
  /**
   * Engine calls: how long to wait for response headers, and for anything between body chunks, before the
   * agent gets a dialect-shaped 504 and the completion is recorded as `error`. Default 300 s each.
   * Applies to every engine, also those added later through the API.
   */
  engineTimeouts?: Partial<EngineTimeouts>;
  /** Agent calls one session may have in flight at once; more get a dialect-shaped 429. Default 64. */
  maxConcurrentPerSession?: number;
  healthIntervalMs?: number;
  uiDir?: string;
  /** How long a client may take to send a whole request, headers and body (408 after). Default 60 s. */
  requestTimeoutMs?: number;
  /** Most bytes the per-session turn cache holds (default 64 MiB). */
  turnCacheBytes?: number;
  /**
   * A shared Postgres store (`postgres://…`) instead of the SQLite file in `dataDir`: this process is then a
   * node of a cluster (DESIGN §12), named `nodeId`, reached by other nodes and agents at `advertiseUrl`
   * (default http://host:port; give it when binding 0.0.0.0 or port 0). No data-folder lock is taken.
   */
  store?: string;
  nodeId?: string;
  advertiseUrl?: string;
  /** Cluster: batch samples this node runs at once from the shared queue (default 4). */
  concurrency?: number;
  /** Cluster: heartbeat interval and how late a node may be before it counts as dead (tests shorten them). */
  heartbeatMs?: number;
  deadAfterMs?: number;
  /** Rollout manager knobs: where agent CLIs are installed (default <dataDir>/agents), callback retry policy. */
  rollouts?: Partial<Pick<RolloutManagerOptions, 'agentsDir' | 'callbackMaxAttempts' | 'callbackBaseDelayMs' | 'defaultRuntime'>>;
}

export interface App {
  url: string;
  server: FastifyInstance;
  store: Store;
  pool: EnginePool;
  events: EventBus;
  /** Recent turns per active session (token mode). */
  turns: SessionTurnCache;
  rollouts: RolloutManager;
  /** This node, when the store is Postgres. */
  cluster: ClusterNode | null;
  close(): Promise<void>;
}

export const SIM_MODEL = 'Qwen/Qwen3-8B';
export const SIM_FLAVORS = ['vllm', 'sglang'] as const;

/** An embedded sim engine (ids `sim-vllm`, `sim-sglang`, DESIGN §11). */
/** The embedded sim engine of a flavour, speaking `familyName` (default qwen3, vLLM in chat mode). */
export function simEngineConfig(flavor: (typeof SIM_FLAVORS)[number], url: string, familyName?: string): EngineConfig {
  const family = familyName ? getFamily(familyName) : undefined;
  return {
    id: `sim-${flavor}`, kind: flavor, replicas: [url], model: family ? SIM_MODELS[family.name]! : SIM_MODEL,
    mode: flavor === 'vllm' ? 'chat' : 'token',
    tokenizer: family?.defaultTokenizer ?? 'builtin:qwen3', ...(family ? { family: family.name } : {}), simulated: true,
  };
}
const here = dirname(fileURLToPath(import.meta.url));
export const DEFAULT_UI_DIR = resolve(here, '..', 'dist-renderer');

export async function createApp(config: AppConfig): Promise<App> {
  const host = config.host ?? '127.0.0.1';
  if (!LOOPBACK_HOSTS.has(host) && !config.controlToken) {
    throw new Error(`refusing to bind ${host} without a control token (rollgate serve keeps one in <data-dir>/control-token, mode 0600)`);
  }
  const closers: Array<() => Promise<void>> = [];
  const closeAll = async () => { for (const c of closers.reverse()) await c().catch(() => undefined); closers.length = 0; };
  try {
    const clustered = config.store !== undefined;
    const advertiseUrl = clustered ? advertisedUrl(config, host) : null;
    // One writer per data folder: a second one is refused before it touches anything the first one owns.
    // A cluster node shares Postgres with the others and keeps only run folders locally: no lock.
    const lock = clustered ? null : lockDataFolder(config.dataDir, config.owner ?? 'rollgate serve');
    if (lock) closers.push(async () => lock.release());
    const store: Store = clustered
      ? await (await import('./store/postgres/index.js')).openPostgresStore({ url: config.store!, nodeId: config.nodeId })
      : openStore({ dataDir: config.dataDir });
    closers.push(() => store.close());
    if (!clustered) {
      await store.sessions.markBatchSessionsInterrupted();
      // Custody: calls whose intent outlived the previous process were lost between engine and commit.
      // Only the folder's one writer may do this (an export or a second reader would see live calls).
      // In a cluster this is per dead node (cluster/nodes.ts), never at start: the other nodes are alive.
      const lost = await store.completions.recoverDanglingIntents();
      if (lost.length) console.warn(`rollgate: ${lost.length} engine call(s) lost in a crash; their sessions are marked incomplete (${[...new Set(lost.map((l) => l.sessionId))].join(', ')})`);
    }

    const engines: EngineConfig[] = [];
    if (config.sim) {
      for (const flavor of SIM_FLAVORS) {
        // Agents ask for up to 32k output tokens; serve the sim like Qwen3 with YaRN (128k context).
        const engine = simEngineConfig(flavor, '', config.simFamily);
        const sim = await startSimEngine({ flavor, seed: config.simSeed ?? 7, skill: config.simSkill, model: engine.model, family: config.simFamily, maxModelLen: 131072 });
        closers.push(() => sim.close());
        engines.push({ ...engine, replicas: [sim.url] });
      }
    }
    // A topology whose tokenizer is missing or does not match its family fails here, naming the field.
    for (const e of config.engines ?? []) await checkTokenFormat(e).catch((err: Error) => { throw new Error(`engine ${e.id}: ${err.message}`); });
    engines.push(...(config.engines ?? []));
    engines.push(...(await storedEngines(store, new Set(engines.map((e) => e.id)))));
    // Every engine, also those added later through the API, gets the same timeouts.
    const pool = new EnginePool(engines, { ...DEFAULT_ENGINE_TIMEOUTS, ...config.engineTimeouts });
    closers.push(() => closeEnginePools());
    closers.push(() => closePromptPool());
    pool.policyVersion = (await store.settings.get<number>(POLICY_VERSION_SETTING)) ?? 0;
    pool.startHealthChecks(config.healthIntervalMs ?? 5000);
    closers.push(async () => pool.stopHealthChecks());
    const events = new EventBus();
    // Per-session memory (token mode's turn cache, delta storage's candidate parents) lets go of a session as
    // soon as it ends, whoever ended it.
    const turns = new SessionTurnCache(config.turnCacheBytes);
    const unsubscribeTurns = events.subscribe((ev) => {
      if (ev.type !== 'session' || !ev.status || ev.status === 'active') return;
      turns.forget(ev.id);
      store.completions.forgetSession(ev.id);
    });
    closers.push(async () => unsubscribeTurns());

    let rollouts: RolloutManager | null = null;
    const cluster = clustered ? await (await import('./cluster/index.js')).startClusterNode({
      url: config.store!, nodeId: config.nodeId!, advertiseUrl: advertiseUrl!, store, pool, events,
      runningTasks: () => rollouts?.runningSamples ?? 0, heartbeatMs: config.heartbeatMs, deadAfterMs: config.deadAfterMs,
    }) : null;
    // Closed after the rollout manager (closers run in reverse): a stopping node hands its samples back through the queue.
    if (cluster) closers.push(() => cluster.close());

    const server = Fastify({
      bodyLimit: config.bodyLimitBytes ?? 32 * 1024 * 1024, logger: false, forceCloseConnections: true,
      serverFactory: (handler) => httpServer(handler, config.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS),
      genReqId: () => randomBytes(8).toString('hex'), requestIdHeader: false,
    });
    server.addHook('onRequest', async (req, reply) => { reply.header('x-request-id', req.id); });
    closers.push(() => server.close());
    rollouts = new RolloutManager({
      store, pool, events, baseUrl: () => baseUrl, dataDir: config.dataDir, ...config.rollouts,
      ...(cluster ? { queue: { samples: cluster.queue, concurrency: config.concurrency ?? 4 } } : {}),
      // A sandboxed run's only way out: its own session routes on a Unix socket, handled by this server's router.
      serveRunSocket: (key, path) => serveRunSocket((req, res) => server.routing(req, res), key, path),
    });
    closers.push(() => rollouts.close());
    cluster?.onDeclaredDead(() => rollouts.abandonQueuedSamples());
    cluster?.onBatchDrained((batchId) => { void rollouts.completeQueuedBatch(batchId).catch((err: Error) => console.error(`rollgate: batch ${batchId}: ${err.message}`)); });
    let baseUrl = '';
    installErrorHandler(server);
    limitJsonDepth(server);
    if (LOOPBACK_HOSTS.has(host)) guardLoopback(server, config.allowedHosts);
    requireJsonControlCalls(server);
    if (config.controlToken) await requireControlToken(server, config.controlToken);
    const tokenTexts = new EngineTokenTexts();
    await tokenTexts.load(engines);
    // Session URLs point at the node that owns the session: in a cluster, the address others reach it at.
    const publicUrl = () => advertiseUrl ?? baseUrl;
    const routeToOwner = cluster ? ownerRouting(cluster) : undefined;
    await registerControlApi(server, {
      store, pool, events, baseUrl: publicUrl, rollouts, tokenTexts,
      ...(cluster ? { cluster, control: cluster.control, routeToOwner } : {}),
    });
    await registerGateway(server, { store, pool, events, turns, maxConcurrentPerSession: config.maxConcurrentPerSession, routeToOwner });
    await registerUi(server, config.uiDir ?? DEFAULT_UI_DIR);

    await server.listen({ host, port: config.port ?? 8321 });
    const addr = server.server.address();
    const port = typeof addr === 'object' && addr ? addr.port : config.port;
    baseUrl = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    lock?.setUrl(baseUrl);
    return { url: baseUrl, server, store, pool, events, turns, rollouts, cluster, close: closeAll };
  } catch (err) {
    await closeAll();
    throw err;
  }
}

/** Where other nodes and agents reach a cluster node: `advertiseUrl`, else http://host:port when that is concrete. */
function advertisedUrl(config: AppConfig, host: string): string {
  if (!config.nodeId) throw new Error('a Postgres store needs a node id (--node-id): each node of a cluster has its own');
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(config.nodeId)) throw new Error(`node id ${JSON.stringify(config.nodeId)}: use letters, digits, '.', '_' or '-' (at most 64)`);
  if (config.advertiseUrl) {
    const u = new URL(config.advertiseUrl);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`--advertise-url must be http(s), got ${config.advertiseUrl}`);
    return config.advertiseUrl.replace(/\/$/, '');
  }
  if (!config.port || host === '0.0.0.0' || host === '::') throw new Error('a cluster node needs --advertise-url (the address other nodes and agents reach it at) when it binds a wildcard address or port 0');
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.port}`;
}

/** Engines added through the API earlier; a topology file or sim engine with the same id wins. */
async function storedEngines(store: Store, taken: Set<string>): Promise<EngineConfig[]> {
  const out: EngineConfig[] = [];
  for (const row of await store.engines.list()) {
    if (taken.has(row.id)) continue;
    try {
      out.push(parseEngineConfig(row.config, `stored engine ${row.id}`));
    } catch (err) {
      console.warn(`rollgate: skipping ${(err as Error).message}`);
    }
  }
  return out;
}

/**
 * JSON bodies as fastify parses them (prototype-poisoning checks included), refused with a 400 when they nest
 * deeper than any real request: hashing, validating or copying a 5,000-level body overflowed the stack (a 500).
 */
function limitJsonDepth(server: FastifyInstance): void {
  const parse = server.getDefaultJsonParser('error', 'error');
  server.removeContentTypeParser('application/json');
  server.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    parse(req, body as string, (err: Error | null, value?: unknown) => {
      if (err) return done(err);
      if (nestsDeeperThan(value, MAX_JSON_DEPTH)) {
        return done(Object.assign(new Error(`request body nests deeper than ${MAX_JSON_DEPTH} levels`), { statusCode: 400 }));
      }
      done(null, value);
    });
  });
}

/** Default for AppConfig.requestTimeoutMs. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
const KEEP_ALIVE_MS = 5_000;

/**
 * The HTTP server with its socket limits: a request's headers and body must arrive within `requestTimeoutMs`
 * (a client that opens a connection and sends nothing, or trickles its body, is answered 408 and cut off), and an
 * idle keep-alive connection is closed after 5 s. Responses, long SSE streams included, are not limited.
 */
function httpServer(handler: http.RequestListener, requestTimeoutMs: number): http.Server {
  return http.createServer({
    requestTimeout: requestTimeoutMs,
    headersTimeout: Math.min(30_000, requestTimeoutMs),
    keepAliveTimeout: KEEP_ALIVE_MS,
    connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(requestTimeoutMs / 4))),
  }, handler);
}

function installErrorHandler(server: FastifyInstance): void {
  server.setErrorHandler((err: Error & { statusCode?: number; retryAfterSec?: number }, req, reply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
    if (err.retryAfterSec !== undefined) reply.header('retry-after', String(err.retryAfterSec));
    const message = status === 413 ? `request body is larger than the limit (${err.message})` : err.message;
    const codec = gatewayErrorCodec(req);
    if (codec) return sendDialectError(reply, codec, status, message);
    if (status >= 500) logServerError(req, status, message);
    reply.code(status).send({ error: { message, type: status >= 500 ? 'server_error' : 'invalid_request_error' } });
  });
}

/**
 * The control API answers only `Authorization: Bearer <token>`, compared in constant time (digests of equal
 * length). The matched route decides what is control API, not the raw URL, so an encoded path
 * (`/%61pi/…`) cannot slip past. Agent routes keep their session keys. The rollout-gateway routes a trainer
 * calls (register, trajectory, cancel, unregister) are control API too; their chat route is the agent's.
 */
const CONTROL_COOKIE = 'rollgate_control';

/**
 * Off loopback the control API needs the token: as `Authorization: Bearer <token>` (trainers), or as an
 * HttpOnly cookie the browser UI gets by opening `/?token=<token>` once (EventSource cannot send headers).
 */
async function requireControlToken(server: FastifyInstance, token: string): Promise<void> {
  await server.register(fastifyCookie);
  const digest = (s: string) => createHash('sha256').update(s).digest();
  const expected = digest(token);
  const matches = (given: string | undefined) => given !== undefined && timingSafeEqual(digest(given), expected);
  server.addHook('onRequest', async (req, reply) => {
    const route = req.routeOptions?.url ?? '';
    const fromQuery = (req.query as { token?: string } | undefined)?.token;
    if (req.method === 'GET' && (route === '/' || req.url.startsWith('/?')) && fromQuery !== undefined) {
      if (!matches(fromQuery)) return reply.code(401).type('text/plain').send('wrong control token');
      reply.setCookie(CONTROL_COOKIE, token, { httpOnly: true, sameSite: 'strict', path: '/' });
      return reply.redirect('/');
    }
    if (!route.startsWith('/api/') && !req.url.startsWith('/api/') && !ROLLOUT_CONTROL_ROUTES.has(route)) return;
    const bearer = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    if (!matches(bearer) && !matches(req.cookies[CONTROL_COOKIE])) {
      return reply.code(401).send({ error: { message: 'control token required', type: 'authentication_error' } });
    }
  });
}

async function registerUi(server: FastifyInstance, uiDir: string): Promise<void> {
  const csp = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'";
  const built = existsSync(join(uiDir, 'index.html'));
  if (built) {
    await server.register(fastifyStatic, { root: uiDir, prefix: '/', wildcard: true, setHeaders: (res) => { res.header('content-security-policy', csp); } });
  } else {
    server.get('/', async (_req, reply) => reply.type('text/plain').send(`Rollgate is running, but the UI is not built. Run: npm run build:renderer\n`));
  }
  server.setNotFoundHandler((req, reply) => {
    if (sendGatewayNotFound(req, reply)) return;
    if (built && req.method === 'GET' && !req.url.startsWith('/api/')) {
      return reply.header('content-security-policy', csp).sendFile('index.html');
    }
    reply.code(404).send({ error: { message: `no route ${req.method} ${req.url.split('?')[0]}`, type: 'not_found_error' } });
  });
}
