// Store-level tests run against both stores (issue 15): `forEachStore((fx) => { it(...) })` declares the tests
// once per store — SQLite in a temp folder, Postgres as a fresh database on this file's private test server
// (test/helpers/postgres.ts, started only when a Postgres test runs). Stores a test opens are closed after it.
//
//   forEachStore((fx) => {
//     it('…', async () => {
//       const store = await fx.open();              // fresh and empty
//       const again = await fx.reopen();            // same data: a restart, or a second node on Postgres
//       await fx.sql('SELECT parent_id FROM completions');  // plain SQL both dialects read alike
//     });
//   });
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, Socket, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, afterEach, describe } from 'vitest';
import type { CompletionRecord, NewSession } from '../../src-main/core/types.js';
import { openStore, type Store, type WriterOptions } from '../../src-main/store/index.js';
import { openPostgresStore } from '../../src-main/store/postgres/index.js';
import { startPostgres, type PostgresServer } from './postgres.js';

export type StoreKind = 'sqlite' | 'postgres';

export interface FixtureOptions extends WriterOptions {
  /** Postgres: the node opening the store (SQLite ignores it: one process owns the file). */
  nodeId?: string;
}

export interface StoreFixture {
  readonly kind: StoreKind;
  /** A fresh, empty store. */
  open(opts?: FixtureOptions): Promise<Store>;
  /** Another store over the data of the last fresh one. */
  reopen(opts?: FixtureOptions): Promise<Store>;
  /** Plain SQL (no parameters) on the last fresh store's data, on a connection of its own. */
  sql<T = Record<string, unknown>>(text: string): Promise<T[]>;
  /**
   * Makes the last fresh store unable to write — SQLite: another connection holds the write lock; Postgres: the
   * server cannot be reached (its connections go through a proxy that is cut). Resolves to the undo.
   */
  cutOff(): Promise<() => Promise<void>>;
}

/** A TCP relay to the test server that can be cut (connections dropped, new ones refused) and restored. */
export class CuttableProxy {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  port = 0;
  constructor(private readonly target: number) {}

  async listen(port = 0): Promise<void> {
    this.server = createServer((client) => {
      const upstream = new Socket();
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => s.destroy());
      }
      upstream.connect(this.target, '127.0.0.1');
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  async cut(): Promise<void> {
    const s = this.server;
    this.server = null;
    for (const sock of this.sockets) sock.destroy();
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  async close(): Promise<void> {
    await this.cut();
  }
}

export function forEachStore(body: (fx: StoreFixture) => void): void {
  describe.each(['sqlite', 'postgres'] as const)('%s store', (kind) => {
    let server: PostgresServer | null = null;
    const opened: Store[] = [];
    const cleanups: Array<() => Promise<void> | void> = [];
    let current: { dir?: string; url?: string; proxy?: CuttableProxy } = {};

    const openAt = async (opts: FixtureOptions = {}): Promise<Store> => {
      const { nodeId, ...writer } = opts;
      let store: Store;
      if (kind === 'sqlite') store = openStore({ dataDir: current.dir!, ...writer });
      else {
        const url = current.proxy ? current.url!.replace(`:${server!.port}/`, `:${current.proxy.port}/`) : current.url!;
        store = await openPostgresStore({ url, nodeId, ...writer });
      }
      opened.push(store);
      return store;
    };

    const fx: StoreFixture = {
      kind,
      async open(opts) {
        if (kind === 'sqlite') {
          const dir = mkdtempSync(join(tmpdir(), 'rollgate-store-fx-'));
          cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
          current = { dir };
        } else {
          server ??= await startPostgres();
          const proxy = new CuttableProxy(server.port);
          await proxy.listen();
          cleanups.push(() => proxy.close());
          current = { url: await server.createDatabase(), proxy };
        }
        return openAt(opts);
      },
      reopen: (opts) => openAt(opts),
      async sql<T>(text: string) {
        if (kind === 'sqlite') {
          const db = new Database(join(current.dir!, 'rollgate.sqlite'));
          try {
            const stmt = db.prepare(text);
            return (stmt.reader ? stmt.all() : (stmt.run(), [])) as T[];
          } finally {
            db.close();
          }
        }
        const client = new pg.Client({ connectionString: current.url });
        await client.connect();
        try {
          return (await client.query(text)).rows as T[];
        } finally {
          await client.end();
        }
      },
      async cutOff() {
        if (kind === 'sqlite') {
          const db = new Database(join(current.dir!, 'rollgate.sqlite'));
          db.exec('BEGIN IMMEDIATE');
          return async () => {
            db.exec('ROLLBACK');
            db.close();
          };
        }
        const proxy = current.proxy!;
        const port = proxy.port;
        await proxy.cut();
        return () => proxy.listen(port);
      },
    };

    afterEach(async () => {
      for (const s of opened.splice(0)) await s.close().catch(() => undefined);
      for (const c of cleanups.splice(0).reverse()) await c();
    });
    afterAll(async () => {
      await server?.stop();
      server = null;
    });

    body(fx);
  });
}

// ---- records for store tests ----

let counter = 0;
const uid = (p: string) => `${p}_${process.pid}_${++counter}_${Math.random().toString(36).slice(2, 8)}`;

/** A session as the gateway creates it (random id and key). */
export function newSession(over: Partial<NewSession> = {}): NewSession {
  return {
    id: uid('ses'), key: uid('key'), engineId: 'sim-vllm', harness: 'builtin', taskId: 't1', batchId: null,
    metadata: { note: 'ü', n: 1 }, status: 'active', reward: null, createdAt: Date.now(), finishedAt: null, ...over,
  };
}

/** A completion with `n` prompt and output ids, distinct per seq. */
export function newCompletion(sessionId: string, seq: number, n = 8, over: Partial<CompletionRecord> = {}): CompletionRecord {
  return {
    id: uid('cmp'), sessionId, seq, dialect: 'openai-chat', engineId: 'sim-vllm', replica: 'http://127.0.0.1:1', policyVersion: 3,
    requestReceived: { model: 'm', messages: [{ role: 'user', content: 'hi' }] },
    requestServed: { model: 'm', logprobs: true },
    response: {
      id: 'r', model: 'm', created: 1, message: { role: 'assistant', content: 'ok', reasoning: null, tool_calls: [] }, finish_reason: 'stop',
      usage: { prompt_tokens: n, completion_tokens: n, total_tokens: 2 * n },
    },
    finishReason: 'stop', usage: { prompt_tokens: n, completion_tokens: n, total_tokens: 2 * n },
    timings: { queueMs: 1, ttftMs: 2.5, totalMs: 10 }, status: 'ok', error: null, retryOf: null, createdAt: Date.now(),
    promptIds: Int32Array.from({ length: n }, (_, i) => i + seq * 1000),
    outputIds: Int32Array.from({ length: n }, (_, i) => 151_000 + i),
    outputLogprobs: Float32Array.from({ length: n }, (_, i) => -i / 7),
    ...over,
  };
}

const b64 = (a: Int32Array | Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('base64');
/** A record as JSON would carry it, token arrays as their bytes: equal here = byte-identical. */
export const plain = (c: CompletionRecord): unknown => JSON.parse(JSON.stringify({ ...c, promptIds: b64(c.promptIds), outputIds: b64(c.outputIds), outputLogprobs: b64(c.outputLogprobs) }));
