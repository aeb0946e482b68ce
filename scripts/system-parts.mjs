// System parts the sandbox and Postgres tests need on a fresh machine (issues 11, 15): bubblewrap, PostgreSQL, a Docker daemon.
// Reusable by any test set-up (scripts/test.mjs calls it before the test steps):
//
//   import { ensureSystemParts } from './system-parts.mjs';
//   const parts = await ensureSystemParts();   // installs what is missing (root + apt-get), starts dockerd
//   ... process.env.DOCKER_HOST now points at a daemon that answers; children inherit it ...
//   await parts.stop();                         // stops the dockerd it started (nothing else)
//
// - bubblewrap, patch, git: apt-get install what is missing (root only; otherwise a hint).
// - PostgreSQL (issue 15): Debian's `postgresql` when /usr/lib/postgresql/*/bin/pg_ctl is missing (root only).
//   Nothing is started here: each Postgres test starts its own private server (test/helpers/postgres.ts).
// - Docker: an answering DOCKER_HOST (or /var/run/docker.sock) is used as it is. Otherwise docker.io is
//   installed when `dockerd` is missing, and a private dockerd is started on its own socket with its own
//   data-root and exec-root under a temp folder (no bridge, no iptables: tests run containers with
//   --network none), and DOCKER_HOST is exported for this process and its children.
// `node scripts/system-parts.mjs` checks and prints what it found (and leaves a started dockerd running
// until Ctrl-C).
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const isRoot = () => process.getuid?.() === 0;

function onPath(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

function aptInstall(pkgs, log) {
  log(`installing ${pkgs.join(', ')} (apt-get)…`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  const r = spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...pkgs], { stdio: 'inherit', env });
  return r.status === 0;
}

/** GET /_ping on a Docker socket URL (unix:///path); resolves true when the daemon answers OK. */
export function pingDocker(host, timeoutMs = 3000) {
  if (!host?.startsWith('unix://')) return Promise.resolve(false);
  return new Promise((resolve) => {
    const req = request({ socketPath: host.slice('unix://'.length), path: '/_ping', timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => { req.destroy(); resolve(false); });
    req.end();
  });
}

/** Commands the sandbox and container-task tests need, by the Debian package that ships them. */
const COMMANDS = { bwrap: 'bubblewrap', patch: 'patch', git: 'git' };

/** Installs the missing ones in one apt-get call (the test base image copies patch and git from the host). */
function ensureCommands(log) {
  if (process.platform !== 'linux') return onPath('bwrap');
  const missing = Object.entries(COMMANDS).filter(([cmd]) => !onPath(cmd)).map(([, pkg]) => pkg);
  if (missing.length && !isRoot()) log(`missing and not root: install the Debian packages ${missing.join(', ')} for the sandbox tests`);
  else if (missing.length) aptInstall(missing, log);
  return onPath('bwrap');
}

const PG_ROOT = '/usr/lib/postgresql';
const hasPostgres = () => existsSync(PG_ROOT) && readdirSync(PG_ROOT).some((v) => existsSync(join(PG_ROOT, v, 'bin', 'pg_ctl')));

/** Debian's PostgreSQL server binaries for the Postgres store and cluster tests (they start their own servers). */
function ensurePostgres(log) {
  if (process.platform !== 'linux' || hasPostgres()) return hasPostgres();
  if (!isRoot()) { log('PostgreSQL missing and not root: install the Debian package postgresql for the Postgres tests'); return false; }
  aptInstall(['postgresql'], log);
  return hasPostgres();
}

async function startDockerd(log) {
  const dir = mkdtempSync(join(tmpdir(), 'rollgate-dockerd-'));
  const host = `unix://${join(dir, 'docker.sock')}`;
  const logPath = join(dir, 'dockerd.log');
  const logFd = openSync(logPath, 'a');
  const child = spawn('dockerd', [
    '--host', host, '--data-root', join(dir, 'data'), '--exec-root', join(dir, 'exec'), '--pidfile', join(dir, 'docker.pid'),
    '--bridge', 'none', '--iptables=false', '--ip6tables=false',
  ], { stdio: ['ignore', logFd, logFd], detached: false });
  closeSync(logFd);
  // dockerd logs to a file, never a pipe: npm test blocks its event loop in spawnSync while the tests run,
  // so a pipe would fill, dockerd would block on its next log line and containers would never be reaped.
  const logTail = () => { try { return readFileSync(logPath, 'utf8').slice(-4000); } catch { return ''; } };
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    if (await pingDocker(host, 1000)) {
      log(`dockerd started (pid ${child.pid}) at ${host}`);
      return {
        host,
        started: true,
        async stop() {
          if (child.exitCode === null) {
            child.kill('SIGTERM');
            await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
            if (child.exitCode === null) { child.kill('SIGKILL'); await exited; }
          }
          rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
        },
      };
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  if (child.exitCode === null) child.kill('SIGKILL');
  const tail = logTail();
  rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  throw new Error(`dockerd did not start: ${tail.trim().split('\n').slice(-5).join('\n')}`);
}

async function ensureDocker(log) {
  for (const host of [process.env.DOCKER_HOST, 'unix:///var/run/docker.sock']) {
    if (host && await pingDocker(host)) {
      process.env.DOCKER_HOST = host;
      return { host, started: false, stop: async () => undefined };
    }
  }
  if (process.platform !== 'linux') { log('no Docker daemon answers; start Docker (or Podman) and set DOCKER_HOST'); return null; }
  if (!onPath('dockerd')) {
    if (!isRoot()) { log('dockerd is missing and this is not root: install docker.io (or point DOCKER_HOST at Docker/Podman)'); return null; }
    if (!aptInstall(['docker.io'], log) || !onPath('dockerd')) return null;
  }
  if (!isRoot()) { log('no Docker daemon answers and starting dockerd needs root: point DOCKER_HOST at Docker or Podman'); return null; }
  const started = await startDockerd(log);
  process.env.DOCKER_HOST = started.host;
  return started;
}

/** Makes bwrap, PostgreSQL's binaries and a Docker daemon available (see the top of this file). Never throws for a missing part. */
export async function ensureSystemParts({ log = (m) => console.log(`system parts: ${m}`) } = {}) {
  const bwrap = ensureCommands(log);
  const postgres = ensurePostgres(log);
  let docker = null;
  try {
    docker = await ensureDocker(log);
  } catch (e) {
    log(e.message);
  }
  return {
    bwrap,
    postgres,
    dockerHost: docker?.host ?? null,
    /** Whether this call started a private dockerd (stop() ends it). */
    startedDockerd: docker?.started ?? false,
    stop: async () => { await docker?.stop(); },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const parts = await ensureSystemParts();
  console.log(JSON.stringify({ bwrap: parts.bwrap, postgres: parts.postgres, dockerHost: parts.dockerHost, startedDockerd: parts.startedDockerd }));
  if (parts.startedDockerd) {
    console.log('the private dockerd runs until Ctrl-C');
    const stop = async () => { await parts.stop(); process.exit(0); };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  }
}
