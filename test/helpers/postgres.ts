// A private, throwaway PostgreSQL server for tests (issue 15): real Postgres from Debian's `postgresql`
// package (scripts/system-parts.mjs installs it on a fresh machine), never a shared or system instance.
//
//   const pg = await startPostgres();            // initdb + start on 127.0.0.1, a free port, trust auth
//   const url = await pg.createDatabase();       // a fresh database, e.g. one per test file
//   ... postgres://postgres@127.0.0.1:PORT/t_1 ...
//   await pg.stop();                             // stops the server and removes its data folder
//
// `testDatabase()` is the one-liner for a test file: a private server with one fresh database.
// The server listens on loopback only, its unix socket sits in its own temp folder, fsync is off (data
// lives only as long as the test). Postgres refuses to run as root, so as root the server runs as the
// `postgres` system user (runuser) and its temp folder belongs to that user.
import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export interface PostgresServer {
  port: number;
  /** The server's temp folder (data, socket, log); removed by stop(). */
  dir: string;
  /** URL of a database on this server (default: the `postgres` maintenance database). */
  url(database?: string): string;
  /** Creates a fresh empty database and returns its URL. */
  createDatabase(name?: string): Promise<string>;
  /** Stops the server (immediate shutdown) and removes its data folder. Safe to call twice. */
  stop(): Promise<void>;
}

/** The newest Debian PostgreSQL bin folder (/usr/lib/postgresql/<version>/bin), or null when none is installed. */
export function postgresBinDir(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl'))).sort((a, b) => Number(b) - Number(a));
  return versions.length ? join(root, versions[0], 'bin') : null;
}

/** A TCP port free on 127.0.0.1 right now (it can be taken before it is used: retry on EADDRINUSE). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

const isRoot = () => process.getuid?.() === 0;

/** Runs a Postgres tool, as the `postgres` user when this process is root. Throws with its output on failure. */
function runAsOwner(bin: string, args: string[], timeoutMs: number): string {
  const [cmd, argv] = isRoot() ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
  const r = spawnSync(cmd, argv, { encoding: 'utf8', timeout: timeoutMs, env: { ...process.env, LC_ALL: 'C.UTF-8', LANG: 'C.UTF-8' } });
  if (r.status !== 0) throw new Error(`${bin} ${args.join(' ')} failed (${r.error?.message ?? `exit ${r.status}`}): ${(r.stderr || r.stdout).trim().slice(-2000)}`);
  return r.stdout;
}

export async function startPostgres(): Promise<PostgresServer> {
  const bin = postgresBinDir();
  if (!bin) throw new Error('PostgreSQL is not installed: install the Debian package `postgresql` (npm test does it as root via scripts/system-parts.mjs)');
  const dir = mkdtempSync(join(tmpdir(), 'rollgate-pg-'));
  const data = join(dir, 'data');
  const sockets = join(dir, 'run');
  mkdirSync(sockets);
  if (isRoot()) {
    const owner = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    const group = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
    if (owner.status !== 0) { rmSync(dir, { recursive: true, force: true }); throw new Error('running as root needs the `postgres` system user (Debian package postgresql creates it)'); }
    for (const p of [dir, sockets]) chownSync(p, Number(owner.stdout), Number(group.stdout));
  }
  const log = join(dir, 'server.log');
  let started = false;
  const cleanup = () => {
    if (started) {
      try { runAsOwner(join(bin, 'pg_ctl'), ['stop', '-D', data, '-m', 'immediate', '-w', '-t', '30'], 40_000); } catch { /* already gone */ }
      started = false;
    }
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  };
  try {
    runAsOwner(join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync'], 120_000);
    let port = 0;
    // A free port can be taken between the probe and the server's bind: try a few.
    for (let attempt = 0; attempt < 5 && !started; attempt++) {
      port = await freePort();
      const opts = [
        `-c listen_addresses=127.0.0.1`, `-c port=${port}`, `-c unix_socket_directories=${sockets}`,
        '-c fsync=off', '-c synchronous_commit=off', '-c full_page_writes=off',
        '-c max_connections=300', '-c shared_buffers=32MB', '-c log_min_messages=warning',
      ].join(' ');
      try {
        runAsOwner(join(bin, 'pg_ctl'), ['start', '-D', data, '-l', log, '-w', '-t', '60', '-o', opts], 70_000);
        started = true;
      } catch (e) {
        if (attempt === 4) throw new Error(`${(e as Error).message}\n${existsSync(log) ? readFileSync(log, 'utf8').slice(-2000) : ''}`);
      }
    }
    const url = (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`;
    let counter = 0;
    return {
      port,
      dir,
      url,
      async createDatabase(name = `t_${process.pid}_${++counter}`) {
        if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`database name must be a plain lowercase identifier, got ${JSON.stringify(name)}`);
        const client = new pg.Client({ connectionString: url() });
        await client.connect();
        try { await client.query(`CREATE DATABASE ${name}`); } finally { await client.end(); }
        return url(name);
      },
      async stop() { cleanup(); },
    };
  } catch (e) {
    cleanup();
    throw e;
  }
}

/** A private server with one fresh database: the usual set-up of a Postgres test file. */
export async function testDatabase(): Promise<{ url: string; server: PostgresServer; stop: () => Promise<void> }> {
  const server = await startPostgres();
  try {
    const url = await server.createDatabase();
    return { url, server, stop: () => server.stop() };
  } catch (e) {
    await server.stop();
    throw e;
  }
}
