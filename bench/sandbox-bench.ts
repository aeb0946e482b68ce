// `npx tsx bench/sandbox-bench.ts [--starts 50]`: sandbox start latency per runtime (issue 11) against a
// bare process spawn, in one run. JSON on stdout (also the `sandbox` section of `npm run bench`).
// Each start runs `/bin/true` to its exit:
//   bare            — a host child process (the local runtime's way)
//   bwrap           — the bwrap command line the runtime uses (namespaces, mounts, prlimit), nothing else
//   bwrap+forwarder — a full agent launch through the runtime: the in-sandbox Node forwarder listens, then runs the agent
//   docker          — a container of the base image (create, attach, start, wait, remove), as the runtime runs it
//   docker+forwarder— a full agent launch in a container through the runtime
// Targets (issue 11): bwrap p50 ≤ 15 ms added over bare; docker p50 ≤ 400 ms.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serveRunSocket } from '../src-main/gateway/run-socket.js';
import { bwrapArgs, type BwrapMount } from '../src-main/rollouts/runtimes/bwrap/args.js';
import { bwrapAvailable, bwrapRuntime } from '../src-main/rollouts/runtimes/bwrap/index.js';
import { dockerAvailable, dockerClient, dockerRuntime, ensureBaseImage, runContainer } from '../src-main/rollouts/runtimes/docker/index.js';
import { runProcess } from '../src-main/rollouts/runtimes/process.js';
import { nodeBinDir } from '../src-main/rollouts/runtimes/run-dirs.js';
import { DEFAULT_LIMITS, type Runtime } from '../src-main/rollouts/runtimes/types.js';
import { summarize, type Summary } from './stats.js';

const argv = process.argv.slice(2);
const STARTS = (() => { const i = argv.indexOf('--starts'); return i >= 0 ? Number(argv[i + 1]) : 50; })();
const log = (s: string) => process.stderr.write(`[sandbox-bench] ${s}\n`);

async function timed(n: number, run: () => Promise<{ exitCode: number | null; spawnError: string | null; stderr: string }>): Promise<Summary> {
  const samples: number[] = [];
  await run(); // warm-up (page cache, image layers)
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const r = await run();
    samples.push(performance.now() - t);
    if (r.exitCode !== 0) throw new Error(`start ${i} failed: ${r.spawnError ?? r.stderr.slice(-500)}`);
  }
  return summarize(samples);
}

/** Full launches through a runtime: one prepared sandbox per start (prepare/dispose not timed). */
async function launches(runtime: Runtime, root: string, n: number): Promise<Summary> {
  const samples: number[] = [];
  const route = (_req: unknown, res: { writeHead(c: number): { end(): void } }) => res.writeHead(404).end();
  for (let i = 0; i <= n; i++) {
    const sandbox = await runtime.prepare({
      id: `bench-${i}`, root: join(root, `run-${i}`), tools: [nodeBinDir()],
      gateway: { serve: (path) => serveRunSocket(route as never, '0'.repeat(32), path), hostBaseUrl: 'http://127.0.0.1:8321' },
    });
    const t = performance.now();
    const r = await sandbox.launch({ file: '/bin/true', args: [], env: { PATH: '/usr/bin:/bin' } }, { timeoutMs: 60_000 });
    const elapsed = performance.now() - t;
    await sandbox.dispose(false);
    if (r.exitCode !== 0) throw new Error(`${runtime.name} launch failed: ${r.spawnError ?? r.stderr.slice(-500)}`);
    if (i > 0) samples.push(elapsed); // the first one warms up
  }
  return summarize(samples);
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'rollgate-sandbox-bench-'));
  const env = { PATH: '/usr/bin:/bin' };
  const out: Record<string, unknown> = { starts: STARTS };
  try {
    log(`bare spawn × ${STARTS}`);
    const bare = await timed(STARTS, () => runProcess({ file: '/bin/true', args: [], cwd: root, env, timeoutMs: 10_000 }));
    out.bare = bare;
    const added = (s: Summary) => ({ p50: s.p50 - bare.p50, p99: s.p99 - bare.p99 });

    const bw = bwrapAvailable();
    if (bw.ok) {
      log(`bwrap × ${STARTS}`);
      const mounts: BwrapMount[] = [{ host: root, sandbox: '/work', mode: 'rw' }];
      const args = bwrapArgs({ mounts, cwd: '/work', limits: DEFAULT_LIMITS, command: ['/bin/true'] });
      const s = await timed(STARTS, () => runProcess({ file: 'bwrap', args, cwd: root, env, timeoutMs: 10_000 }));
      log(`bwrap+forwarder × ${STARTS}`);
      const full = await launches(bwrapRuntime, join(root, 'bwrap-runs'), STARTS);
      out.bwrap = { ...s, added: added(s) };
      out['bwrap+forwarder'] = { ...full, added: added(full) };
    } else out.bwrap = { skipped: bw.reason };

    const dk = await dockerAvailable();
    if (dk.ok) {
      const docker = dockerClient();
      const image = await ensureBaseImage(docker);
      log(`docker × ${STARTS} (${image})`);
      const s = await timed(STARTS, () => runContainer(docker, {
        image, cmd: ['/bin/true'], env, workdir: '/', binds: [], limits: DEFAULT_LIMITS, labels: { 'rollgate.run': 'bench' }, readonlyRootfs: true,
      }, { timeoutMs: 60_000 }));
      log(`docker+forwarder × ${STARTS}`);
      const full = await launches(dockerRuntime, join(root, 'docker-runs'), STARTS);
      out.docker = { ...s, added: added(s) };
      out['docker+forwarder'] = { ...full, added: added(full) };
    } else out.docker = { skipped: dk.reason };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

main().catch((err: Error) => {
  process.stderr.write(`${err.stack ?? err.message}\n`);
  process.exit(1);
});
