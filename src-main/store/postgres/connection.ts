// The Postgres connection pool of one Rollgate node: its own type parsers (never pg's process-wide ones), the
// URL as humans may see it (no password), and the one place a lost connection becomes StoreUnavailableError.
import pg from 'pg';
import { StoreUnavailableError } from '../writer.js';

/** The values node-postgres passes to a query. */
export type SqlValues = unknown[];

/** Something that runs SQL: the pool, or one client inside a transaction. */
export interface Queryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: SqlValues): Promise<pg.QueryResult<R>>;
}

const INT8_OID = 20;

/**
 * BIGINT (ms timestamps, COUNT, SUM of integers) as a JS number, like SQLite gives it. Every value the store
 * keeps there is far below 2^53; only this pool's connections parse this way.
 */
const TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: string) => {
    if (oid === INT8_OID && format !== 'binary') return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format as 'text');
  }) as pg.CustomTypesConfig['getTypeParser'],
};

/** `postgres://user:secret@host/db?password=x` → `postgres://user@host/db`: safe to log and show. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    u.password = '';
    for (const k of [...u.searchParams.keys()]) if (/pass|secret|token|key/i.test(k)) u.searchParams.delete(k);
    return u.toString();
  } catch {
    return 'postgres (connection string not shown)';
  }
}

/** The server went away or cannot be reached (as opposed to a statement the server refused). */
export function isConnectionError(e: unknown): boolean {
  const err = e as { code?: unknown; message?: unknown };
  const code = typeof err?.code === 'string' ? err.code : '';
  // 08xxx connection exceptions, 57P0x admin/crash shutdown, 53300 too many connections; socket-level codes.
  if (/^(08|57P0|53300)/.test(code) || /^E(CONNREFUSED|CONNRESET|PIPE|HOSTUNREACH|NETUNREACH|TIMEDOUT|AI_AGAIN)$|^ENOTFOUND$/.test(code)) return true;
  const msg = typeof err?.message === 'string' ? err.message : '';
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended unexpectedly/i.test(msg);
}

/** StoreUnavailableError as Postgres means it: the server could not be reached, not a lock held elsewhere. */
export class PostgresUnavailableError extends StoreUnavailableError {
  constructor(retryAfterSec: number, cause: unknown, location: string) {
    super(retryAfterSec, cause);
    this.message = `the store is unavailable (Postgres at ${location}: ${(cause as Error)?.message ?? cause}); retry in ${retryAfterSec} s`;
  }
}

/**
 * Postgres TEXT cannot hold U+0000, which an agent's captured output may contain (SQLite keeps it): it is stored
 * as U+FFFD instead of failing the write.
 */
function textSafe(values: SqlValues | undefined): SqlValues | undefined {
  if (!values) return values;
  let out: SqlValues | undefined;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (typeof v === 'string' && v.includes('\u0000')) (out ??= values.slice())[i] = v.replaceAll('\u0000', '\uFFFD');
  }
  return out ?? values;
}

export interface Connection {
  readonly pool: pg.Pool;
  readonly location: string;
  /** One statement on any pooled connection; a lost server rejects with StoreUnavailableError. */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: SqlValues): Promise<pg.QueryResult<R>>;
  /**
   * BEGIN … COMMIT on one pooled client (ROLLBACK when `fn` throws). `lockTimeoutMs`: a row or table lock held
   * elsewhere for longer fails the transaction as unavailable instead of waiting on.
   */
  transaction<T>(fn: (client: Queryable) => Promise<T>, opts?: { lockTimeoutMs?: number }): Promise<T>;
  /** Maps a connection-level failure to StoreUnavailableError; anything else is returned as is. */
  unavailable(e: unknown): unknown;
  close(): Promise<void>;
}

export interface ConnectionOptions {
  url: string;
  /** Pooled connections (the writer uses one at a time, each modify() and iterateAll one). Default 10. */
  poolSize?: number;
  /** How long connecting may take, and the Retry-After given when the server is gone. Default 2000 ms. */
  unavailableAfterMs?: number;
}

export function connect(opts: ConnectionOptions): Connection {
  const location = redactUrl(opts.url);
  const waitMs = Math.max(100, opts.unavailableAfterMs ?? 2000);
  const retryAfterSec = Math.max(1, Math.ceil(waitMs / 1000));
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: Math.max(2, opts.poolSize ?? 10),
    connectionTimeoutMillis: waitMs,
    types: TYPES,
    application_name: 'rollgate',
  });
  // A client that loses its server emits 'error' (idle ones through the pool); without a listener that would
  // end the process. The query in flight rejects on its own, which is where the loss is handled.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  // A lock wait that ran out (55P03, the writer's lock_timeout) is unavailability too: trying later helps.
  const unavailable = (e: unknown): unknown =>
    (isConnectionError(e) || (e as { code?: unknown })?.code === '55P03' ? new PostgresUnavailableError(retryAfterSec, e, location) : e);
  const wrap = (client: pg.PoolClient): Queryable => ({
    query: (text, values) => client.query(text, textSafe(values)),
  });
  return {
    pool,
    location,
    unavailable,
    async query(text, values) {
      try {
        return await pool.query(text, textSafe(values));
      } catch (e) {
        throw unavailable(e);
      }
    },
    async transaction(fn, opts = {}) {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (e) {
        throw unavailable(e);
      }
      let broken: unknown;
      try {
        await client.query('BEGIN');
        if (opts.lockTimeoutMs !== undefined) await client.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.round(opts.lockTimeoutMs))}`);
        const out = await fn(wrap(client));
        await client.query('COMMIT');
        return out;
      } catch (e) {
        if (isConnectionError(e)) broken = e;
        else await client.query('ROLLBACK').catch((r: unknown) => { broken = r; });
        throw unavailable(e);
      } finally {
        client.release(broken !== undefined);
      }
    },
    async close() {
      await pool.end();
    },
  };
}
