// One writer per data folder (issue 18): `serve`, `eval` and the desktop app hold an exclusive SQLite lock on
// <dataDir>/rollgate.lock for as long as they run. The kernel drops the lock when the process dies, however it
// dies, so a crashed server never leaves a stale lock behind and a restart needs no pid guessing. Who holds
// the folder (pid, command, URL) is written next to it in owner.json: a second writer is refused with that,
// and `rollgate eval` uses the URL to submit to the running server instead.
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';

export const LOCK_FILENAME = 'rollgate.lock';
export const OWNER_FILENAME = 'owner.json';

export interface FolderOwner {
  pid: number;
  /** What holds the folder: `rollgate serve`, `rollgate eval`, `Rollgate desktop`. */
  command: string;
  /** Where its control API answers; null until it listens. */
  url: string | null;
  startedAt: number;
}

export class DataFolderBusyError extends Error {
  constructor(readonly dataDir: string, readonly owner: FolderOwner | null) {
    const who = owner
      ? `${owner.command} (pid ${owner.pid}${owner.url ? `, ${owner.url}` : ''}, since ${new Date(owner.startedAt).toISOString()})`
      : 'another Rollgate process';
    super(`data folder ${dataDir} is in use by ${who}; stop it first, or pass --data-dir to use another folder`);
  }
}

export interface FolderLock {
  /** Records the URL the holder answers on, for `rollgate eval` and for the refusal message. */
  setUrl(url: string): void;
  /** Drops the lock (idempotent). */
  release(): void;
}

/** Creates the data folder if needed and makes it private to this user (0700). */
export function ensurePrivateFolder(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
}

/** Takes the folder's exclusive lock, or throws DataFolderBusyError naming the process that holds it. */
export function lockDataFolder(dataDir: string, command: string): FolderLock {
  ensurePrivateFolder(dataDir);
  const path = join(dataDir, LOCK_FILENAME);
  const db = new Database(path, { timeout: 0 });
  try {
    chmodSync(path, 0o600);
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
  } catch (e) {
    db.close();
    if ((e as { code?: string }).code?.startsWith('SQLITE_BUSY')) throw new DataFolderBusyError(dataDir, readFolderOwner(dataDir));
    throw e;
  }
  const owner: FolderOwner = { pid: process.pid, command, url: null, startedAt: Date.now() };
  const ownerPath = join(dataDir, OWNER_FILENAME);
  const write = () => writeFileSync(ownerPath, `${JSON.stringify(owner)}\n`, { mode: 0o600 });
  write();
  let held = true;
  return {
    setUrl(url) {
      owner.url = url;
      if (held) write();
    },
    release() {
      if (!held) return;
      held = false;
      if (readFolderOwner(dataDir)?.pid === process.pid) rmSync(ownerPath, { force: true });
      db.close();
    },
  };
}

/** Who last took the folder's lock (meaningful only while the lock is held), or null. */
export function readFolderOwner(dataDir: string): FolderOwner | null {
  try {
    const o = JSON.parse(readFileSync(join(dataDir, OWNER_FILENAME), 'utf8')) as Partial<FolderOwner>;
    if (typeof o.pid !== 'number' || typeof o.command !== 'string') return null;
    return { pid: o.pid, command: o.command, url: typeof o.url === 'string' ? o.url : null, startedAt: Number(o.startedAt) || 0 };
  } catch {
    return null;
  }
}
