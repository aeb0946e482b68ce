// The rollout manager (DESIGN §7): batches = tasks × harness × engine × n samples, run with a
// concurrency limit. Each sample is a session (group id `${batchId}:${taskId}`, `sampleIndex` in its
// metadata) run by the local runtime, scored by its evaluator, finished through the store writer.
// Progress goes to the event bus; the result goes to the optional callbackUrl. After a crash, the next
// start marks running batches `interrupted` (sessions are already marked by the store) and kills
// leftover agent process groups it can prove are its own.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { z } from 'zod';
import { CREDIT_POLICIES, type CreditPolicy } from '../core/export/credit.js';
import { withTraceRewards } from '../core/export/session-traces.js';
import type { SessionRecord } from '../core/types.js';
import type { EnginePool } from '../engines/pool.js';
import type { EventBus } from '../api/events.js';
import { newSession, sessionUrls } from '../api/sessions.js';
import type { BatchRecord, BatchStatus, EvaluatorVerdict, Store } from '../store/index.js';
import { deliverCallback } from './callback.js';
import { evaluate, evaluatorFor } from './evaluators.js';
import { getHarness, listHarnesses, sessionEnv, type Harness, type HarnessContext, type HarnessOptions } from './harnesses/index.js';
import { installAgent, type InstallProgress } from './install.js';
import { MaskedGate } from './masked-gate.js';
import { buildBatchView, type BatchView } from './results.js';
import { killLeftoverProcesses, type ProcessResult } from './runtimes/process.js';
import { RUNTIME_CHOICES, getRuntime, resolveRuntime, type Runtime, type RuntimeChoice, type RuntimeName, type Sandbox } from './runtimes/index.js';
import { SANDBOX_SYSTEM_PATH, baseEnv, nodeBinDir, writeFiles } from './runtimes/run-dirs.js';
import { BUILTIN_AGENT_PATH } from './harnesses/index.js';
import { agentInstallDir } from './install.js';
import { engineFailureOf } from './engine-failure.js';
import { builtinFinalResponse } from './final-response.js';
import { DatasetError, evaluatorSpec, loadDataset, validateTasks, type EvaluatorSpec, type Task } from './tasks.js';
import { verifyHarbor, verifySweBench, type RunContainerCheck } from './container-check.js';
import { ImageBuilder } from './images/builder.js';
import { TaskImages, type TaskImage } from './images/task-images.js';
import { dockerClient, removeRunContainers } from './runtimes/docker/index.js';
import type { SampleClaim, SampleJob, SampleQueue, SqlExecutor } from '../cluster/index.js';

/** Session metadata without per-trace rewards: those come only from the evaluator or the trainer. */
function ownMetadata(m: Record<string, unknown>): Record<string, unknown> {
  const { traceRewards: _dropped, ...rest } = m;
  return rest;
}

export class BatchSpecError extends Error {
  readonly statusCode = 400;
  constructor(message: string) {
    super(message);
    this.name = 'BatchSpecError';
  }
}

export const batchSpecSchema = z.object({
  dataset: z.string().min(1).optional(),
  tasks: z.array(z.unknown()).min(1).optional(),
  harness: z.string().min(1),
  engine: z.string().min(1).optional(),
  n: z.number().int().min(1).max(10_000).default(1),
  concurrency: z.number().int().min(1).max(1024).default(4),
  callbackUrl: z.url({ protocol: /^https?$/ }).optional(),
  timeoutMs: z.number().int().positive().optional(),
  /** The `command` harness's command line. */
  command: z.string().min(1).optional(),
  /** builtin agent turn limit. */
  maxTurns: z.number().int().positive().optional(),
  /** Extra argv for a CLI agent. */
  extraArgs: z.array(z.string()).optional(),
  /** Overrides each task's default evaluator. */
  evaluator: evaluatorSpec.optional(),
  /** Keep each run's work folder and HOME under <dataDir>/runs/ (default: removed after scoring). */
  keepWorkDirs: z.boolean().optional(),
  /** Where agents run (DESIGN §7): auto = bwrap on Linux when installed, else local (unsandboxed, with a warning). */
  runtime: z.enum(RUNTIME_CHOICES as [RuntimeChoice, ...RuntimeChoice[]]).optional(),
  /** Container image for the docker runtime (a task's own `image` wins). */
  image: z.string().min(1).optional(),
  name: z.string().max(200).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  /** Custody: stop the batch once more than this share of its traces is masked (after maskedMinTraces traces). */
  maxMaskedFraction: z.number().min(0).max(1).optional(),
  /** Reward attribution (core/export/credit.ts): what the traces other than the earner get. Default broadcast. */
  credit: z.enum(CREDIT_POLICIES as [CreditPolicy, ...CreditPolicy[]]).optional(),
  maskedMinTraces: z.number().int().min(1).default(10),
}).strict();
export type BatchSpecInput = z.input<typeof batchSpecSchema>;

export interface RolloutManagerOptions {
  store: Store;
  pool: EnginePool;
  events: EventBus;
  baseUrl: () => string;
  dataDir: string;
  /** Where agent CLIs are installed (default `<dataDir>/agents`). */
  agentsDir?: string;
  /** Callback retry policy (tests shorten it). */
  callbackMaxAttempts?: number;
  callbackBaseDelayMs?: number;
  /** Base folder for dataset file paths given to the API (default: process cwd). */
  cwd?: string;
  /** Runtime of batches that name none (settings/topology `runtime`, `serve --runtime`); default auto. */
  defaultRuntime?: RuntimeChoice;
  /** Serves one session's agent routes on a Unix socket (gateway/run-socket.ts); required by sandboxed runtimes. */
  serveRunSocket?: (key: string, path: string) => Promise<() => Promise<void>>;
  /**
   * Cluster mode (DESIGN §12): batches go on the shared queue and every node works it, `concurrency`
   * samples at a time here. Start-up recovery is then the cluster's (per dead node), not this process's.
   */
  queue?: { samples: SampleQueue; concurrency: number };
}

/** What a queued sample carries besides its task: the submit-time options the stored spec does not keep. */
interface QueuedRunOptions { timeoutExplicit: boolean; keepWorkDirs: boolean }
/** A queued batch as one node runs its samples: ready to run, ended (null), or unable to run here. */
type QueuedBatch = { b: ActiveBatch; bin: string | null } | { error: string } | null;

