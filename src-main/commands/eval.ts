// `rollgate eval`: runs one batch in-process (embedded sim engines unless --no-sim, port 0) with a
// progress bar on stderr, then prints a per-task reward table on stdout (DESIGN §11).
// Exit codes: 0 batch completed (whatever the rewards), 1 batch failed/cancelled/interrupted, 2 bad input.
import cliProgress from 'cli-progress';
import { InvalidArgumentError, type Command } from 'commander';
import { createApp, type App } from '../app.js';
import { clientToken } from '../control-token.js';
import { defaultDataDir } from '../data-dir.js';
import { loadTopology, loadTopologyFile } from '../engines/topology.js';
import { getHarness, listHarnesses } from '../rollouts/harnesses/index.js';
import type { CaptureHealthReport } from '../api/capture-health.js';
import type { BatchView } from '../rollouts/results.js';
import { loadDataset } from '../rollouts/tasks.js';
import type { RuntimeChoice } from '../rollouts/runtimes/index.js';
import { resolve } from 'node:path';
import { defaultRuntime, fraction, runtimeChoice, userPath } from './options.js';
import { call, holdingServer } from './remote.js';

/** A dataset argument: `demo:NAME` as it is, a file or folder made absolute (see userPath). */
export function datasetArg(v: string): string {
  return /^demo:/.test(v) ? v : userPath(v);
}

function positive(name: string) {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`${name} must be a positive integer`);
    return n;
  };
}

interface EvalOptions {
  dataset: string; harness: string; engine?: string; n: number; concurrency: number; dataDir?: string; timeoutMs?: number;
  command?: string; maxTurns?: number; topology?: string; sim: boolean; skill?: number; json?: boolean; keepWorkDirs?: boolean;
  progress: boolean; server?: string; runtime?: RuntimeChoice; controlTokenFile?: string;
}

const fmt = (x: number | null | undefined, digits = 3) => (x === null || x === undefined || Number.isNaN(x) ? '-' : x.toFixed(digits));
const fmtReward = (r: number | null) => (r === null ? '-' : Number.isInteger(r) ? String(r) : String(Math.round(r * 1000) / 1000));

