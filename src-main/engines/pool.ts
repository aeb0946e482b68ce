// Engine pool (DESIGN §4): sticky least-loaded replicas, health checks with backoff, failover of calls
// that have not reached the agent, the weight-sync pause gate, and the policy version.
import type { CanonicalDelta } from '../core/types.js';
import { contextLength } from './context-room.js';
import { DEFAULT_ENGINE_TIMEOUTS, healthProblem, type EngineTimeouts } from './http.js';
import { driverFor } from './drivers/index.js';
import { forwardToEngine, type ForwardResult } from './engine-control.js';
import { readEngineLoad } from './engine-load.js';
import { EnginePausedError, PauseGate, type PauseMode } from './pause-gate.js';
import { ReplicaStats } from './replica-stats.js';
import { explainCaptureBehindRouter, routingHeaders } from './router.js';
import { CaptureError, EngineError, type EngineAdapter, type EngineCallInput, type EngineConfig, type EngineResult } from './types.js';
import { TokenModeAdapter } from './token-mode.js';

export { EnginePausedError, type PauseMode } from './pause-gate.js';

export interface ReplicaState {
  url: string;
  healthy: boolean;
  inFlight: number;
  lastCheckedAt: number | null;
  /** Running + waiting requests the engine itself reported on /metrics (null when unknown). */
  engineLoad: number | null;
  failures: number;
  nextCheckAt: number;
  stats: ReplicaStats;
}

export interface PoolEngine {
  config: EngineConfig;
  adapter: EngineAdapter;
  replicas: ReplicaState[];
  /** Calls moved to another replica after theirs failed before the agent got a byte. */
  failovers: number;
  /** Calls for this engine held by the pause gate right now. */
  queued: number;
}

/** The engine stopped this call on purpose (pause with abort); recorded as `aborted`. */
export class EngineAbortedError extends EngineError {
  constructor(message: string) {
    super(message, 503);
    this.name = 'EngineAbortedError';
  }
}

export interface PoolRunInput extends Omit<EngineCallInput, 'replica' | 'signal' | 'dataParallelRank' | 'headers'> {
  signal: AbortSignal;
  /** False once bytes have reached the agent: from then on a failed replica cannot be swapped. */
  canFailover(): boolean;
}

export interface PoolRun {
  /** The replica serving the call now (changes on failover). */
  readonly replica: string;
  /** performance.now() when the pause gate let the call through (null while queued). */
  readonly admittedAt: number | null;
  /**
   * The policy version the call runs under: current when the pause gate let it through (a call held by a
   * `queue` pause across a weight update runs on the new weights), or at arrival while it waits.
   */
  readonly policyVersion: number;
  readonly events: AsyncGenerator<CanonicalDelta, EngineResult, void>;
}

/** The adapter for an engine's kind and mode: its driver's chat adapter, or the shared token-mode loop. */
export function createAdapter(config: EngineConfig): EngineAdapter {
  const driver = driverFor(config.kind);
  if (!driver.modes.includes(config.mode)) {
    throw new Error(`engine ${config.id}: mode: ${driver.missingModes?.[config.mode] ?? `${driver.label} has no ${config.mode} mode`} (modes: ${driver.modes.join(', ')})`);
  }
  if (config.mode === 'token') return new TokenModeAdapter(config, driver);
  if (!driver.chatAdapter) throw new Error(`engine ${config.id}: ${driver.label} has no chat adapter`);
  return driver.chatAdapter(config);
}

const MAX_BACKOFF_MS = 30_000;
const MAX_STICKY_SESSIONS = 100_000;

function isReplicaFailure(err: unknown): boolean {
  return err instanceof EngineError && !(err instanceof EnginePausedError) && err.status >= 500;
}

export class EnginePool {
  private readonly engines = new Map<string, PoolEngine>();
  private readonly sticky = new Map<string, { engineId: string; url: string; rank?: number }>();
  private readonly inFlight = new Set<AbortController>();
  private readonly rankCounters = new Map<string, number>();
  readonly gate = new PauseGate();
  policyVersion = 0;
  private healthTimer: NodeJS.Timeout | null = null;
  private healthIntervalMs = 5000;

  constructor(configs: EngineConfig[], readonly timeouts: EngineTimeouts = DEFAULT_ENGINE_TIMEOUTS) {
    for (const config of configs) this.add(config);
  }

  add(config: EngineConfig): void {
    if (this.engines.has(config.id)) throw new Error(`duplicate engine id ${config.id}`);
    if (!config.replicas.length) throw new Error(`engine ${config.id} has no replicas`);
    this.engines.set(config.id, {
      config,
      adapter: createAdapter(config),
      replicas: config.replicas.map((url) => ({ url, healthy: true, inFlight: 0, lastCheckedAt: null, engineLoad: null, failures: 0, nextCheckAt: 0, stats: new ReplicaStats() })),
      failovers: 0,
      queued: 0,
    });
  }

