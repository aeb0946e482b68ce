// The Runtime interface (DESIGN §7): where and how one rollout sample runs. One lifecycle for every
// backend: prepare (run folder, mounts, the session's way in) → launch (the agent) → check (each grading
// command, in a fresh sandbox once every agent process is gone) → dispose. The rollout manager calls
// nothing else that touches the host: no spawn, no kill, no file write outside a runtime.
import { availableParallelism } from 'node:os';
import type { ProcessResult } from './process.js';

export type RuntimeName = 'bwrap' | 'docker' | 'local';
export type RuntimeChoice = RuntimeName | 'auto';
export const RUNTIME_CHOICES: readonly RuntimeChoice[] = ['auto', 'bwrap', 'docker', 'local'];

/** Per-sandbox resource limits (bwrap: rlimits inside the sandbox; docker: the container's cgroup). */
export interface SandboxLimits {
  /** Writable memory (bwrap: RLIMIT_DATA per process; docker: the container's memory limit). */
  memoryMb: number;
  /** Processes/threads (bwrap: RLIMIT_NPROC, counted per user; docker: pids limit). */
  processes: number;
  /** Largest file a process may write. */
  fileSizeMb: number;
  /** CPU seconds per process (bwrap only; docker runs are bounded by the timeout). */
  cpuSeconds: number;
  /** CPUs the container may use (docker only; Harbor `cpus`). Unset: `DEFAULT_DOCKER_CPUS`. */
  cpus?: number;
}

export const DEFAULT_LIMITS: SandboxLimits = { memoryMb: 8192, processes: 4096, fileSizeMb: 4096, cpuSeconds: 3600 };

/** A docker run's CPU quota when the task names none: two CPUs, or fewer on a smaller host (docker refuses more than it has). */
export const DEFAULT_DOCKER_CPUS = Math.min(2, availableParallelism());

/** The one way out of a sandbox: a per-run Unix socket serving only that run's session routes. */
export interface GatewayLink {
  /** Listens on `path` (mode 0600) and serves only `/s/<key>/…` and `HEAD /`; resolves to its closer. */
  serve(path: string): Promise<() => Promise<void>>;
  /** The main server's base URL (what `local` runs use: they share the host's network). */
  hostBaseUrl: string;
}

export interface PrepareSpec {
  /** Names the run (the session id). */
  id: string;
  /** Host folder of the run (`<dataDir>/runs/<id>`): created fresh, removed by dispose unless kept. */
  root: string;
  /** Task files written into the work folder. */
  files?: Record<string, string>;
  /** Host paths the agent and checks need read-only (its install, the Node that runs it): see `Sandbox.toolPath`. */
  tools: string[];
  /**
   * Host folders mounted read-only at their own host path, for the agent and checks: inside the desktop
   * app, Electron's folder (the `node` shim execs Electron by its host path).
   */
  toolsAtHostPath?: string[];
  gateway: GatewayLink;
  /** Container image (docker); default: the locally built base image. */
  image?: string;
  /** Work folder as the agent sees it (docker/bwrap; default `/work`). */
  workdir?: string;
  /**
   * docker: the image already holds the work folder at `workdir` (Harbor environments), so nothing is
   * mounted there; checks then run in a fresh container made from a snapshot of the agent's finished one.
   */
  workFromImage?: boolean;
  /** docker: host folders mounted read-only at `target` for the agent only (the oracle's /solution). */
  mounts?: Array<{ host: string; target: string }>;
  limits?: Partial<SandboxLimits>;
}

/** Paths as the agent sees them (inside the sandbox). */
export interface AgentPaths { work: string; home: string; tmp: string }

export interface RunOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  maxOutputBytes?: number;
  /** The run's id for the process table (pid or container id), once started. */
  onStart?: (handle: { pid: number | null; containerId?: string }) => void;
}

export interface LaunchSpec { file: string; args: string[]; env: Record<string, string> }

export interface CheckSpec {
  /** A shell command line, run with `/bin/sh -c` in the (agent's) work folder. */
  command: string;
  env: Record<string, string>;
  /** A host folder of check files, mounted read-only at `CHECK_FILES_DIR-<random>` (the task's hidden tests). */
  checkFiles?: string;
  /** The agent's stdout, given to the check as the file `$ROLLGATE_AGENT_OUTPUT`. */
  agentOutput: string;
  /** A host folder mounted writable only into this check (e.g. Harbor's `/logs/verifier`), where it writes results. */
  outputDir?: { host: string; sandbox: string };
  /** docker with `workFromImage`: start from the task's own image, not the snapshot of the agent's container (SWE-bench's clean check). */
  fromImage?: boolean;
  /**
   * docker with `workFromImage`: start from the task's own image and carry over only this folder of the
   * agent's container (Harbor's verifier): nothing the agent changed outside it is seen.
   */
  carryWork?: string;
}

/** Where a check sees the task's hidden tests: this plus a random suffix per check (`$ROLLGATE_TESTS_DIR`). */
export const CHECK_FILES_DIR = '/run/rollgate/tests';

export interface Sandbox {
  readonly runtime: RuntimeName;
  readonly paths: AgentPaths;
  /** Host-side folders (for reading what the run left: reward files, outputs). */
  readonly host: AgentPaths & { root: string };
  /** The origin the agent uses to reach its session (`http://127.0.0.1:PORT`). */
  readonly baseUrl: string;
  /** A host tool path (Node's folder, the agent's executable) as the agent sees it. */
  toolPath(hostPath: string): string;
  /** Writes files into the agent's HOME (harness config). */
  writeHome(files: Record<string, string>): void;
  /** Runs the agent; resolves after every process it started is gone. */
  launch(spec: LaunchSpec, opts: RunOptions): Promise<ProcessResult>;
  /** Runs one grading command in a fresh sandbox: fresh HOME, no network, the work folder mounted. */
  check(spec: CheckSpec, opts: RunOptions): Promise<ProcessResult>;
  /** Stops everything left and removes the run folder unless `keep`. */
  dispose(keep: boolean): Promise<void>;
}

export interface Runtime {
  readonly name: RuntimeName;
  /** Whether this machine can run it; a reason when not. */
  available(): Promise<{ ok: true } | { ok: false; reason: string }>;
  prepare(spec: PrepareSpec): Promise<Sandbox>;
}
