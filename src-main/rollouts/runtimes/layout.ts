// The run folder every runtime shares: `<dataDir>/runs/<id>/` with the agent's `work/`, `home/`, `tmp/`,
// the gateway socket in `sock/` (0700), and one fresh `check-N/` per grading command. Sandboxed runtimes
// mount these at fixed paths (below), so nothing inside a sandbox names a host path except the read-only
// tools (agent install, Node), which keep theirs.
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { prepareRunDirs, type RunDirs } from './run-dirs.js';
import { CHECK_FILES_DIR, type AgentPaths, type PrepareSpec } from './types.js';
import { removeEscapingLinks } from './work-links.js';

export const FORWARDER_PATH = join(dirname(fileURLToPath(import.meta.url)), 'forwarder.mjs');

/** Inside a sandbox. */
export const IN = {
  work: '/work',
  home: '/home/agent',
  tmp: '/tmp',
  socketDir: '/run/rollgate/sock',
  socket: '/run/rollgate/sock/gateway.sock',
  forwarder: '/run/rollgate/forwarder.mjs',
  agentOutput: '/run/rollgate/agent-output.txt',
} as const;

export interface SandboxLayout {
  host: RunDirs & { socketDir: string; socket: string };
  paths: AgentPaths;
  /** Port the forwarder listens on inside the sandbox (the host server's, so URLs keep their shape). */
  port: number;
  closeGateway: () => Promise<void>;
}

export function portOf(baseUrl: string): number {
  const u = new URL(baseUrl);
  return Number(u.port) || (u.protocol === 'https:' ? 443 : 80);
}

/** Creates the run folder and starts the run's gateway socket. */
export async function prepareLayout(spec: PrepareSpec): Promise<SandboxLayout> {
  const dirs = prepareRunDirs(spec.root, spec.files, undefined);
  const socketDir = join(spec.root, 'sock');
  const socket = join(socketDir, 'gateway.sock');
  const closeGateway = await spec.gateway.serve(socket);
  return {
    host: { ...dirs, socketDir, socket },
    paths: { work: spec.workdir ?? IN.work, home: IN.home, tmp: IN.tmp },
    port: portOf(spec.gateway.hostBaseUrl),
    closeGateway,
  };
}

export interface ToolMounts {
  mounts: Array<{ host: string; sandbox: string }>;
  /** A host path (or an argument starting with one) as the sandbox sees it. */
  map(s: string): string;
}

/**
 * Tools (Node, the agent's install) are mounted read-only under `/run/rollgate/tools/<n>/`, never at their
 * host paths: those could lie under the sandbox's own folders (a checkout in /work) or reveal the host's layout.
 */
export function toolMounts(tools: string[]): ToolMounts {
  const mounts = [...new Set(tools)].map((host, i) => ({ host, sandbox: `/run/rollgate/tools/${i}/${basename(host)}` }));
  const byLength = [...mounts].sort((a, b) => b.host.length - a.host.length);
  return {
    mounts,
    map(s) {
      const m = byLength.find((t) => s === t.host || s.startsWith(`${t.host}/`));
      return m ? m.sandbox + s.slice(m.host.length) : s;
    },
  };
}

let checkCounter = 0;

/**
 * A fresh HOME and TMPDIR for one grading command (nothing the agent wrote), the agent's output as a file,
 * and where this check sees the hidden tests: a path with a random suffix, so no link the agent planted
 * can name it. Symlinks in `work` that lead outside it are removed first.
 */
export function freshCheckDirs(
  root: string, agentOutput: string, work?: { host: string; sandbox: string },
): { home: string; tmp: string; output: string; tests: string } {
  if (work) removeEscapingLinks(work.host, work.sandbox);
  const dir = join(root, `check-${++checkCounter}`);
  rmSync(dir, { recursive: true, force: true });
  const home = join(dir, 'home');
  const tmp = join(dir, 'tmp');
  mkdirSync(home, { recursive: true });
  mkdirSync(tmp, { recursive: true });
  const output = join(dir, 'agent-output.txt');
  writeFileSync(output, agentOutput);
  return { home, tmp, output, tests: `${CHECK_FILES_DIR}-${randomBytes(12).toString('hex')}` };
}