export function rewardTable(view: BatchView): string {
  const n = Number(view.spec.n ?? 1);
  const ks = Object.keys(view.passAtK).map(Number).sort((a, b) => a - b);
  const head = ['task', 'samples', 'mean', ...ks.map((k) => `pass@${k}`), 'rewards'];
  const rows = view.tasks.map((t) => [
    t.taskId, `${t.scored}/${n}`, fmt(t.meanReward), ...ks.map((k) => fmt(t.passAtK[k])), t.rewards.map(fmtReward).join(' '),
  ]);
  const width = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(width[i]))).join('  ').trimEnd();
  const c = view.counts;
  const out = [
    `batch ${view.id}  ${view.status}  dataset=${view.spec.dataset}  harness=${view.spec.harness}  engine=${view.spec.engine}${view.spec.simulated ? ' (simulated)' : ''}  n=${n}`,
    '',
    line(head),
    line(width.map((w) => '-'.repeat(w))),
    ...rows.map(line),
    '',
    `mean reward ${fmt(view.meanReward)} over ${view.tasks.reduce((a, t) => a + t.scored, 0)} scored samples` +
      (ks.length ? `; ${ks.map((k) => `pass@${k} ${fmt(view.passAtK[k])}`).join(', ')}` : ''),
    `sessions: ${c.finished} finished, ${c.failed} failed, ${c.interrupted} interrupted, ${c.queued} not run (of ${c.total})`,
  ];
  if (view.error) out.push(`error: ${view.error}`);
  // Why samples failed (a broken task, an image that did not build, a verifier that wrote no reward…).
  const problems = view.tasks.flatMap((t) => t.samples.filter((s) => s.error).map((s) => `  ${t.taskId}${n > 1 ? ` #${s.sampleIndex}` : ''}: ${s.error!.split('\n')[0]}`));
  if (problems.length) out.push('', 'problems:', ...problems.slice(0, 50), ...(problems.length > 50 ? [`  … and ${problems.length - 50} more`] : []));
  return `${out.join('\n')}\n`;
}

const counts = (m: Record<string, number>) => Object.entries(m).map(([k, n]) => `${k} ${n}`).join(', ');

/** The batch's capture health under the reward table: one line per engine. */
export function captureLines(h: CaptureHealthReport): string {
  const lines = Object.entries(h.byEngine).map(([engine, c]) => {
    const parts = [
      `${c.traces} traces, ${c.maskedTraces} masked${c.maskedTraces ? ` (${fmt(c.maskedFraction)}: ${counts(c.maskReasons)})` : ''}`,
      `${c.incompleteSessions} incomplete sessions`,
      `chain breaks ${fmt(c.chainBreaks.perTrace)}/trace${c.chainBreaks.total ? ` (${counts(c.chainBreaks.reasons)})` : ''}`,
      ...(c.promptReuse.rate !== null ? [`prompt reuse ${fmt(c.promptReuse.rate)} (token mode)`] : []),
      `retries ${c.retries}`, `${fmt(c.meanCompletionsPerTrace)} completions/trace`,
    ];
    return `capture ${engine}: ${parts.join('; ')}`;
  });
  return lines.length ? `${lines.join('\n')}\n` : '';
}

export function registerEval(program: Command): void {
  program.command('eval')
    .description('run a batch (dataset × harness × engine × n) with a progress bar; print per-task rewards')
    .requiredOption('--dataset <file|demo:NAME>', 'JSONL dataset file, or a demo (demo:calculator, demo:repo-fix)')
    .requiredOption('--harness <name>', 'builtin | claude-code | codex | gemini-cli | qwen-code | opencode | command')
    .option('--engine <id>', 'engine id (default: the first engine, sim-vllm with the embedded sims)')
    .option('-n, --n <n>', 'samples per task', positive('n'), 1)
    .option('--concurrency <c>', 'agents running at once', positive('concurrency'), 4)
    .option('--data-dir <dir>', 'data folder')
    .option('--timeout-ms <ms>', 'per-sample agent time limit', positive('timeout-ms'))
    .option('--command <cmd>', 'command line for --harness command ({{OPENAI_BASE_URL}}, {{API_KEY}}, {{MODEL}}, {{PROMPT}}, …)')
    .option('--max-turns <n>', 'turn limit of the builtin agent', positive('max-turns'))
    .option('--topology <file>', 'YAML file describing engines')
    .option('--no-sim', 'do not start the embedded simulated engines')
    .option('--skill <p>', 'sim policy skill (0..1)', fraction)
    .option('--runtime <name>', 'where agents run: auto (bwrap on Linux when installed, else local) | bwrap | docker | local (unsandboxed)', runtimeChoice)
    .option('--keep-work-dirs', 'keep each run\'s work folder under <data-dir>/runs/')
    .option('--server <url>', 'submit to a running Rollgate (default: the one serving --data-dir, if any; else run here)')
    .option('--control-token-file <file>', 'file (mode 0600) with the control token of the server (default: <data-dir>/control-token when present)')
    .option('--json', 'print the batch result as JSON instead of a table')
    .option('--no-progress', 'no progress bar')
    .action(async (opts: EvalOptions) => {
      process.exitCode = await runEval(opts);
    });
}

/** The batch operations `eval` needs, in this process or on a running server. */
interface BatchBackend {
  /** Validates and starts the batch; throws with the reason on a bad spec. */
  submit(spec: Record<string, unknown>): Promise<{ id: string; runtime: string; warning?: string }>;
  view(id: string): Promise<BatchView>;
  /** Calls `progress` with the batch's view as it changes; returns an unsubscribe. */
  watch(id: string, progress: (view: Pick<BatchView, 'counts' | 'meanReward' | 'status'> & { message?: string }) => void): () => void;
  cancel(id: string): Promise<void>;
  wait(id: string): Promise<BatchView>;
  /** Capture health of the batch's sessions (custody, issue 14). */
  health(id: string): Promise<CaptureHealthReport>;
  close(): Promise<void>;
}

function localBackend(app: App): BatchBackend {
  return {
    async submit(spec) { return app.rollouts.submit(spec); },
    async view(id) { return (await app.rollouts.get(id))!; },
    watch(id, progress) {
      return app.events.subscribe((ev) => {
        if (ev.type !== 'batch' || ev.id !== id) return;
        if (ev.phase?.startsWith('install') || ev.phase === 'installed') {
          const message = ev.message ?? '';
          void app.rollouts.get(id).then((view) => { if (view) progress({ ...view, message }); });
          return;
        }
        if (ev.done !== undefined) void app.rollouts.get(id).then((view) => { if (view) progress(view); });
      });
    },
    async cancel(id) { await app.rollouts.cancel(id); },
    async wait(id) { return (await app.rollouts.wait(id))!; },
    health: (id) => call<CaptureHealthReport>(app.url, `/api/capture-health?batch=${encodeURIComponent(id)}`, undefined),
    close: () => app.close(),
  };
}

const POLL_MS = 1000;

/** A running Rollgate: submit over the control API, then poll the batch until it ends. */
function remoteBackend(url: string, token: string | undefined): BatchBackend {
  const get = (id: string) => call<BatchView>(url, `/api/batches/${encodeURIComponent(id)}`, token);
  const ended = (v: BatchView) => v.status !== 'queued' && v.status !== 'running';
  return {
    async submit(spec) { return call<{ id: string; runtime: string; warning?: string }>(url, '/api/batches', token, { method: 'POST', body: JSON.stringify(spec) }); },
    view: get,
    watch(id, progress) {
      const timer = setInterval(() => { get(id).then(progress, () => undefined); }, POLL_MS);
      return () => clearInterval(timer);
    },
    async cancel(id) { await call(url, `/api/batches/${encodeURIComponent(id)}/cancel`, token, { method: 'POST', body: '{}' }).catch(() => undefined); },
    async wait(id) {
      for (;;) {
        const view = await get(id);
        if (ended(view)) return view;
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
    },
    health: (id) => call<CaptureHealthReport>(url, `/api/capture-health?batch=${encodeURIComponent(id)}`, token),
    async close() { /* the server keeps running */ },
  };
}

/** Where the batch runs: --server, else a server that already holds the data folder, else this process. */
async function openBackend(opts: EvalOptions): Promise<BatchBackend> {
  const dataDir = opts.dataDir ?? defaultDataDir();
  if (opts.server) return remoteBackend(opts.server, clientToken(opts.controlTokenFile, dataDir));
  try {
    return localBackend(await createApp({
      dataDir, port: 0, sim: opts.sim, simSkill: opts.skill, engines: opts.topology ? loadTopology(opts.topology) : [], owner: 'rollgate eval',
    }));
  } catch (e) {
    const running = holdingServer(e);
    if (!running) throw e;
    console.error(`rollgate eval: ${dataDir} is served by the Rollgate at ${running}; submitting the batch there`);
    return remoteBackend(running, clientToken(opts.controlTokenFile, dataDir));
  }
}

async function runEval(given: EvalOptions): Promise<number> {
  // Paths as the user typed them, from the folder they typed them in (npm run starts in the package root).
  const opts: EvalOptions = {
    ...given,
    dataset: datasetArg(given.dataset),
    dataDir: given.dataDir === undefined ? undefined : userPath(given.dataDir),
    topology: given.topology === undefined ? undefined : userPath(given.topology),
  };
  // Cheap checks first, so a typo fails in a second rather than after the engines start.
  try {
    if (!getHarness(opts.harness)) throw new Error(`unknown harness "${opts.harness}"; known: ${listHarnesses().map((h) => h.name).join(', ')}`);
    loadDataset(opts.dataset);
    opts.runtime = defaultRuntime(opts.runtime, opts.topology ? loadTopologyFile(opts.topology) : null, opts.topology);
  } catch (e) {
    console.error(`rollgate eval: ${(e as Error).message}`);
    return 2;
  }
  let backend: BatchBackend;
  try {
    backend = await openBackend(opts);
  } catch (e) {
    console.error(`rollgate eval: ${(e as Error).message}`);
    return 2;
  }
  let id: string;
  try {
    // A server elsewhere resolves a relative dataset path against its own folder: send it absolute.
    const dataset = opts.dataset.startsWith('demo:') ? opts.dataset : resolve(opts.dataset);
    const submitted = await backend.submit({
      dataset, harness: opts.harness, engine: opts.engine, n: opts.n, concurrency: opts.concurrency,
      timeoutMs: opts.timeoutMs, command: opts.command, maxTurns: opts.maxTurns, keepWorkDirs: opts.keepWorkDirs, runtime: opts.runtime,
    });
    id = submitted.id;
    if (submitted.warning) console.error(`rollgate eval: WARNING: ${submitted.warning}`);
  } catch (e) {
    console.error(`rollgate eval: ${(e as Error).message}`);
    await backend.close();
    return 2;
  }

  const showBar = opts.progress && !opts.json;
  const bar = new cliProgress.SingleBar({
    format: ' {bar} {value}/{total} samples | mean reward {mean} | {status}',
    stream: process.stderr,
    hideCursor: true,
    noTTYOutput: true,
    notTTYSchedule: 2000,
    barsize: 30,
  }, cliProgress.Presets.shades_classic);
  if (showBar) {
    const total = (await backend.view(id)).counts.total;
    const runtime = (await backend.view(id)).spec.runtime;
    console.error(`batch ${id}: ${total} samples (${opts.dataset} × ${opts.harness}, n=${opts.n}, concurrency ${opts.concurrency}, runtime ${runtime})`);
    bar.start(total, 0, { mean: '-', status: 'starting' });
  }
  const unsubscribe = backend.watch(id, (view) => {
    if (!showBar) return;
    if (view.message !== undefined) bar.update({ status: view.message.slice(0, 80) });
    else bar.update(view.counts.done, { mean: fmt(view.meanReward), status: `${view.counts.running} running` });
  });

  let interrupted = false;
  const onSignal = () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    console.error('\ncancelling the batch (Ctrl-C again to quit at once)…');
    void backend.cancel(id);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const view = await backend.wait(id);
  unsubscribe();
  if (showBar) {
    bar.update(view.counts.done, { mean: fmt(view.meanReward), status: view.status });
    bar.stop();
  }
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  const health = await backend.health(id).catch(() => null);
  process.stdout.write(opts.json ? `${JSON.stringify({ ...view, captureHealth: health }, null, 2)}\n` : `\n${rewardTable(view)}${health ? captureLines(health) : ''}`);
  await backend.close();
  return view.status === 'completed' ? 0 : 1;
}