  remove(id: string): boolean {
    for (const [session, s] of this.sticky) if (s.engineId === id) this.sticky.delete(session);
    return this.engines.delete(id);
  }

  list(): PoolEngine[] { return [...this.engines.values()]; }
  get(id: string): PoolEngine | undefined { return this.engines.get(id); }
  get defaultEngineId(): string | undefined { return this.engines.keys().next().value; }

  /** The engine's whole context length (its first replica's, as the engine reports it); null when unknown. */
  async contextLength(id: string, signal?: AbortSignal): Promise<number | null> {
    const e = this.engines.get(id);
    const replica = e?.config.replicas[0];
    return e && replica ? contextLength(driverFor(e.config.kind), replica, signal) : null;
  }
  get inFlightCount(): number { return this.inFlight.size; }

  /** A session keeps the replica it got first (the least-loaded healthy one) while that replica is healthy. */
  private pick(engine: PoolEngine, sessionId: string, exclude: Set<string>): { replica: ReplicaState; rank?: number } {
    const stuck = this.sticky.get(sessionId);
    const current = stuck?.engineId === engine.config.id ? engine.replicas.find((r) => r.url === stuck.url) : undefined;
    if (current && current.healthy && !exclude.has(current.url)) return { replica: current, rank: stuck!.rank };
    const open = engine.replicas.filter((r) => !exclude.has(r.url));
    const healthy = open.filter((r) => r.healthy);
    const candidates = healthy.length ? healthy : open;
    if (!candidates.length) throw new EngineError(`no replica of engine ${engine.config.id} is reachable`, 502);
    const load = (r: ReplicaState) => Math.max(r.inFlight, r.engineLoad ?? 0);
    const replica = candidates.reduce((a, b) => (load(b) < load(a) ? b : a));
    const dp = engine.config.dataParallelSize;
    let rank: number | undefined;
    if (dp && dp > 1) {
      const n = this.rankCounters.get(replica.url) ?? 0;
      this.rankCounters.set(replica.url, n + 1);
      rank = n % dp;
    }
    this.sticky.delete(sessionId);
    this.sticky.set(sessionId, { engineId: engine.config.id, url: replica.url, rank });
    // Bounded: the oldest sessions' pins go first; a forgotten session just gets a least-loaded pick again.
    if (this.sticky.size > MAX_STICKY_SESSIONS) this.sticky.delete(this.sticky.keys().next().value!);
    return { replica, rank };
  }

  /** A replica for a non-generation call (scoring, tokenizing), counted as in flight until released. */
  acquire(engineId: string, sessionId: string): { engine: PoolEngine; replica: ReplicaState; release(): void } {
    const engine = this.engines.get(engineId);
    if (!engine) throw new EngineError(`unknown engine ${engineId}`, 404);
    const { replica } = this.pick(engine, sessionId, new Set());
    replica.inFlight++;
    let released = false;
    return { engine, replica, release: () => { if (!released) { released = true; replica.inFlight--; } } };
  }

  run(engineId: string, sessionId: string, input: PoolRunInput): PoolRun {
    const engine = this.engines.get(engineId);
    if (!engine) throw new EngineError(`unknown engine ${engineId}`, 404);
    const state = { replica: '', admittedAt: null as number | null, policyVersion: this.policyVersion };
    const pool = this;
    async function* events(): AsyncGenerator<CanonicalDelta, EngineResult, void> {
      engine!.queued++;
      try {
        await pool.gate.admit(input.signal);
      } finally {
        engine!.queued--;
      }
      state.admittedAt = performance.now();
      state.policyVersion = pool.policyVersion;
      const { router } = engine!.config;
      const headers = routingHeaders(router, sessionId);
      const tried = new Set<string>();
      for (;;) {
        const { replica, rank } = pool.pick(engine!, sessionId, tried);
        state.replica = replica.url;
        const controller = new AbortController();
        const onOuterAbort = () => controller.abort(input.signal.reason);
        input.signal.addEventListener('abort', onOuterAbort, { once: true });
        pool.inFlight.add(controller);
        replica.inFlight++;
        const started = performance.now();
        let firstAt: number | null = null;
        let tokens = 0;
        let ok = false;
        try {
          const gen = engine!.adapter.generate({ ...input, replica: replica.url, signal: controller.signal, dataParallelRank: rank, headers, timeouts: pool.timeouts });
          let step = await gen.next();
          while (!step.done) {
            firstAt ??= performance.now();
            yield step.value;
            step = await gen.next();
          }
          tokens = step.value.promptIds.length + step.value.outputIds.length;
          ok = true;
          replica.failures = 0;
          return step.value;
        } catch (err) {
          if (controller.signal.aborted && !input.signal.aborted) throw new EngineAbortedError(String(controller.signal.reason ?? 'aborted: engines paused'));
          if (input.signal.aborted) throw err;
          // Behind a router the replica URL is the router: what it strips, every engine behind it lacks, so no failover.
          if (router && err instanceof CaptureError) throw explainCaptureBehindRouter(engine!.config.id, router, err);
          if (isReplicaFailure(err)) {
            pool.markUnhealthy(replica);
            tried.add(replica.url);
            if (input.canFailover() && engine!.replicas.some((r) => !tried.has(r.url) && r.healthy)) { engine!.failovers++; continue; }
          }
          throw err;
        } finally {
          input.signal.removeEventListener('abort', onOuterAbort);
          pool.inFlight.delete(controller);
          replica.inFlight--;
          replica.stats.observe({ tokens, totalMs: performance.now() - started, ttftMs: firstAt === null ? null : firstAt - started, ok });
        }
      }
    }
    return {
      get replica() { return state.replica; },
      get admittedAt() { return state.admittedAt; },
      get policyVersion() { return state.policyVersion; },
      events: events(),
    };
  }

