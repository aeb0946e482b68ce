// `bwrap` (bubblewrap, rootless, starts in milliseconds): the default on Linux when it is installed and
// works. The agent runs inside a fresh set of namespaces (see args.ts) behind the forwarder, whose only
// way out is the run's gateway socket. Checks run in a second, fresh sandbox with the work folder, a new
// HOME and the task's tests (read-only); the agent's sandbox is gone by then.
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { checkEnv } from '../check-env.js';
import { FORWARDER_PATH, IN, freshCheckDirs, prepareLayout, toolMounts } from '../layout.js';
import { runProcess } from '../process.js';
import { SANDBOX_SYSTEM_PATH, nodeBinDir, nodeExecutable, writeFiles } from '../run-dirs.js';
import { DEFAULT_LIMITS, type Runtime, type Sandbox } from '../types.js';
import { bwrapArgs, type BwrapMount } from './args.js';

let probe: { ok: true } | { ok: false; reason: string } | null = null;

/** Whether bwrap is on PATH and can create its namespaces here (user namespaces may be disabled). */
export function bwrapAvailable(): { ok: true } | { ok: false; reason: string } {
  if (probe) return probe;
  if (process.platform !== 'linux') return (probe = { ok: false, reason: 'bubblewrap runs on Linux only' });
  const r = spawnSync('bwrap', ['--unshare-all', '--die-with-parent', '--ro-bind', '/', '/', '--', 'true'], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 10_000 });
  if (r.error) probe = { ok: false, reason: (r.error as NodeJS.ErrnoException).code === 'ENOENT' ? 'bwrap is not installed (Debian/Ubuntu/Fedora package "bubblewrap")' : r.error.message };
  else if (r.status !== 0) probe = { ok: false, reason: `bwrap cannot create a sandbox here: ${r.stderr.toString().trim() || `exit ${r.status}`}` };
  else probe = { ok: true };
  return probe;
}

export const bwrapRuntime: Runtime = {
  name: 'bwrap',
  available: async () => bwrapAvailable(),
  async prepare(spec) {
    const layout = await prepareLayout(spec);
    const { host, paths } = layout;
    const limits = { ...DEFAULT_LIMITS, ...spec.limits };
    const mapped = toolMounts(spec.tools);
    const tools = [...mapped.mounts, ...(spec.toolsAtHostPath ?? []).map((p) => ({ host: p, sandbox: p }))].map((m): BwrapMount => ({ ...m, mode: 'ro' }));
    const node = mapped.map(nodeExecutable());
    const sandbox: Sandbox = {
      runtime: 'bwrap',
      paths,
      host,
      baseUrl: `http://127.0.0.1:${layout.port}`,
      toolPath: (p) => mapped.map(p),
      writeHome: (files) => writeFiles(host.home, files),
      launch(plan, opts) {
        const mounts: BwrapMount[] = [
          { host: host.work, sandbox: paths.work, mode: 'rw' },
          { host: host.home, sandbox: paths.home, mode: 'rw' },
          { host: host.tmp, sandbox: paths.tmp, mode: 'rw' },
          { host: host.socketDir, sandbox: IN.socketDir, mode: 'rw' },
          { host: FORWARDER_PATH, sandbox: IN.forwarder, mode: 'ro' },
          ...tools,
        ];
        const args = bwrapArgs({ mounts, cwd: paths.work, limits, command: [node, IN.forwarder, String(layout.port), IN.socket, '--', mapped.map(plan.file), ...plan.args.map(mapped.map)] });
        return runProcess({
          file: 'bwrap', args, cwd: host.root, env: plan.env, timeoutMs: opts.timeoutMs, signal: opts.signal,
          maxOutputBytes: opts.maxOutputBytes, onSpawn: (pid) => opts.onStart?.({ pid }),
        });
      },
      check(check, opts) {
        const fresh = freshCheckDirs(host.root, check.agentOutput, { host: host.work, sandbox: paths.work });
        const mounts: BwrapMount[] = [
          { host: host.work, sandbox: paths.work, mode: 'rw' },
          { host: fresh.home, sandbox: paths.home, mode: 'rw' },
          { host: fresh.tmp, sandbox: paths.tmp, mode: 'rw' },
          { host: fresh.output, sandbox: IN.agentOutput, mode: 'ro' },
          ...(check.checkFiles ? [{ host: check.checkFiles, sandbox: fresh.tests, mode: 'ro' as const }] : []),
          ...(check.outputDir ? [{ host: check.outputDir.host, sandbox: check.outputDir.sandbox, mode: 'rw' as const }] : []),
          ...tools,
        ];
        const env = checkEnv({ home: paths.home, tmp: paths.tmp, output: IN.agentOutput, tests: check.checkFiles ? fresh.tests : undefined }, check.env, SANDBOX_SYSTEM_PATH, mapped.map(nodeBinDir()));
        const args = bwrapArgs({ mounts, cwd: paths.work, limits, command: ['/bin/sh', '-c', check.command] });
        return runProcess({ file: 'bwrap', args, cwd: host.root, env, timeoutMs: opts.timeoutMs, signal: opts.signal, maxOutputBytes: opts.maxOutputBytes });
      },
      async dispose(keep) {
        await layout.closeGateway();
        if (!keep) rmSync(host.root, { recursive: true, force: true, maxRetries: 2 });
      },
    };
    return sandbox;
  },
};
