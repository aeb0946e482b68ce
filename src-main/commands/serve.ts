// `rollgate serve`: the headless server (DESIGN §11).
import { InvalidArgumentError, type Command } from 'commander';
import { resolve } from 'node:path';
import { createApp, DEFAULT_UI_DIR } from '../app.js';
import { ensureUiBuilt } from '../ui-build.js';
import { LOOPBACK_HOSTS } from '../loopback-host.js';
import { controlTokenPath, ensureControlToken, refuseTokenInEnv } from '../control-token.js';
import { defaultDataDir } from '../data-dir.js';
import { loadTopologyFile } from '../engines/topology.js';
import { openInBrowser } from '../open-browser.js';
import { FAMILY_NAMES } from '../core/families/index.js';
import { defaultRuntime, familyOption, int, onSignals, positive, runtimeChoice, userPath } from './options.js';
import type { RuntimeChoice } from '../rollouts/runtimes/types.js';

interface ServeOptions {
  host: string; port: number; dataDir?: string; topology?: string; sim: boolean; simFamily?: string; controlTokenFile?: string; open?: boolean;
  engineTimeout: number; runtime?: RuntimeChoice; engineIdleTimeout: number; maxBodyMb: number; maxConcurrentPerSession: number; allowedHost: string[];
  store?: string; nodeId?: string; advertiseUrl?: string; concurrency: number;
}

/** `--store`: a Postgres URL (a cluster node); the SQLite default needs no option. */
function storeUrl(v: string): string {
  if (!/^postgres(ql)?:\/\//.test(v)) throw new InvalidArgumentError('--store takes a Postgres URL (postgres://user@host:5432/db); without it Rollgate uses SQLite in the data folder');
  return v;
}

export function registerServe(program: Command): void {
  program.command('serve')
  .description('headless server: gateway, control API and UI')
  .option('--host <host>', 'address to bind', '127.0.0.1')
  .option('--port <port>', 'port (0 = any free port)', int('port'), 8321)
  .option('--data-dir <dir>', 'data folder')
  .option('--topology <file>', 'YAML file describing engines')
  .option('--no-sim', 'do not start the embedded simulated engines')
  .option('--sim-family <family>', `model family the embedded sim engines speak: ${FAMILY_NAMES.join(' | ')}`, familyOption)
  .option('--control-token-file <file>', 'file (mode 0600) holding the control API token, required off loopback (default: <data-dir>/control-token, created when missing)')
  .option('--engine-timeout <seconds>', 'how long an engine may take to start answering a call (504 after)', positive('--engine-timeout'), 300)
  .option('--engine-idle-timeout <seconds>', 'how long an engine stream may stay silent mid-answer (error after)', positive('--engine-idle-timeout'), 300)
  .option('--max-body-mb <mb>', 'largest agent request body accepted (413 above)', positive('--max-body-mb'), 32)
  .option('--max-concurrent-per-session <n>', 'agent calls one session may have in flight (429 above)', positive('--max-concurrent-per-session'), 64)
  .option('--allowed-host <name...>', 'on loopback, also answer requests addressed to these host names (port forwarders)', (process.env.ROLLGATE_ALLOWED_HOSTS ?? '').split(',').filter(Boolean))
  .option('--runtime <name>', 'where batch agents run unless a batch says: auto (bwrap on Linux when installed, else local) | bwrap | docker | local (unsandboxed)', runtimeChoice)
  .option('--store <url>', 'shared Postgres store (postgres://…; env ROLLGATE_STORE): run as a node of a cluster. Default: SQLite in the data folder', storeUrl, process.env.ROLLGATE_STORE || undefined)
  .option('--node-id <id>', 'with --store: this node\'s name in the cluster (env ROLLGATE_NODE_ID)', process.env.ROLLGATE_NODE_ID || undefined)
  .option('--advertise-url <url>', 'with --store: where other nodes and agents reach this node (default http://<host>:<port>)')
  .option('--concurrency <n>', 'with --store: batch samples this node runs at once from the shared queue', positive('--concurrency'), 4)
  .option('--open', 'open the UI in a browser once ready')
  .action(async (opts: ServeOptions) => {
    refuseTokenInEnv();
    const dataDir = opts.dataDir ? userPath(opts.dataDir) : defaultDataDir();
    const topology = opts.topology ? loadTopologyFile(userPath(opts.topology)) : null;
    const engines = topology?.engines ?? [];
    const runtime = defaultRuntime(opts.runtime, topology, opts.topology);
    // Off loopback the control API needs a token; it lives in a 0600 file, never in argv or the environment.
    const tokenFile = opts.controlTokenFile ? userPath(opts.controlTokenFile) : controlTokenPath(dataDir);
    const onLoopback = LOOPBACK_HOSTS.has(opts.host);
    const token = opts.controlTokenFile || !onLoopback ? ensureControlToken(tokenFile) : null;
    await ensureUiBuilt(DEFAULT_UI_DIR, resolve(DEFAULT_UI_DIR, '..'));
    const app = await createApp({
      host: opts.host, port: opts.port, dataDir, sim: opts.sim, simFamily: opts.simFamily, engines, controlToken: token?.token,
      engineTimeouts: { headersMs: opts.engineTimeout * 1000, bodyMs: opts.engineIdleTimeout * 1000 },
      bodyLimitBytes: Math.round(opts.maxBodyMb * 1024 * 1024),
      maxConcurrentPerSession: Math.max(1, Math.floor(opts.maxConcurrentPerSession)),
      allowedHosts: opts.allowedHost,
      rollouts: runtime ? { defaultRuntime: runtime } : undefined,
      ...(opts.store ? { store: opts.store, nodeId: opts.nodeId, advertiseUrl: opts.advertiseUrl, concurrency: Math.floor(opts.concurrency) } : {}),
    });
    onSignals(app.close);
    console.log(`Rollgate listening on ${app.url}${app.cluster ? ` as node ${app.cluster.nodeId} (advertised ${app.cluster.advertiseUrl}), store ${app.store.location}` : ''}`);
    if (token) {
      console.log(`The control API needs the token in ${tokenFile}${token.created ? ' (created now)' : ''}: send it as Authorization: Bearer <token>, or open ${app.url}/?token=<token> once in the browser.`);
    }
    if (opts.open) openInBrowser(app.url);
  });
}