interface Job { task: Task; sampleIndex: number }
/** One sample's progress as its runner sees it: its session once created, and whether it ended. */
interface SampleTrack { sessionId: string | null; ended: boolean; onSession?: (id: string) => Promise<void> }

export interface RuntimesView {
  /** The runtime of batches that name none (`serve --runtime`, default auto). */
  default: RuntimeChoice;
  /** What that resolves to here (null when it cannot run). */
  resolved: RuntimeName | null;
  /** Set when the resolved runtime is local: agents run unsandboxed. */
  warning?: string;
  error?: string;
  runtimes: Array<{ name: RuntimeName; available: boolean; reason?: string }>;
}

interface ActiveBatch {
  record: BatchRecord;
  tasks: Task[];
  harness: Harness;
  options: HarnessOptions;
  engineId: string;
  model: string;
  timeoutMs: number;
  /** The batch set `timeoutMs` itself (else a Harbor task's own agent timeout applies). */
  timeoutExplicit: boolean;
  /** Container tasks' images, resolved once per task. */
  images: TaskImages;
  evaluator: EvaluatorSpec | null;
  keepWorkDirs: boolean;
  runtime: Runtime;
  image: string | undefined;
  abort: AbortController;
  running: Map<string, number | null>;
  /** Live tallies for progress events (the store stays the source of truth for results). */
  stats: { total: number; started: number; finished: number; failed: number; interrupted: number; rewardSum: number; rewardN: number };
  done: Promise<void>;
  /** maxMaskedFraction's tally (null when the batch set none), and the error that stopped the batch. */
  maskedGate: MaskedGate | null;
  stopError: string | null;
}

const RUN_OUTPUT_BYTES = 64 * 1024;
/** Cluster mode: how often a node reads a queued batch's progress for live events. */
const PROGRESS_EVERY_MS = 1000;

function zodMessage(err: z.ZodError): string {
  return err.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ');
}

export class RolloutManager {
  private readonly active = new Map<string, ActiveBatch>();
  private readonly callbacks = new Set<Promise<unknown>>();
  private readonly closeSignal = new AbortController();
  private closed = false;
  readonly agentsDir: string;
  readonly runsDir: string;
  /** Builds and finds task images; its cache (image tags) outlives batches. Created on first use. */
  private imageBuilder: ImageBuilder | null = null;
  /** Containers of interrupted docker runs removed at start-up (resolves once done). */
  recoveredContainers: Promise<number> = Promise.resolve(0);
  /** Batches interrupted by the previous process (found at start-up). */
  /** What start-up recovery found (resolves once the store has been swept). */
  readonly recovered: Promise<{ batches: number; runs: number; killedProcesses: number }>;
  /** Cluster mode: this node's view of queued batches it has worked on (built on first sample), by batch id. */
  private readonly queuedBatches = new Map<string, Promise<QueuedBatch>>();
  /** Cluster mode: sessions of samples running on this node now. */
  private readonly queuedSessions = new Set<string>();
  private queuedRunning = 0;
  /** Cluster mode: batches whose progress event is scheduled (emitQueuedProgress). */
  private readonly progressDue = new Map<string, NodeJS.Timeout>();
  /** Cluster mode: the subscription that stops this node's samples of a batch ended on another node. */
  private unsubscribeEnded: (() => void) | null = null;

  constructor(private readonly opts: RolloutManagerOptions) {
    this.agentsDir = opts.agentsDir ?? process.env.ROLLGATE_AGENTS_DIR ?? join(opts.dataDir, 'agents');
    this.runsDir = join(opts.dataDir, 'runs');
    // In a cluster, other nodes' runs and batches are alive: recovery is per dead node (cluster/nodes.ts).
    this.recovered = opts.queue ? Promise.resolve({ batches: 0, runs: 0, killedProcesses: 0 }) : this.recover();
    this.recovered.catch((err: Error) => console.error(`rollgate: start-up recovery of batches failed: ${err.message}`));
    if (opts.queue) {
      opts.queue.samples.work(opts.queue.concurrency, (job, claim) => this.runQueued(job, claim))
        .catch((err: Error) => console.error(`rollgate: cannot work the batch queue: ${err.message}`));
      // A batch cancelled or failed on any node (its event reaches every node) stops its samples here too.
      this.unsubscribeEnded = opts.events.subscribe((ev) => {
        if (ev.type === 'batch' && (ev.status === 'cancelled' || ev.status === 'failed') && !ev.phase) this.stopQueuedHere(ev.id);
      });
    }
  }

  /**
   * Cluster mode: this node was declared dead while alive, so every sample it runs was queued again
   * elsewhere; stop them here (their sessions end `interrupted`, they do not count) and go on with new work.
   */
  abandonQueuedSamples(): void {
    for (const id of [...this.queuedBatches.keys()]) this.stopQueuedHere(id);
  }

  /** Cluster mode: every sample of a queued batch has counted (the last ones while recovering a dead node). */
  async completeQueuedBatch(batchId: string): Promise<void> {
    await this.finishBatch(batchId, 'completed', null);
    this.queuedBatches.delete(batchId);
  }

  /** Stops this node's running samples of a queued batch (their sessions end `interrupted`). */
  private stopQueuedHere(batchId: string): void {
    const p = this.queuedBatches.get(batchId);
    this.queuedBatches.delete(batchId);
    void p?.then((q) => { if (q && 'b' in q) q.b.abort.abort(); });
  }

  /** Batch samples running in this process now (a node's load). */
  get runningSamples(): number {
    let n = this.queuedRunning;
    for (const b of this.active.values()) n += b.running.size;
    return n;
  }

  private get images(): ImageBuilder {
    return (this.imageBuilder ??= new ImageBuilder(dockerClient()));
  }

  // ---- start-up recovery ----

  private async recover(): Promise<{ batches: number; runs: number; killedProcesses: number }> {
    const { store } = this.opts;
    const leftovers = await store.runs.listRunning();
    const killed = killLeftoverProcesses(leftovers.map((r) => r.runToken).filter((t): t is string => !!t));
    // Containers outlive a crashed Rollgate (bwrap sandboxes die with it: --die-with-parent).
    const inContainers: string[] = [];
    for (const r of leftovers) if (r.batchId && (await store.batches.get(r.batchId))?.spec.runtime === 'docker') inContainers.push(r.sessionId);
    this.recoveredContainers = removeRunContainers(inContainers).catch((err: Error) => {
      console.error(`rollgate: could not remove the containers of ${inContainers.length} interrupted run(s): ${err.message}`);
      return 0;
    });
    const runs = await store.runs.markUnfinishedInterrupted();
    const batches = await store.batches.markUnfinishedInterrupted();
    // Callbacks that were still being delivered when the previous process stopped.
    for (const b of await store.batches.list()) {
      if (b.callbackUrl && b.callback?.status === 'pending' && b.status !== 'queued' && b.status !== 'running') this.sendCallback(b.id);
    }
    return { batches, runs, killedProcesses: killed };
  }

