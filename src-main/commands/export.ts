// `rollgate export`: streams training JSONL from the data folder (DESIGN §8, §11). Works on the SQLite
// file directly (no server needed; a running server may keep writing meanwhile: WAL + a read cursor).
import { once } from 'node:events';
import { createWriteStream, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { InvalidArgumentError, type Command } from 'commander';
import { SIM_FLAVORS, simEngineConfig } from '../app.js';
import { chunked, EXPORT_FORMATS, exportLines, exportScopeError, parseStatuses, type ExportSource, newProgress, writeChunks, type ExportFormat, type ExportOptions, type ExportProgress } from '../api/export.js';
import { PRESETS, type PresetName } from '../core/export/presets/index.js';
import { BUILDERS } from '../core/trajectory/index.js';
import type { SessionStatus } from '../core/types.js';
import type { BuilderName } from '../core/trajectory/types.js';
import { defaultDataDir } from '../data-dir.js';
import { EngineTokenTexts } from '../engines/token-text.js';
import { runVerify, verifySummary } from './export-verify.js';
import { loadTopology, parseEngineConfig } from '../engines/topology.js';
import { userPath } from './options.js';
import { DB_FILENAME, openStore } from '../store/index.js';

export interface ExportCommandOptions {
  batch?: string;
  engine?: string;
  session?: string;
  format: ExportFormat;
  builder: BuilderName;
  minReward?: number;
  maxReward?: number;
  messages?: boolean;
  includeMasked?: boolean;
  out?: string;
  dataDir?: string;
  topology?: string;
  preset?: PresetName;
  status?: SessionStatus[];
  hasReward?: boolean;
  progress?: boolean;
}

function oneOf<T extends string>(name: string, allowed: readonly T[]) {
  return (v: string): T => {
    if (!(allowed as readonly string[]).includes(v)) throw new InvalidArgumentError(`${name} must be one of ${allowed.join(', ')}`);
    return v as T;
  };
}

function statusList(v: string): SessionStatus[] {
  try { return parseStatuses(v); } catch (e) { throw new InvalidArgumentError((e as Error).message); }
}

function finite(v: string): number {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError('must be a number');
  return n;
}

function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

function progressLine(p: ExportProgress, includeMasked = false): string {
  const extra = [p.skippedSessions ? `${p.skippedSessions} sessions not finished (--status to include them)` : '',
    p.filtered ? `${p.filtered} outside the reward filters` : '', p.noConversation ? `${p.noConversation} without a conversation` : '',
    p.folded ? `${p.folded} folded into longer conversations` : '',
    p.masked && !includeMasked ? `${p.masked} masked (${Object.entries(p.maskReasons).map(([k, n]) => `${k} ${n}`).join(', ')}; --include-masked keeps them)` : '']
    .filter(Boolean).join(', ');
  const kept = p.masked && includeMasked ? `, ${p.masked} of them masked` : '';
  return `exported ${p.rows} traces from ${p.sessions} sessions (${p.completions} completions, ${mb(p.bytes)}${kept})${extra ? `; skipped ${extra}` : ''}`;
}

/** The data folder's store and what the export pipeline reads from it (engines' tokenizers included). */
export async function openExportSource(opts: Pick<ExportCommandOptions, 'dataDir' | 'topology' | 'engine'>): Promise<{ store: ReturnType<typeof openStore>; source: ExportSource }> {
  const dataDir = opts.dataDir ? userPath(opts.dataDir) : resolve(defaultDataDir());
  if (!existsSync(join(dataDir, DB_FILENAME))) throw new Error(`no Rollgate data in ${dataDir} (expected ${DB_FILENAME}); pass --data-dir`);
  const store = openStore({ dataDir });
  const engines = [...SIM_FLAVORS.map((f) => simEngineConfig(f, '')), ...(opts.topology ? loadTopology(userPath(opts.topology)) : []),
    ...(await store.engines.list()).flatMap((e) => { try { return [parseEngineConfig(e.config)]; } catch { return []; } })];
  const tokenTexts = new EngineTokenTexts();
  await tokenTexts.load(opts.engine ? engines.filter((e) => e.id === opts.engine) : engines);
  return { store, source: { sessions: store.sessions, batches: store.batches, completions: store.completions, tokenTexts } };
}

/** Runs an export; resolves with the final counts. Writes to `opts.out`, else to `stdout`. */
export async function runExport(opts: ExportCommandOptions, io: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream } = process): Promise<ExportProgress> {
  if (opts.minReward !== undefined && opts.maxReward !== undefined && opts.minReward > opts.maxReward) {
    throw new Error('--min-reward is greater than --max-reward');
  }
  const { store, source } = await openExportSource(opts);
  const progress = newProgress();
  const exportOpts: ExportOptions = {
    format: opts.format, builder: opts.builder, batchId: opts.batch, engineId: opts.engine, sessionId: opts.session,
    minReward: opts.minReward, maxReward: opts.maxReward, messages: opts.messages,
    includeMasked: opts.includeMasked, preset: opts.preset, statuses: opts.status, hasReward: opts.hasReward,
  };
  const scope = await exportScopeError(source, exportOpts);
  if (scope) {
    await store.close();
    throw new Error(scope);
  }
  const toFile = opts.out !== undefined && opts.out !== '-';
  const showProgress = toFile && opts.progress !== false;
  let lastShown = 0;
  const show = (final: boolean) => {
    const now = Date.now();
    if (!final && now - lastShown < 250) return;
    lastShown = now;
    io.stderr.write(`\r${progressLine(progress, opts.includeMasked)}${final ? '\n' : ''}`);
  };
  try {
    const chunks = chunked(exportLines(source, exportOpts, progress));
    if (toFile) {
      const file = createWriteStream(userPath(opts.out!));
      try {
        await once(file, 'open');
        await writeChunks(chunks, file, showProgress ? () => show(false) : undefined);
      } finally {
        file.end();
        await finished(file).catch(() => undefined);
      }
      if (showProgress) show(true);
      else if (progress.masked && !opts.includeMasked) io.stderr.write(`${progressLine(progress)}\n`);
    } else {
      try {
        await writeChunks(chunks, io.stdout as Writable);
      } catch (e) {
        // The reader went away (`rollgate export | head`): stop quietly, like other Unix tools.
        if ((e as NodeJS.ErrnoException).code !== 'EPIPE') throw e;
      }
      // Masked traces are never dropped silently: stdout holds the rows, stderr says what was left out.
      if (progress.masked && !opts.includeMasked) io.stderr.write(`${progressLine(progress)}\n`);
    }
  } finally {
    await store.close();
  }
  if (progress.error) throw new Error(progress.error);
  return progress;
}

