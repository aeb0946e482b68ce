// Weight-sync control (pause, resume, policy version; DESIGN §4, §12) behind one interface, so the control
// API does not care whether it runs alone or in a cluster.
// - `localEngineControl`: one process; the engine pool's gate and version, the version stored.
// - `clusterEngineControl`: the state is stored (settings) and pushed to every node over the bus; each node
//   applies it to its own pool. A pause completes when every live node reports drained (no engine call in
//   flight), or after its timeout, naming the nodes that did not.
import { randomBytes } from 'node:crypto';
import type { EnginePool, PauseMode } from '../engines/pool.js';
import type { ForwardResult } from '../engines/engine-control.js';
import { POLICY_VERSION_SETTING, type SettingsStore } from '../store/index.js';
import type { ControlBus } from './bus.js';
import type { NodeRegistry } from './nodes.js';

/** Where a cluster keeps its pause state (null when running). */
export const PAUSE_SETTING = 'enginePause';

export interface NodePauseReport { id: string; drained: boolean; inFlightAtPause: number; remaining: number }

export interface PauseResult {
  mode: PauseMode;
  inFlightAtPause: number;
  drained: number;
  remaining: number;
  forwarded: ForwardResult[];
  /** Cluster only: each live node's report, and the live nodes that did not report drained in time. */
  nodes?: NodePauseReport[];
  notDrained?: string[];
}

export interface EngineControl {
  pause(mode: PauseMode, timeoutMs: number, forward: boolean): Promise<PauseResult>;
  resume(forward: boolean): Promise<{ released: number; forwarded: ForwardResult[] }>;
  setPolicyVersion(version: number): Promise<number>;
}

export function localEngineControl(pool: EnginePool, settings: SettingsStore): EngineControl {
  return {
    pause: (mode, timeoutMs, forward) => pool.pause(mode, timeoutMs, forward),
    async resume(forward) {
      const released = pool.gate.queued;
      const { forwarded } = await pool.resume(forward);
      return { released, forwarded };
    },
    async setPolicyVersion(version) {
      // Durable first: after a restart, completions keep the version the trainer set last.
      await settings.set(POLICY_VERSION_SETTING, version);
      pool.policyVersion = version;
      return version;
    },
  };
}

interface PauseMsg { kind: 'pause'; requestId: string; mode: PauseMode; timeoutMs: number; forward: boolean }
interface DrainedMsg { kind: 'drained'; requestId: string; inFlightAtPause: number; remaining: number; from: string }

/** Slack on top of the pause timeout for the last reports to travel back. */
const REPORT_SLACK_MS = 2000;

export class ClusterEngineControl implements EngineControl {
  private readonly waiters = new Map<string, (msg: DrainedMsg) => void>();
  private readonly unsubscribe: Array<() => void> = [];
  /** The latest local pause's result, so the issuing node can report its own forwarded calls. */
  private lastLocal: { requestId: string; forwarded: ForwardResult[] } | null = null;

  constructor(
    private readonly pool: EnginePool,
    private readonly settings: SettingsStore,
    private readonly bus: ControlBus,
    private readonly registry: NodeRegistry,
  ) {}

  /** Applies the stored state (at start and after the bus reconnects), then follows the bus. */
  async start(): Promise<void> {
    this.unsubscribe.push(this.bus.subscribe((msg) => { void this.onMessage(msg); }));
    this.unsubscribe.push(this.bus.onReconnect(() => { void this.sync(); }));
    await this.sync();
  }

  private async sync(): Promise<void> {
    this.pool.policyVersion = (await this.settings.get<number>(POLICY_VERSION_SETTING)) ?? this.pool.policyVersion;
    const pause = await this.settings.get<{ mode: PauseMode } | null>(PAUSE_SETTING);
    if (pause && this.pool.gate.mode !== pause.mode) this.pool.gate.pause(pause.mode);
    if (!pause && this.pool.gate.mode !== null) this.pool.gate.resume();
  }

  private async onMessage(msg: { kind: string; from: string } & Record<string, unknown>): Promise<void> {
    if (msg.kind === 'policy') {
      this.pool.policyVersion = Number(msg.version);
    } else if (msg.kind === 'resume') {
      await this.pool.resume(false); // the issuing node forwarded already, before it answered
      await this.registry.beat().catch(() => undefined);
    } else if (msg.kind === 'pause') {
      const m = msg as unknown as PauseMsg & { from: string };
      // Only the issuing node forwards to the engines (they are shared), once its own calls have drained.
      const r = await this.pool.pause(m.mode, m.timeoutMs, m.from === this.bus.nodeId && m.forward);
      if (m.from === this.bus.nodeId) this.lastLocal = { requestId: m.requestId, forwarded: r.forwarded };
      await this.registry.beat().catch(() => undefined);
      await this.bus.publish({ kind: 'drained', requestId: m.requestId, inFlightAtPause: r.inFlightAtPause, remaining: r.remaining });
    } else if (msg.kind === 'drained') {
      this.waiters.get(String(msg.requestId))?.(msg as unknown as DrainedMsg);
    }
  }

  async pause(mode: PauseMode, timeoutMs: number, forward: boolean): Promise<PauseResult> {
    await this.settings.set(PAUSE_SETTING, { mode, since: Date.now() });
    const requestId = randomBytes(8).toString('hex');
    const reports = new Map<string, DrainedMsg>();
    const live = new Set((await this.registry.list()).filter((n) => n.alive).map((n) => n.id));
    live.add(this.bus.nodeId);
    let allIn: () => void = () => undefined;
    const done = new Promise<void>((resolve) => { allIn = resolve; });
    this.waiters.set(requestId, (msg) => {
      reports.set(msg.from, msg);
      if ([...live].every((id) => reports.has(id))) allIn();
    });
    try {
      await this.bus.publish({ kind: 'pause', requestId, mode, timeoutMs, forward });
      await Promise.race([done, new Promise((r) => setTimeout(r, timeoutMs + REPORT_SLACK_MS))]);
    } finally {
      this.waiters.delete(requestId);
    }
    const nodes: NodePauseReport[] = [...live].sort().map((id) => {
      const r = reports.get(id);
      return { id, drained: !!r && r.remaining === 0, inFlightAtPause: r?.inFlightAtPause ?? 0, remaining: r?.remaining ?? 0 };
    });
    const sum = (f: (n: NodePauseReport) => number) => nodes.reduce((a, n) => a + f(n), 0);
    const inFlightAtPause = sum((n) => n.inFlightAtPause);
    const remaining = sum((n) => n.remaining);
    return {
      mode, inFlightAtPause, drained: inFlightAtPause - remaining, remaining,
      forwarded: this.lastLocal?.requestId === requestId ? this.lastLocal.forwarded : [],
      nodes, notDrained: nodes.filter((n) => !n.drained).map((n) => n.id),
    };
  }

  async resume(forward: boolean): Promise<{ released: number; forwarded: ForwardResult[] }> {
    await this.settings.set(PAUSE_SETTING, null);
    const released = this.pool.gate.queued;
    // The issuing node resumes (and forwards) before answering; the others follow the bus.
    const { forwarded } = await this.pool.resume(forward);
    await this.bus.publish({ kind: 'resume', forward: false });
    return { released, forwarded };
  }

  async setPolicyVersion(version: number): Promise<number> {
    await this.settings.set(POLICY_VERSION_SETTING, version);
    this.pool.policyVersion = version;
    await this.bus.publish({ kind: 'policy', version });
    return version;
  }

  close(): void {
    for (const u of this.unsubscribe.splice(0)) u();
  }
}
