// Engine pool (DESIGN §4): routing with sticky replicas, in-flight accounting, the policy version.
import type { EngineAdapter, EngineConfig } from './types.js';
import { VllmChatAdapter } from './vllm-chat.js';
import { SglangTokenAdapter } from './sglang-token.js';

export interface ReplicaState {
  url: string;
  healthy: boolean;
  inFlight: number;
  lastCheckedAt: number | null;
}

export interface PoolEngine {
  config: EngineConfig;
  adapter: EngineAdapter;
  replicas: ReplicaState[];
}

export interface ReplicaLease {
  engine: PoolEngine;
  replica: ReplicaState;
  release(): void;
}

export function createAdapter(config: EngineConfig): EngineAdapter {
  if (config.kind === 'vllm') {
    if (config.mode !== 'chat') throw new Error(`engine ${config.id}: vLLM token mode is not available yet; use mode: chat`);
    return new VllmChatAdapter(config);
  }
  if (config.kind === 'sglang') return new SglangTokenAdapter(config);
  throw new Error(`engine ${(config as EngineConfig).id}: unknown kind ${(config as EngineConfig).kind}`);
}

export class EnginePool {
  private readonly engines = new Map<string, PoolEngine>();
  private readonly sticky = new Map<string, string>();
  policyVersion = 0;

  constructor(configs: EngineConfig[]) {
    for (const config of configs) this.add(config);
  }

  add(config: EngineConfig): void {
    if (this.engines.has(config.id)) throw new Error(`duplicate engine id ${config.id}`);
    if (!config.replicas.length) throw new Error(`engine ${config.id} has no replicas`);
    this.engines.set(config.id, {
      config,
      adapter: createAdapter(config),
      replicas: config.replicas.map((url) => ({ url, healthy: true, inFlight: 0, lastCheckedAt: null })),
    });
  }

  list(): PoolEngine[] { return [...this.engines.values()]; }
  get(id: string): PoolEngine | undefined { return this.engines.get(id); }
  get defaultEngineId(): string | undefined { return this.engines.keys().next().value; }

  /** A session keeps the replica it got first (least-loaded healthy one) while that replica is healthy. */
  acquire(engineId: string, sessionId: string): ReplicaLease {
    const engine = this.engines.get(engineId);
    if (!engine) throw new Error(`unknown engine ${engineId}`);
    const stickyUrl = this.sticky.get(sessionId);
    let replica = engine.replicas.find((r) => r.url === stickyUrl && r.healthy);
    if (!replica) {
      const candidates = engine.replicas.filter((r) => r.healthy);
      const pool = candidates.length ? candidates : engine.replicas;
      replica = pool.reduce((a, b) => (b.inFlight < a.inFlight ? b : a));
      this.sticky.set(sessionId, replica.url);
    }
    const chosen = replica;
    chosen.inFlight++;
    let released = false;
    return { engine, replica: chosen, release: () => { if (!released) { released = true; chosen.inFlight--; } } };
  }

  forgetSession(sessionId: string): void { this.sticky.delete(sessionId); }

  async checkHealth(): Promise<void> {
    await Promise.all(this.list().flatMap((e) => e.replicas.map(async (r) => {
      r.healthy = await e.adapter.health(r.url);
      r.lastCheckedAt = Date.now();
    })));
  }
}
