// The SQLite database behind the desktop store: opens the file (WAL, private modes, migrations) and builds the
// synchronous repositories and the single group-commit writer. `index.ts` wraps it in the asynchronous Store.
import { chmodSync, closeSync, existsSync, openSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { BatchesRepo, SessionRunsRepo } from '../batches.js';
import { EnginesRepo } from '../engine-configs.js';
import { ensurePrivateFolder } from '../folder-lock.js';
import { SettingsRepo } from '../settings.js';
import { CompletionsRepo } from '../completions.js';
import { migrate } from '../migrations.js';
import { BatchSlicesRepo } from '../batch-slices.js';
import { RescoresRepo } from '../rescores.js';
import { SessionsRepo } from '../sessions.js';
import { StoreWriter, type WriterOptions } from '../writer.js';

export const DB_FILENAME = 'rollgate.sqlite';
const BUSY_TIMEOUT_MS = 5000;

export interface OpenStoreOptions extends WriterOptions {
  dataDir: string;
}

export interface SqliteDatabase {
  /** Absolute path of the SQLite file. */
  readonly path: string;
  /** The write connection (for diagnostics and tests; go through the repositories and the writer). */
  readonly db: Database.Database;
  readonly sessions: SessionsRepo;
  readonly completions: CompletionsRepo;
  /** Rollout batches (written synchronously: a few writes per batch). */
  readonly batches: BatchesRepo;
  /** One agent run per rollout session: captured output and the evaluator's verdict. */
  readonly runs: SessionRunsRepo;
  /** Engines added or edited through the control API (validated again by the engines layer on load). */
  readonly engines: EnginesRepo<{ id: string }>;
  /** Named values that survive restarts (the policy version). */
  readonly settings: SettingsRepo;
  /** Parts of a batch (some tasks' sessions, verdicts without output) for live views. */
  readonly slices: BatchSlicesRepo;
  /** Stored cross-engine re-scoring results (DESIGN §8). */
  readonly rescores: RescoresRepo;
  readonly writer: StoreWriter;
  /** Flushes the writer, then closes the database. Idempotent. */
  close(): Promise<void>;
}

function configure(db: Database.Database): void {
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
}

/**
 * The database and its WAL and shared-memory files are readable by this user only (0600). SQLite gives the -wal
 * and -shm files it creates the main file's mode, so creating that one private first covers them too.
 */
function makePrivateFiles(path: string): void {
  if (!existsSync(path)) closeSync(openSync(path, 'a', 0o600));
  for (const f of [path, `${path}-wal`, `${path}-shm`]) if (existsSync(f)) chmodSync(f, 0o600);
}

export function openSqliteDatabase(opts: OpenStoreOptions): SqliteDatabase {
  ensurePrivateFolder(opts.dataDir);
  const path = join(opts.dataDir, DB_FILENAME);
  makePrivateFiles(path);
  const db = new Database(path);
  try {
    configure(db);
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    if (String(mode).toLowerCase() !== 'wal') throw new Error(`could not enable WAL (journal_mode=${mode})`);
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    // Freed pages are zeroed: removed content (the plaintext session keys migration 4 drops) leaves no trace.
    db.pragma('secure_delete = ON');
    const applied = migrate(db);
    // ...and no old page image stays behind in the WAL either.
    if (applied.includes(4)) db.pragma('wal_checkpoint(TRUNCATE)');
    // Converting to delta storage (7) freed most of the completions' pages: give them back to the disk.
    if (applied.includes(7) && (db.prepare('SELECT COUNT(*) FROM completions').pluck().get() as number) > 0) db.exec('VACUUM');
  } catch (e) {
    db.close();
    throw e;
  }

  const openReader = (): Database.Database => {
    const r = new Database(path, { readonly: true, fileMustExist: true });
    configure(r);
    return r;
  };

  const sessions = new SessionsRepo(db);
  const completions = new CompletionsRepo(db, openReader);
  const batches = new BatchesRepo(db);
  const engines = new EnginesRepo<{ id: string }>(db);
  const runs = new SessionRunsRepo(db);
  const settings = new SettingsRepo(db);
  const rescores = new RescoresRepo(db);
  const slices = new BatchSlicesRepo(db);
  const writer = new StoreWriter(db, sessions, completions, opts);
  completions.pending = writer;

  let closing: Promise<void> | null = null;
  return {
    path,
    db,
    sessions,
    completions,
    batches,
    engines,
    settings,
    rescores,
    slices,
    runs,
    writer,
    close() {
      closing ??= (async () => {
        await writer.close();
        db.close();
      })();
      return closing;
    },
  };
}
