// Per-engine mutable state: knobs, counters, the pause gate and the in-flight runs it can freeze or abort.
import { prng } from './rng.js';

export type Flavor = 'vllm' | 'sglang';

export interface SimKnobs {
  ttftMs: number;
  perTokenMs: number;
  /** Share of generation requests answered with HTTP 500. */
  failureRate: number;
  /** Share of streaming requests whose socket is destroyed mid-stream. */
  midStreamDropRate: number;
  /** Share of streaming requests that end with an in-stream error event, then [DONE]. */
  midStreamErrorRate: number;
  skill: number;
  /** vLLM chat only: share of answers that report no prompt ids (a capture fault, custody tests). */
  missingIdsRate: number;
  /** vLLM chat only: share of answers whose last token comes without its logprob (a capture fault). */
  shortLogprobsRate: number;
  /**
   * Share of multi-character tokens sampled as two shorter tokens that decode to the same text, as real
   * models sometimes do. Re-tokenizing such output gives different ids; token mode must not.
   */
  nonCanonicalRate: number;
}

export interface SimStats {
  flavor: Flavor;
  requests: number;
  generations: number;
  running: number;
  waiting: number;
  paused: boolean;
  failuresInjected: number;
  dropsInjected: number;
  errorsInjected: number;
  aborted: number;
  promptTokens: number;
  completionTokens: number;
  /** Requests seen per data-parallel rank (header or body field), keyed by rank. */
  dpRanks: Record<string, number>;
  byRoute: Record<string, number>;
}

export type PauseMode = 'abort' | 'wait' | 'keep';

export interface Run {
  aborted: boolean;
  closed: boolean;
}

export class SimState {
  readonly rng: () => number;
  private variantCounter = 0;
  private pausedMode: PauseMode | null = null;
  private resumeWaiters: Array<() => void> = [];
  private idleWaiters: Array<() => void> = [];
  readonly runs = new Set<Run>();
  readonly stats: SimStats;

  constructor(readonly flavor: Flavor, readonly seed: number, public knobs: SimKnobs) {
    this.rng = prng(seed ^ 0x5eed);
    this.stats = {
      flavor, requests: 0, generations: 0, running: 0, waiting: 0, paused: false, failuresInjected: 0,
      dropsInjected: 0, errorsInjected: 0, aborted: 0, promptTokens: 0, completionTokens: 0, dpRanks: {}, byRoute: {},
    };
  }

  /** Request seed when given, else a per-engine counter: deterministic variety across successive requests. */
  variant(requestSeed: unknown, choice: number): number {
    const base = typeof requestSeed === 'number' && Number.isFinite(requestSeed) ? requestSeed : 1_000_003 + this.variantCounter++;
    return base * 64 + choice;
  }

  noteDpRank(rank: unknown): void {
    if (rank === undefined || rank === null || rank === '') return;
    const key = String(rank);
    this.stats.dpRanks[key] = (this.stats.dpRanks[key] ?? 0) + 1;
  }

  rollFailure(): boolean {
    const hit = this.rng() < this.knobs.failureRate;
    if (hit) this.stats.failuresInjected++;
    return hit;
  }

  /** A capture fault to inject into this answer (vLLM chat), or null. */
  rollCaptureFault(): 'missing-ids' | 'short-logprobs' | null {
    const r = this.rng();
    if (r < this.knobs.missingIdsRate) return 'missing-ids';
    if (r < this.knobs.missingIdsRate + this.knobs.shortLogprobsRate) return 'short-logprobs';
    return null;
  }

  /** Stream step (≥1) at which the stream breaks (socket dropped, or an error event), or null. */
  rollMidStream(steps: number): { at: number; kind: 'drop' | 'error' } | null {
    if (steps < 2) return null;
    const r = this.rng();
    const kind = r < this.knobs.midStreamDropRate ? 'drop' : r < this.knobs.midStreamDropRate + this.knobs.midStreamErrorRate ? 'error' : null;
    if (!kind) return null;
    if (kind === 'drop') this.stats.dropsInjected++;
    else this.stats.errorsInjected++;
    return { at: 1 + Math.floor(this.rng() * (steps - 1)), kind };
  }

  get paused(): boolean {
    return this.pausedMode !== null;
  }

  pause(mode: PauseMode): Promise<void> {
    this.pausedMode = mode;
    this.stats.paused = true;
    if (mode === 'abort') {
      for (const r of this.runs) r.aborted = true;
      this.stats.aborted += this.runs.size;
    }
    if (mode === 'wait' && this.runs.size > 0) return new Promise((res) => this.idleWaiters.push(res));
    return Promise.resolve();
  }

  resume(): void {
    this.pausedMode = null;
    this.stats.paused = false;
    const w = this.resumeWaiters;
    this.resumeWaiters = [];
    w.forEach((f) => f());
  }

  /** New generations wait here while paused. */
  async admit(): Promise<Run> {
    if (this.paused) {
      this.stats.waiting++;
      await new Promise<void>((res) => this.resumeWaiters.push(res));
      this.stats.waiting--;
    }
    const run: Run = { aborted: false, closed: false };
    this.runs.add(run);
    this.stats.running = this.runs.size;
    this.stats.generations++;
    return run;
  }

  finish(run: Run): void {
    this.runs.delete(run);
    this.stats.running = this.runs.size;
    if (this.runs.size === 0) {
      const w = this.idleWaiters;
      this.idleWaiters = [];
      w.forEach((f) => f());
    }
  }

  /** Between tokens: sleep, then hold while paused in `keep` mode (in-flight requests are frozen). */
  async tick(run: Run, first: boolean): Promise<void> {
    const ms = first ? this.knobs.ttftMs : this.knobs.perTokenMs;
    if (ms > 0) await new Promise((r) => setTimeout(r, ms));
    while (this.pausedMode === 'keep' && !run.aborted && !run.closed) {
      await new Promise<void>((res) => this.resumeWaiters.push(res));
    }
  }
}