  // ---- API ----

  /** Which runtimes this machine has, and what a batch that names none gets (GET /api/runtimes). */
  async runtimes(): Promise<RuntimesView> {
    const choice = this.opts.defaultRuntime ?? 'auto';
    const probe = async (name: RuntimeName) => {
      const r = await getRuntime(name).available();
      return r.ok ? { name, available: true } : { name, available: false, reason: r.reason };
    };
    const runtimes = await Promise.all((['bwrap', 'docker', 'local'] as const).map(probe));
    const resolved = resolveRuntime(choice);
    return {
      default: choice,
      resolved: 'error' in resolved ? null : resolved.runtime.name,
      ...('error' in resolved ? { error: resolved.error } : resolved.warning ? { warning: resolved.warning } : {}),
      runtimes,
    };
  }

  /** Validates and starts a batch. Throws BatchSpecError (or DatasetError) on a bad spec: nothing is created. */
  async submit(body: unknown): Promise<{ id: string; runtime: string; warning?: string }> {
    if (this.closed) throw new Error('Rollgate is shutting down');
    const raw = body && typeof body === 'object' && !Array.isArray(body) ? { ...(body as Record<string, unknown>) } : body;
    if (raw && typeof raw === 'object' && 'callback_url' in raw) {
      const r = raw as Record<string, unknown>;
      r.callbackUrl ??= r.callback_url;
      delete r.callback_url;
    }
    const parsed = batchSpecSchema.safeParse(raw ?? {});
    if (!parsed.success) throw new BatchSpecError(zodMessage(parsed.error));
    const spec = parsed.data;
    if (!!spec.dataset === !!spec.tasks) throw new BatchSpecError('give exactly one of "dataset" (a JSONL path or demo:NAME) and "tasks" (an array)');

    const harness = getHarness(spec.harness);
    if (!harness) throw new BatchSpecError(`unknown harness "${spec.harness}"; known: ${listHarnesses().map((h) => h.name).join(', ')}`);
    const options: HarnessOptions = { command: spec.command, maxTurns: spec.maxTurns, extraArgs: spec.extraArgs };
    const invalid = harness.validate?.(options);
    if (invalid) throw new BatchSpecError(invalid);

    const engineId = spec.engine ?? this.opts.pool.defaultEngineId;
    const engine = engineId ? this.opts.pool.get(engineId) : undefined;
    if (!engineId || !engine) {
      throw new BatchSpecError(`unknown engine ${engineId ?? '(none configured)'}; known: ${this.opts.pool.list().map((e) => e.config.id).join(', ') || '(none)'}`);
    }

    let tasks: Task[];
    let datasetName: string;
    if (spec.dataset) {
      const ds = loadDataset(spec.dataset, this.opts.cwd);
      tasks = ds.tasks;
      datasetName = ds.name;
    } else {
      tasks = validateTasks(spec.tasks!, 'tasks', (i) => `tasks[${i}]`);
      datasetName = 'inline';
    }

    const inImage = tasks.find((t) => t.harbor || t.swebench);
    // Tasks that live in their own images can only run under docker: `auto` means docker for them.
    const choice = spec.runtime ?? this.opts.defaultRuntime ?? 'auto';
    const resolved = resolveRuntime(inImage && choice === 'auto' ? 'docker' : choice);
    if ('error' in resolved) throw new BatchSpecError(resolved.error);
    const { runtime, warning } = resolved;
    if (inImage && runtime.name !== 'docker') {
      throw new BatchSpecError(`task ${inImage.id} runs in its own container image (${inImage.harbor ? 'a Harbor task' : 'a SWE-bench-style row'}): use runtime "docker" (--runtime docker)`);
    }
    if (harness.kind === 'reference' && harness.name === 'oracle' && runtime.name !== 'docker') {
      throw new BatchSpecError('the oracle harness runs a task\'s reference solution inside its image: use runtime "docker"');
    }

    const id = `bat_${randomBytes(8).toString('hex')}`;
    const timeoutMs = spec.timeoutMs ?? harness.defaultTimeoutMs;
    const record: BatchRecord = {
      id,
      status: 'queued',
      spec: {
        dataset: datasetName, harness: harness.name, engine: engineId, model: engine.config.model, n: spec.n,
        concurrency: spec.concurrency, timeoutMs, simulated: engine.config.simulated ?? false,
        ...(spec.command ? { command: spec.command } : {}),
        ...(spec.maxTurns ? { maxTurns: spec.maxTurns } : {}),
        ...(spec.extraArgs ? { extraArgs: spec.extraArgs } : {}),
        ...(spec.evaluator ? { evaluator: spec.evaluator } : {}),
        ...(spec.name ? { name: spec.name } : {}),
        runtime: runtime.name,
        ...(warning ? { runtimeWarning: warning } : {}),
        ...(spec.image ? { image: spec.image } : {}),
        ...(spec.metadata ? { metadata: spec.metadata } : {}),
        ...(harness.agent ? { agent: `${harness.agent.package}@${harness.agent.version}` } : {}),
      },
      taskIds: tasks.map((t) => t.id),
      error: null,
      callbackUrl: spec.callbackUrl ?? null,
      callback: spec.callbackUrl ? { status: 'pending', attempts: 0 } : null,
      createdAt: Date.now(),
      startedAt: null,
      finishedAt: null,
    };
    if (this.opts.queue) {
      // The masked-share gate tallies in one process; across nodes it would see only its own samples.
      if (spec.maxMaskedFraction !== undefined) throw new BatchSpecError('maxMaskedFraction is not available when batches run on the cluster queue (--store postgres://…): each node would see only its own samples');
      const run: QueuedRunOptions = { timeoutExplicit: spec.timeoutMs !== undefined, keepWorkDirs: spec.keepWorkDirs ?? false };
      await this.enqueueBatch({ ...record, status: 'running', startedAt: record.createdAt }, tasks, spec.n, run);
      if (warning) console.warn(`rollgate: batch ${id}: ${warning}`);
      return { id, runtime: runtime.name, ...(warning ? { warning } : {}) };
    }
    await this.opts.store.batches.create(record);
    const abort = new AbortController();
    const images = new TaskImages(this.images, abort.signal, (taskId, p) => {
      if (p.phase !== 'cached') this.opts.events.emit({ type: 'batch', id, status: 'running', phase: `image-${p.phase}`, message: `${taskId}: ${p.message ?? p.image}` });
    });
    const active: ActiveBatch = {
      record, tasks, harness, options, engineId, model: engine.config.model, timeoutMs, timeoutExplicit: spec.timeoutMs !== undefined, images,
      evaluator: spec.evaluator ?? null, keepWorkDirs: spec.keepWorkDirs ?? false, runtime, image: spec.image,
      abort, running: new Map(), done: Promise.resolve(), stopError: null,
      maskedGate: spec.maxMaskedFraction !== undefined ? new MaskedGate(spec.maxMaskedFraction, spec.maskedMinTraces) : null,
      stats: { total: tasks.length * spec.n, started: 0, finished: 0, failed: 0, interrupted: 0, rewardSum: 0, rewardN: 0 },
    };
    this.active.set(id, active);
    this.emitBatch(id, 'queued');
    active.done = this.runBatch(active, spec.concurrency, spec.n).catch((err: Error) => {
      // runBatch handles its own errors; this is a last resort so a batch never stays `running`.
      if (!this.closed) return this.finishBatch(active.record.id, 'failed', `internal error: ${err.message}`);
    }).finally(() => this.active.delete(id));
    if (warning) console.warn(`rollgate: batch ${id}: ${warning}`);
    return { id, runtime: runtime.name, ...(warning ? { warning } : {}) };
  }

