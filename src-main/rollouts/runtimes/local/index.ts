// `local`: a plain child process on the host, in its own process group, with its own work folder and HOME.
// UNSANDBOXED: the agent shares the user's filesystem and every loopback port (the control API included),
// so rewards of local runs are not protected from the agent (DESIGN §9). Kept for macOS/Windows and debugging.
import { rmSync } from 'node:fs';
import { freshCheckDirs } from '../layout.js';
import { killLeftoverProcesses, runProcess, runShell } from '../process.js';
import { checkEnv } from '../check-env.js';
import { prepareRunDirs, writeFiles } from '../run-dirs.js';
import type { Runtime, Sandbox } from '../types.js';

export const localRuntime: Runtime = {
  name: 'local',
  available: async () => ({ ok: true }),
  async prepare(spec) {
    const dirs = prepareRunDirs(spec.root, spec.files, undefined);
    const sandbox: Sandbox = {
      runtime: 'local',
      paths: { work: dirs.work, home: dirs.home, tmp: dirs.tmp },
      host: dirs,
      baseUrl: spec.gateway.hostBaseUrl,
      toolPath: (p) => p,
      writeHome: (files) => writeFiles(dirs.home, files),
      async launch(plan, opts) {
        const result = await runProcess({
          file: plan.file, args: plan.args, cwd: dirs.work, env: plan.env, timeoutMs: opts.timeoutMs, signal: opts.signal,
          maxOutputBytes: opts.maxOutputBytes, onSpawn: (pid) => opts.onStart?.({ pid }),
        });
        // The group kill misses `setsid` daemons; those that kept the run's id in their env go now (Linux).
        // An agent can still shed both: local runs are unsandboxed.
        if (plan.env.ROLLGATE_RUN_ID) killLeftoverProcesses([plan.env.ROLLGATE_RUN_ID]);
        return result;
      },
      check(check, opts) {
        const fresh = freshCheckDirs(dirs.root, check.agentOutput, { host: dirs.work, sandbox: dirs.work });
        const env = checkEnv({ ...fresh, tests: check.checkFiles }, check.env);
        return runShell(check.command, { cwd: dirs.work, env, timeoutMs: opts.timeoutMs, signal: opts.signal, maxOutputBytes: opts.maxOutputBytes });
      },
      async dispose(keep) {
        if (!keep) rmSync(dirs.root, { recursive: true, force: true, maxRetries: 2 });
      },
    };
    return sandbox;
  },
};