  private markUnhealthy(r: ReplicaState): void {
    r.healthy = false;
    r.failures++;
    // A failed replica is probed again after the check interval, doubling up to 30 s while it stays down.
    r.nextCheckAt = Date.now() + Math.min(this.healthIntervalMs * 2 ** Math.min(r.failures - 1, 16), MAX_BACKOFF_MS);
  }

  /**
   * Pause new engine calls; waits up to timeoutMs for in-flight calls to drain (abort mode cancels them).
   * With `forward`, the engines' own pause routes are called once Rollgate's calls have drained.
   */
  async pause(mode: PauseMode, timeoutMs = 30_000, forward = false) {
    this.gate.pause(mode);
    const inFlightAtPause = this.inFlight.size;
    if (mode === 'abort') for (const c of this.inFlight) c.abort('aborted: engines paused for a weight update');
    const deadline = Date.now() + timeoutMs;
    while (this.inFlight.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    const remaining = this.inFlight.size;
    const forwarded = forward ? await this.forward('pause', mode) : [];
    return { mode, inFlightAtPause, drained: inFlightAtPause - remaining, remaining, forwarded };
  }

  /** Opens the gate (queued calls proceed); with `forward`, resumes the engines first. */
  async resume(forward = false) {
    const forwarded = forward ? await this.forward('resume') : [];
    this.gate.resume();
    return { forwarded };
  }

  private forward(action: 'pause' | 'resume', mode?: PauseMode): Promise<ForwardResult[]> {
    return Promise.all(this.list().flatMap((e) =>
      e.replicas.map((r) => forwardToEngine(e.config.id, e.config.kind, r.url, action, mode))));
  }

  /** Checks due replicas: healthy ones every interval, failed ones with backoff; reads load from /metrics. */
  async checkHealth(force = false): Promise<void> {
    const now = Date.now();
    await Promise.all(this.list().flatMap((e) => e.replicas.map(async (r) => {
      if (!force && !r.healthy && now < r.nextCheckAt) return;
      const healthy = await e.adapter.health(r.url);
      r.lastCheckedAt = Date.now();
      if (healthy) {
        r.healthy = true;
        r.failures = 0;
        r.engineLoad = (await readEngineLoad(e.config.kind, r.url).then((l) => (l ? l.running + l.waiting : null)));
      } else {
        this.markUnhealthy(r);
      }
    })));
  }

  /**
   * Probes one engine's replicas now (before a batch starts): ok when at least one answers; otherwise
   * what went wrong with each (connection refused, timeout, HTTP status).
   */
  async probeEngine(id: string): Promise<{ ok: boolean; problems: string[] }> {
    const e = this.engines.get(id);
    if (!e) return { ok: false, problems: [`unknown engine ${id}`] };
    const problems: string[] = [];
    await Promise.all(e.replicas.map(async (r) => {
      const healthy = await e.adapter.health(r.url);
      r.lastCheckedAt = Date.now();
      if (healthy) {
        r.healthy = true;
        r.failures = 0;
        return;
      }
      this.markUnhealthy(r);
      problems.push((await healthProblem(r.url)) ?? `${r.url}/health: check failed`);
    }));
    return { ok: problems.length < e.replicas.length, problems };
  }

  startHealthChecks(intervalMs = 5000): void {
    if (this.healthTimer) return;
    this.healthIntervalMs = intervalMs;
    const tick = () => { this.checkHealth().catch(() => undefined).finally(() => { if (this.healthTimer) this.healthTimer = setTimeout(tick, intervalMs).unref(); }); };
    this.healthTimer = setTimeout(tick, 0).unref();
  }

  stopHealthChecks(): void {
    if (this.healthTimer) clearTimeout(this.healthTimer);
    this.healthTimer = null;
  }
}