  async get(id: string): Promise<BatchView | null> {
    const { store } = this.opts;
    const batch = await store.batches.get(id);
    if (!batch) return null;
    const [sessions, runs] = await Promise.all([store.sessions.list({ batchId: id }), store.runs.listByBatch(id)]);
    return buildBatchView(batch, sessions, runs);
  }

  async list(opts: { limit?: number; offset?: number } = {}): Promise<Array<Omit<BatchView, 'tasks'>>> {
    const views: Array<Omit<BatchView, 'tasks'>> = [];
    for (const b of await this.opts.store.batches.list(opts)) {
      const view = await this.get(b.id);
      if (!view) continue;
      const { tasks: _tasks, ...rest } = view;
      views.push(rest);
    }
    return views;
  }

  /** Cancels a queued or running batch: no new samples start, running agents are killed. */
  async cancel(id: string): Promise<BatchView | null> {
    if (this.opts.queue) {
      await this.cancelQueued(id);
      return this.get(id);
    }
    const active = this.active.get(id);
    if (active && !active.abort.signal.aborted) {
      active.abort.abort();
      this.emitBatch(id, 'cancelling');
      await Promise.race([active.done, new Promise((r) => setTimeout(r, 10_000))]);
    }
    return this.get(id);
  }

  /** Resolves with the batch's final view once it has ended (immediately for an ended batch). */
  async wait(id: string): Promise<BatchView | null> {
    await this.active.get(id)?.done;
    if (!this.opts.queue) return this.get(id);
    // Cluster mode: any node may end the batch; the store says when.
    for (;;) {
      const view = await this.get(id);
      if (!view || (view.status !== 'queued' && view.status !== 'running') || this.closed) return view;
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  /** Whether the batch may still be cancelled (running here, or, in a cluster, anywhere). */
  async isActive(id: string): Promise<boolean> {
    if (!this.opts.queue) return this.active.has(id);
    const b = await this.opts.store.batches.get(id);
    return b?.status === 'queued' || b?.status === 'running';
  }

  /**
   * Shutdown: kill every running agent; batches still running become `interrupted` (the same state a
   * crash leaves, made explicit now), and so do their unfinished sessions.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.closeSignal.abort();
    const batches = [...this.active.values()];
    for (const b of batches) b.abort.abort();
    if (this.opts.queue) await this.closeQueued();
    await Promise.race([Promise.allSettled(batches.map((b) => b.done)), new Promise((r) => setTimeout(r, 5000))]);
    const { store } = this.opts;
    const now = Date.now();
    for (const b of batches) {
      for (const s of await store.sessions.list({ batchId: b.record.id, status: 'active' })) {
        await store.writer.updateSession(s.id, { status: 'interrupted', finishedAt: now }).catch(() => undefined);
      }
      await store.runs.markUnfinishedInterrupted({ now });
      await store.batches.modify(b.record.id, (cur) => (cur.status === 'queued' || cur.status === 'running'
        ? { patch: { status: 'interrupted', finishedAt: now, error: 'Rollgate was stopped while the batch was running' } }
        : { refuse: cur.status }));
    }
    await Promise.race([Promise.allSettled([...this.callbacks]), new Promise((r) => setTimeout(r, 1000))]);
  }

  // ---- running a batch ----

  private async runBatch(b: ActiveBatch, concurrency: number, n: number): Promise<void> {
    const { store } = this.opts;
    b.record = (await store.batches.update(b.record.id, { status: 'running', startedAt: Date.now() })) ?? b.record;
    this.emitBatch(b.record.id, 'running');

    const usable = await b.runtime.available();
    if (!usable.ok) {
      if (!this.closed) await this.finishBatch(b.record.id, 'failed', `runtime ${b.runtime.name} is not available: ${usable.reason}`);
      return;
    }
    // A dead engine fails the batch now, saying why, instead of every sample after its agent's retries.
    const engine = await this.opts.pool.probeEngine(b.engineId);
    if (!engine.ok) {
      if (!this.closed) await this.finishBatch(b.record.id, 'failed', `engine ${b.engineId}: no replica answers its health check: ${engine.problems.join('; ')}`);
      return;
    }
    let bin: string | null = null;
    if (b.harness.agent) {
      try {
        bin = await installAgent(this.agentsDir, b.harness.agent, (p) => this.emitInstall(b.record.id, p));
      } catch (err) {
        if (!this.closed) await this.finishBatch(b.record.id, 'failed', (err as Error).message);
        return;
      }
    }

    const jobs: Job[] = [];
    for (const task of b.tasks) for (let i = 0; i < n; i++) jobs.push({ task, sampleIndex: i });
    let next = 0;
    const worker = async () => {
      while (next < jobs.length && !b.abort.signal.aborted && !this.closed) {
        const job = jobs[next++];
        const track: SampleTrack = { sessionId: null, ended: false };
        await this.runSampleSafely(b, job, bin, track);
        if (b.maskedGate && track.sessionId && !b.stopError && !this.closed) {
          const stop = await b.maskedGate.add(this.opts.store, track.sessionId);
          if (stop) {
            b.stopError = stop;
            b.abort.abort();
          }
        }
        if (!this.closed) this.emitBatch(b.record.id, 'running');
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, jobs.length) }, worker));
    if (this.closed) return;
    if (b.stopError) await this.finishBatch(b.record.id, 'failed', b.stopError);
    else await this.finishBatch(b.record.id, b.abort.signal.aborted ? 'cancelled' : 'completed', null);
  }

  // ---- cluster mode: batches on the shared queue (cluster/queue.ts) ----

  /**
   * This node stops: no new samples; running ones are stopped and their sessions `interrupted`; their jobs
   * fail (runQueued throws) so pg-boss runs them again on another node. The batches go on.
   */
  private async closeQueued(): Promise<void> {
    this.unsubscribeEnded?.();
    for (const t of this.progressDue.values()) clearTimeout(t);
    this.progressDue.clear();
    for (const p of this.queuedBatches.values()) void p.then((q) => { if (q && 'b' in q) q.b.abort.abort(); });
    const deadline = Date.now() + 5000;
    while (this.queuedRunning > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const now = Date.now();
    for (const id of this.queuedSessions) {
      await this.opts.store.writer.updateSession(id, { status: 'interrupted', finishedAt: now }).catch(() => undefined);
      await this.opts.store.runs.update(id, { status: 'interrupted', finishedAt: now }).catch(() => undefined);
    }
    this.queuedSessions.clear();
  }

  /** The batch row, then one job per (task, sample); a batch whose jobs could not be queued fails at once. */
  private async enqueueBatch(record: BatchRecord, tasks: Task[], n: number, run: QueuedRunOptions): Promise<void> {
    const { samples } = this.opts.queue!;
    const jobs: SampleJob[] = [];
    for (let i = 0; i < n; i++) for (const task of tasks) jobs.push({ batchId: record.id, taskId: task.id, sampleIndex: i, task, run: { ...run } });
    // Longer than any run may take (agent timeout + grading), so pg-boss never expires a live sample.
    const expireInSeconds = Math.ceil(Number(record.spec.timeoutMs) / 1000) + 3600;
    // The Postgres store writes the batch row and its jobs in one transaction: both commit, or neither.
    const batches = this.opts.store.batches as { createBatch?(rec: BatchRecord, enqueue: (db: SqlExecutor) => Promise<void>): Promise<BatchRecord> };
    if (batches.createBatch) {
      await batches.createBatch(record, (db) => samples.enqueue(jobs, { db, expireInSeconds }));
    } else {
      await this.opts.store.batches.create(record);
      try {
        await samples.enqueue(jobs, { expireInSeconds });
      } catch (err) {
        await this.finishBatch(record.id, 'failed', `could not queue the batch's samples: ${(err as Error).message}`);
        throw err;
      }
    }
    this.emitBatch(record.id, 'running');
  }

  private queuedBatch(batchId: string, run: QueuedRunOptions): Promise<QueuedBatch> {
    let p = this.queuedBatches.get(batchId);
    if (!p) {
      p = this.prepareQueuedBatch(batchId, run);
      this.queuedBatches.set(batchId, p);
      p.then((q) => { if (!q || 'error' in q) this.queuedBatches.delete(batchId); }, () => this.queuedBatches.delete(batchId));
    }
    return p;
  }

  /** What this node needs to run a queued batch's samples, from the stored batch (the same checks submit made). */
  private async prepareQueuedBatch(batchId: string, run: QueuedRunOptions): Promise<QueuedBatch> {
    const record = await this.opts.store.batches.get(batchId);
    if (!record || (record.status !== 'queued' && record.status !== 'running')) return null;
    const spec = record.spec as { harness: string; engine: string; runtime: RuntimeName; timeoutMs: number; n: number; command?: string; maxTurns?: number; extraArgs?: string[]; evaluator?: EvaluatorSpec; image?: string };
    const harness = getHarness(spec.harness);
    const engine = this.opts.pool.get(spec.engine);
    if (!harness) return { error: `unknown harness ${spec.harness}` };
    if (!engine) return { error: `a node has no engine ${spec.engine} (every node working the queue needs the batch's engine)` };
    const runtime = getRuntime(spec.runtime);
    const usable = await runtime.available();
    if (!usable.ok) return { error: `runtime ${runtime.name} is not available on a node: ${usable.reason}` };
    let bin: string | null = null;
    if (harness.agent) {
      try { bin = await installAgent(this.agentsDir, harness.agent, (p) => this.emitInstall(batchId, p)); } catch (err) { return { error: (err as Error).message }; }
    }
    const abort = new AbortController();
    const images = new TaskImages(this.images, abort.signal, (taskId, p) => {
      if (p.phase !== 'cached') this.opts.events.emit({ type: 'batch', id: batchId, status: 'running', phase: `image-${p.phase}`, message: `${taskId}: ${p.message ?? p.image}` });
    });
    const b: ActiveBatch = {
      record, tasks: [], harness, options: { command: spec.command, maxTurns: spec.maxTurns, extraArgs: spec.extraArgs }, engineId: spec.engine,
      model: engine.config.model, timeoutMs: spec.timeoutMs, timeoutExplicit: run.timeoutExplicit, images, evaluator: spec.evaluator ?? null,
      keepWorkDirs: run.keepWorkDirs, runtime, image: spec.image, abort, running: new Map(), done: Promise.resolve(), maskedGate: null, stopError: null,
      stats: { total: record.taskIds.length * spec.n, started: 0, finished: 0, failed: 0, interrupted: 0, rewardSum: 0, rewardN: 0 },
    };
    return { b, bin };
  }

  /**
   * Runs one queued sample on this node. Throws only while this node stops, so pg-boss retries the job on
   * another node; otherwise the sample ends here and counts once (the last one to count completes the batch).
   */
  private async runQueued(job: SampleJob, claim: SampleClaim): Promise<void> {
    if (this.closed) throw new Error('this node is stopping');
    // Counted from the start, so a stop waits for samples still being prepared, not only those already running.
    this.queuedRunning++;
    const track: SampleTrack = {
      sessionId: null, ended: false,
      onSession: async (id) => { this.queuedSessions.add(id); await this.opts.queue!.samples.setSession(claim, id); },
    };
    try {
      await this.runQueuedSample(job, claim, track);
    } finally {
      this.queuedRunning--;
      // A stopping node marks what it still holds `interrupted` (closeQueued); anything else has ended.
      if (track.sessionId && !this.closed) this.queuedSessions.delete(track.sessionId);
    }
  }

  /** The body of runQueued. */
  private async runQueuedSample(job: SampleJob, claim: SampleClaim, track: SampleTrack): Promise<void> {
    const { samples } = this.opts.queue!;
    const q = await this.queuedBatch(job.batchId, job.run as unknown as QueuedRunOptions);
    if (!q) return; // the batch ended (cancelled, failed): its remaining samples are dropped
    if ('error' in q) {
      await this.finishBatch(job.batchId, 'failed', q.error);
      await samples.dropBatch(job.batchId);
      return;
    }
    if (q.b.abort.signal.aborted && !this.closed) return;
    // Cancelled or failed on another node since this node prepared the batch: the sample is dropped.
    const status = (await this.opts.store.batches.get(job.batchId))?.status;
    if (status !== 'queued' && status !== 'running') { q.b.abort.abort(); this.queuedBatches.delete(job.batchId); return; }
    if (this.closed) throw new Error('this node is stopping');
    await this.runSampleSafely(q.b, { task: job.task as Task, sampleIndex: job.sampleIndex }, q.bin, track);
    if (this.closed) throw new Error(`this node stopped during sample ${job.taskId}/${job.sampleIndex}; it runs again elsewhere`);
    const { counted, superseded, remaining } = await samples.finish(claim);
    // This node was declared dead while its agent ran on, and the sample ran again elsewhere: the session it
    // just ended must not make a second trained-on sample.
    if (superseded && track.sessionId) await this.supersede(track.sessionId);
    if (counted && remaining === 0) {
      await this.finishBatch(job.batchId, 'completed', null);
      this.queuedBatches.delete(job.batchId);
    } else {
      this.emitQueuedProgress(job.batchId);
    }
  }

  /**
   * Progress of a queued batch comes from the store (samples end on every node), so it is read at most once
   * a second per batch here, not once per sample: a 4,096-sample batch must not read itself 4,096 times.
   */
  private emitQueuedProgress(batchId: string): void {
    if (this.progressDue.has(batchId)) return;
    this.progressDue.set(batchId, setTimeout(() => {
      this.progressDue.delete(batchId);
      if (!this.closed) this.emitBatch(batchId, 'running');
    }, PROGRESS_EVERY_MS));
  }

  private async supersede(sessionId: string): Promise<void> {
    const now = Date.now();
    const done = await this.opts.store.sessions.modify(sessionId, (s) => (s.status === 'finished' || s.status === 'failed' || s.status === 'active'
      ? { patch: { status: 'interrupted', finishedAt: s.finishedAt ?? now, metadata: { ...s.metadata, superseded: true } } }
      : { refuse: s.status })).catch((err: Error) => { console.error(`rollgate: could not mark session ${sessionId} superseded: ${err.message}`); return null; });
    if (done && 'record' in done) this.opts.events.emit({ type: 'session', id: sessionId, status: 'interrupted' });
  }

  /** Cluster mode cancel: the batch ends now, its unstarted samples are dropped, running ones stop on every node (the event reaches them). */
  private async cancelQueued(id: string): Promise<void> {
    await this.finishBatch(id, 'cancelled', null);
    await this.opts.queue!.samples.dropBatch(id);
    this.stopQueuedHere(id);
  }

  /** Runs one sample; an unexpected error fails that sample alone (its session marked `failed`), never the batch. */
  private async runSampleSafely(b: ActiveBatch, job: Job, bin: string | null, track: SampleTrack): Promise<void> {
    await this.runSample(b, job, bin, track).catch(async (err: Error) => {
      console.error(`rollgate: batch ${b.record.id} task ${job.task.id} sample ${job.sampleIndex}: ${err.stack ?? err.message}`);
      if (track.sessionId && !track.ended && !this.closed) {
        this.tally(b, 'failed', null);
        await this.opts.store.writer.updateSession(track.sessionId, { status: 'failed', finishedAt: Date.now() }).catch(() => undefined);
      }
    });
  }

  private async finishBatch(id: string, status: BatchStatus, error: string | null): Promise<void> {
    const done = await this.opts.store.batches.modify(id, (cur) => (cur.status === 'queued' || cur.status === 'running'
      ? { patch: { status, error, finishedAt: Date.now() } }
      : { refuse: cur.status }));
    if (!done || 'refused' in done) return;
    this.emitBatch(id, status);
    if (done.record.callbackUrl) this.sendCallback(id);
  }

  private tally(b: ActiveBatch, status: 'finished' | 'failed' | 'interrupted', reward: number | null): void {
    b.stats[status]++;
    if (typeof reward === 'number' && status !== 'interrupted') {
      b.stats.rewardSum += reward;
      b.stats.rewardN++;
    }
  }

  private async runSample(b: ActiveBatch, job: Job, bin: string | null, track: SampleTrack): Promise<void> {
    const { store, events } = this.opts;
    const { task, sampleIndex } = job;
    const batchId = b.record.id;
    const groupId = `${batchId}:${task.id}`;
    const metadata: Record<string, unknown> = { groupId, sampleIndex, batchId, dataset: b.record.spec.dataset, runtime: b.runtime.name, ...(task.metadata ? { task: task.metadata } : {}),
      ...(b.record.spec.credit ? { credit: b.record.spec.credit } : {}) };
    /** The session as stored now, queued writes committed (synchronously). */
    const stored = async (): Promise<SessionRecord | null> => {
      await store.writer.flush();
      return store.sessions.get(session.id);
    };
    const session = newSession({ engineId: b.engineId, harness: b.harness.name, taskId: task.id, batchId, metadata });
    await store.writer.putSession(session);
    track.sessionId = session.id;
    await track.onSession?.(session.id);
    b.stats.started++;
    events.emit({ type: 'session', id: session.id, status: session.status });

    const ctx: HarnessContext = {
      prompt: task.prompt, taskId: task.id, sessionId: session.id, key: session.key, urls: sessionUrls(this.opts.baseUrl(), session.key),
      model: b.model, workDir: '', home: '', options: b.options, task,
    };
    const timeoutMs = b.timeoutExplicit ? b.timeoutMs : task.harbor?.agentTimeoutMs ?? b.timeoutMs;
    const runToken = randomBytes(12).toString('hex');
    const started = Date.now();
    await store.runs.create({
      sessionId: session.id, batchId, status: 'running', pid: null, runToken, workDir: null, outcome: null, exitCode: null, signal: null,
      durationMs: null, stdout: null, stderr: null, finalAnswer: null, evaluator: null, error: null, startedAt: started, finishedAt: null,
    });

    let result: ProcessResult;
    let sandbox: Sandbox | null = null;
    // A task that cannot run (broken Harbor folder, image that does not build) fails alone, with its reason.
    let taskError: string | null = task.invalid ?? null;
    let img: TaskImage | null = null;
    if (!taskError && task.container && b.runtime.name === 'docker') {
      try {
        img = await b.images.forTask(task.id, task.container);
      } catch (e) {
        taskError = `no image for task ${task.id}: ${(e as Error).message}`;
      }
    }
    if (taskError) {
      result = { pid: null, exitCode: null, signal: null, timedOut: false, cancelled: b.abort.signal.aborted, spawnError: null, stdout: '', stderr: '', stdoutTail: '', durationMs: Date.now() - started };
    } else try {
      sandbox = await b.runtime.prepare({
        id: session.id, root: join(this.runsDir, session.id), files: task.files, tools: this.toolsFor(b, bin),
        // Inside the desktop app the node shim execs Electron by its host path.
        toolsAtHostPath: process.versions.electron ? [dirname(process.execPath)] : [],
        gateway: { serve: (path) => this.serveSocket(session.key, path), hostBaseUrl: this.opts.baseUrl() },
        image: img?.image ?? task.image ?? b.image, workdir: img?.workdir ?? task.workdir,
        workFromImage: !!(task.harbor || task.swebench),
        mounts: b.harness.mounts?.(task) ?? [],
        limits: { ...(task.container?.memoryMb ? { memoryMb: task.container.memoryMb } : {}), ...(task.container?.cpus ? { cpus: task.container.cpus } : {}) },
      });
      ctx.workDir = sandbox.paths.work;
      ctx.home = sandbox.paths.home;
      ctx.urls = sessionUrls(sandbox.baseUrl, session.key);
      sandbox.writeHome(b.harness.homeFiles(ctx));
      const plan = b.harness.launch(ctx, bin);
      const systemPath = sandbox.runtime === 'local' ? undefined : SANDBOX_SYSTEM_PATH;
      const env = { ...baseEnv(sandbox.paths, [], systemPath, sandbox.toolPath(nodeBinDir())), ...sessionEnv(ctx), ...plan.env, ROLLGATE_RUN_ID: runToken };
      await store.runs.update(session.id, { workDir: sandbox.host.work });
      b.running.set(session.id, null);
      result = await sandbox.launch({ ...plan, env }, {
        timeoutMs, signal: b.abort.signal, maxOutputBytes: RUN_OUTPUT_BYTES,
        onStart: ({ pid }) => { b.running.set(session.id, pid); void store.runs.update(session.id, { pid }); },
      });
    } catch (err) {
      result = { pid: null, exitCode: null, signal: null, timedOut: false, cancelled: false, spawnError: (err as Error).message, stdout: '', stderr: '', stdoutTail: '', durationMs: Date.now() - started };
    } finally {
      b.running.delete(session.id);
    }
    const dispose = () => sandbox?.dispose(b.keepWorkDirs).catch((err: Error) => console.error(`rollgate: run ${session.id}: cleanup failed: ${err.message}`));
    if (this.closed) { await dispose(); return; } // shutdown: close() marks what is left as interrupted

    const outcome = result.cancelled ? 'cancelled' : taskError ? 'task_error' : result.spawnError ? 'start_error' : result.timedOut ? 'timeout' : result.exitCode === 0 ? 'ok' : 'agent_error';
    const agentError = outcome === 'task_error' ? taskError
      : outcome === 'start_error' ? `agent could not start: ${result.spawnError}`
      : outcome === 'timeout' ? `agent timed out after ${Math.round(timeoutMs / 1000)} s`
      : outcome === 'agent_error' ? `agent exited with ${result.exitCode ?? result.signal}` : null;
    const engineFailure = agentError ? engineFailureOf(await store.completions.listBySession(session.id)) : null;
    // Agents colour their output for terminals; the stored answer (and what evaluators compare) is the text.
    const finalAnswer = stripVTControlCharacters(result.stdoutTail).trim();
    const common = { exitCode: result.exitCode, signal: result.signal, durationMs: result.durationMs, stdout: result.stdout, stderr: result.stderr, finalAnswer };
    const interrupted = async (verdict?: EvaluatorVerdict) => {
      await store.runs.update(session.id, { ...common, status: 'done', outcome: 'cancelled', ...(verdict ? { evaluator: verdict } : {}), error: 'cancelled', finishedAt: Date.now() });
      track.ended = true;
      this.tally(b, 'interrupted', null);
      await store.writer.updateSession(session.id, { status: 'interrupted', finishedAt: Date.now(), metadata: { ...ownMetadata((await stored())?.metadata ?? metadata), outcome: 'cancelled' } });
      events.emit({ type: 'session', id: session.id, status: 'interrupted' });
      await dispose();
    };
    if (outcome === 'cancelled') return interrupted();

    // Grading starts only now: the launch resolved after every process of the run was gone.
    const spec = evaluatorFor(task, b.evaluator);
    const checkGiven = { ROLLGATE_SESSION_ID: session.id, ROLLGATE_TASK_ID: task.id, ...(task.expected !== undefined ? { ROLLGATE_EXPECTED: task.expected } : {}) };
    const box = sandbox;
    const runContainerCheck: RunContainerCheck | null = box && (task.harbor || task.swebench) ? (c) => box.check(
      { command: c.command, env: { ...checkGiven, ...c.env }, checkFiles: c.checkFiles, outputDir: c.outputDir, fromImage: c.fromImage, carryWork: c.carryWork, agentOutput: result.stdout },
      { timeoutMs: c.timeoutMs, signal: b.abort.signal, maxOutputBytes: 64 * 1024 },
    ) : null;
    const verdict: EvaluatorVerdict = taskError
      ? { type: task.harbor ? 'harbor' : spec?.type ?? 'none', reward: null, error: taskError }
      : box && runContainerCheck && task.harbor ? await verifyHarbor(task, box.paths.work, box.host.root, runContainerCheck)
      : box && runContainerCheck && task.swebench ? await verifySweBench(task, box.paths.work, box.host.root, runContainerCheck)
      : box ? await evaluate(spec, {
        task, finalOutput: finalAnswer, workDir: box.host.work,
        runCheck: (command, timeoutMs) => box.check(
          { command, env: checkGiven, checkFiles: this.checkFilesFor(task, box.host.root), agentOutput: result.stdout },
          { timeoutMs, signal: b.abort.signal, maxOutputBytes: 64 * 1024 },
        ),
      })
      : { type: spec?.type ?? 'none', reward: spec ? 0 : null, error: 'no work folder (the run could not be prepared)' };
    if (this.closed) { await dispose(); return; }
    if (b.abort.signal.aborted && verdict.error === 'check cancelled') return interrupted(verdict);

    // Rewards of batch sessions come only from the evaluator (and later from the trainer's control API):
    // whatever was reported during the run is not the agent's to decide (issue 18, item 1).
    const current = await stored();
    const reward = verdict.reward ?? null;
    const status = outcome === 'ok' && !verdict.error ? 'finished' : 'failed';
    const error = engineFailure ? `${engineFailure}; ${agentError}` : agentError;
    await store.runs.update(session.id, { ...common, status: 'done', outcome, evaluator: verdict, error, finishedAt: Date.now() });
    track.ended = true;
    this.tally(b, status, reward);
    await store.writer.updateSession(session.id, {
      status, reward, finishedAt: Date.now(),
      metadata: withTraceRewards({
        ...ownMetadata(current?.metadata ?? metadata), outcome, exitCode: result.exitCode, durationMs: result.durationMs,
        ...builtinFinalResponse(b.harness.name, outcome, await store.completions.listBySession(session.id)),
        evaluator: { type: verdict.type, reward: verdict.reward, ...(verdict.error ? { error: verdict.error } : {}) },
        ...(error ? { error } : {}),
      }, verdict.traceRewards),
    });
    events.emit({ type: 'session', id: session.id, status });
    await dispose();
  }

  /** Host paths the agent needs read-only inside a sandbox: Node, and its own install or script. */
  private toolsFor(b: ActiveBatch, bin: string | null): string[] {
    const tools = [nodeBinDir()];
    if (b.harness.agent && bin) tools.push(agentInstallDir(this.agentsDir, b.harness.agent));
    if (b.harness.kind === 'builtin') tools.push(BUILTIN_AGENT_PATH);
    return tools;
  }

  /** The task's hidden tests as a host folder, written only now (after the agent is gone), outside its work folder. */
  private checkFilesFor(task: Task, root: string): string | undefined {
    if (!task.tests) return undefined;
    if (typeof task.tests === 'string') return isAbsolute(task.tests) ? task.tests : resolve(this.opts.cwd ?? process.cwd(), task.tests);
    const dir = join(root, 'tests');
    rmSync(dir, { recursive: true, force: true }); // always the task's own files, never whatever was left there
    writeFiles(dir, task.tests);
    return dir;
  }

  private serveSocket(key: string, path: string): Promise<() => Promise<void>> {
    if (!this.opts.serveRunSocket) throw new Error('sandboxed runtimes need the gateway socket (RolloutManagerOptions.serveRunSocket)');
    return this.opts.serveRunSocket(key, path);
  }

  // ---- events and callbacks ----

  private emitBatch(id: string, status: string): void {
    const b = this.active.get(id);
    if (b && status !== 'completed' && status !== 'cancelled' && status !== 'failed') {
      const st = b.stats;
      const done = st.finished + st.failed + st.interrupted;
      const running = st.started - done;
      this.opts.events.emit({
        type: 'batch', id, status, total: st.total, done, running, queued: st.total - st.started,
        finished: st.finished, failed: st.failed, interrupted: st.interrupted,
        meanReward: st.rewardN ? Math.round((st.rewardSum / st.rewardN) * 1e6) / 1e6 : null,
      });
      return;
    }
    void this.get(id).then((view) => {
      if (!view) return;
      const c = view.counts;
      // Progress read from the store says what the batch is now (in a cluster it may have ended on another node).
      this.opts.events.emit({
        type: 'batch', id, status: status === 'running' ? view.status : status, total: c.total, done: c.done, running: c.running, queued: c.queued,
        finished: c.finished, failed: c.failed, interrupted: c.interrupted, meanReward: view.meanReward,
      });
    }, () => undefined);
  }

  private emitInstall(id: string, p: InstallProgress): void {
    this.opts.events.emit({ type: 'batch', id, status: 'running', phase: p.phase === 'cached' ? 'installed' : `install-${p.phase}`, message: p.message });
  }

  private sendCallback(id: string): void {
    const p = this.deliverBatchCallback(id).catch(() => undefined);
    this.callbacks.add(p);
    void p.finally(() => this.callbacks.delete(p));
  }

  private async deliverBatchCallback(id: string): Promise<void> {
    const { store } = this.opts;
    const batch = await store.batches.get(id);
    if (!batch?.callbackUrl) return;
    const view = (await this.get(id))!;
    let attempts = batch.callback?.attempts ?? 0;
    const r = await deliverCallback(batch.callbackUrl, view, {
      maxAttempts: this.opts.callbackMaxAttempts,
      baseDelayMs: this.opts.callbackBaseDelayMs,
      signal: this.closeSignal.signal,
      onAttempt: (_n, error) => {
        attempts++;
        if (this.closed) return;
        void store.batches.update(id, { callback: error ? { status: 'pending', attempts, lastError: error } : { status: 'delivered', attempts, deliveredAt: Date.now() } });
      },
    });
    if (this.closed && !r.ok) return; // stays pending: retried at the next start
    if (!r.ok) await store.batches.update(id, { callback: { status: 'failed', attempts, lastError: r.lastError ?? undefined } });
    this.opts.events.emit({ type: 'batch', id, status: batch.status, phase: r.ok ? 'callback-delivered' : 'callback-failed', message: r.lastError ?? undefined });
  }
}

export { DatasetError };
export { killLeftoverProcesses, runProcesses } from './runtimes/process.js';