export function registerExport(program: Command): void {
  program.command('export')
  .description('stream training traces as JSONL (train or SFT format) from the data folder')
  .option('--batch <id>', 'only sessions of this batch')
  .option('--engine <id>', 'only completions served by this engine')
  .option('--session <id>', 'only this session')
  .option('--format <format>', `row format: ${EXPORT_FORMATS.join(' | ')}`, oneOf('--format', EXPORT_FORMATS), 'train')
  .option('--preset <trainer>', `a trainer's row shape: ${PRESETS.join(' | ')}`, oneOf('--preset', PRESETS))
  .option('--status <list>', `session statuses to export, comma-separated, or all (default: finished)`, statusList)
  .option('--has-reward', 'only traces with a reward')
  .option('--builder <builder>', `trace builder: ${BUILDERS.join(' | ')}`, oneOf('--builder', BUILDERS), 'prefix-merge')
  .option('--min-reward <r>', 'only traces with reward ≥ r', finite)
  .option('--max-reward <r>', 'only traces with reward ≤ r', finite)
  .option('--messages', 'train format: include the conversation as messages')
  .option('--include-masked', 'keep traces masked by custody (incomplete calls); left out by default')
  .option('--out <file>', 'write to FILE (default: stdout)')
  .option('--no-progress', 'no progress line on stderr when writing to a file')
  .option('--data-dir <dir>', 'data folder (default: $ROLLGATE_DATA_DIR, else the app-data folder)')
  .option('--topology <file>', 'YAML file describing engines (their tokenizers read chat-mode traces)')
  .option('--verify <file>', 're-check an exported train-format file: each row\'s digest, and the row against the store')
  .action(async (opts: ExportCommandOptions & { verify?: string }) => {
    if (opts.verify === undefined) {
      await runExport(opts);
      return;
    }
    const r = await runVerify(userPath(opts.verify), opts);
    process.stderr.write(`${verifySummary(r)}\n`);
    if (r.problems.length) process.exitCode = 1;
  });
}
