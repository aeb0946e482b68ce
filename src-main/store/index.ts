// Store entry point (DESIGN §2 store layer, §12): the asynchronous Store interface and the SQLite store, the
// desktop default. The Postgres store (many nodes) is opened from `postgres/`; `openStoreAt` picks by location.
export type * from './types.js';
export { openStore, sqliteDatabaseOf, DB_FILENAME, openSqliteDatabase, type OpenStoreOptions, type SqliteDatabase, type SqliteStore } from './sqlite/index.js';
export { CompletionsRepo, type CallIntent, type CompletionIterateFilter } from './completions.js';
export {
  BatchesRepo, SessionRunsRepo, type BatchRecord, type BatchPatch, type BatchStatus, type BatchCallbackState,
  type SessionRunRecord, type SessionRunPatch, type RunStatus, type RunOutcome, type EvaluatorVerdict,
} from './batches.js';
export { RescoresRepo, type RescoreRecord, type RescoreTraceRecord, type RescoreSummaryJson } from './rescores.js';
export { SessionsRepo, type SessionListFilter, type SessionPatch, type SessionSummary } from './sessions.js';
export { StoreUnavailableError, StoreWriter, type PutCompletionOptions, type WriterOptions, type WriterStats } from './writer.js';
export { MIGRATIONS, migrate, type Migration } from './migrations.js';
export { DataFolderBusyError, lockDataFolder, readFolderOwner, type FolderLock, type FolderOwner } from './folder-lock.js';
export { POLICY_VERSION_SETTING } from './settings.js';
export { int32ToBlob, blobToInt32, float32ToBlob, blobToFloat32 } from './token-blobs.js';
export { promptIdsOf } from './rows.js';
