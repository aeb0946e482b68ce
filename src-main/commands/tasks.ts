// `rollgate tasks check PATH`: builds each task's image, runs the `oracle` and `nop` harnesses on every
// task (rollouts/task-check.ts), shows a progress bar, prints which tasks are broken and why.
// Exit codes: 0 every task sound, 1 some task broken (or the check could not finish), 2 bad input.
import cliProgress from 'cli-progress';
import { InvalidArgumentError, type Command } from 'commander';
import { createApp, type App } from '../app.js';
import { defaultDataDir } from '../data-dir.js';
import { startTaskCheck, waitTaskCheck, getTaskCheck, type TaskCheckReport } from '../rollouts/task-check.js';
import { loadDataset } from '../rollouts/tasks.js';

interface CheckOptions { dataDir?: string; concurrency: number; runtime: string; json?: boolean; progress: boolean }

const fmt = (r: number | null) => (r === null ? '-' : String(Math.round(r * 1000) / 1000));

export function taskCheckTable(report: TaskCheckReport): string {
  const head = ['task', 'oracle', 'nop', 'verdict'];
  const rows = report.tasks.map((t) => [t.taskId, fmt(t.oracle), fmt(t.nop), t.ok ? 'ok' : `BROKEN: ${t.problems.join('; ') || 'did not finish'}`]);
  const width = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (i === 3 ? 0 : r[i].length))));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(width[i]))).join('  ');
  const sound = report.tasks.filter((t) => t.ok).length;
  return [line(head), line(width.map((w, i) => (i === 3 ? '-------' : '-'.repeat(w)))), ...rows.map(line), '',
    `${sound} of ${report.tasks.length} tasks sound, ${report.tasks.length - sound} broken (oracle must score 1, nop 0)`, ''].join('\n');
}

function positiveInt(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
}

export function registerTasks(program: Command): void {
  const tasks = program.command('tasks').description('task folders (Harbor format) and datasets');
  tasks.command('check <path>')
    .description('build each task, run the oracle (must score 1) and nop (must score 0) harnesses, report broken tasks')
    .option('--data-dir <dir>', 'data folder')
    .option('--concurrency <c>', 'tasks checked at once', positiveInt, 2)
    .option('--runtime <name>', 'runtime the tasks run in', 'docker')
    .option('--json', 'print the report as JSON')
    .option('--no-progress', 'no progress bar')
    .action(async (path: string, opts: CheckOptions) => {
      process.exitCode = await runCheck(path, opts);
    });
}

async function runCheck(path: string, opts: CheckOptions): Promise<number> {
  try {
    loadDataset(path);
  } catch (e) {
    console.error(`rollgate tasks check: ${(e as Error).message}`);
    return 2;
  }
  let app: App;
  try {
    app = await createApp({ dataDir: opts.dataDir ?? defaultDataDir(), port: 0, sim: true, engines: [] });
  } catch (e) {
    console.error(`rollgate tasks check: ${(e as Error).message}`);
    return 2;
  }
  let started: Awaited<ReturnType<typeof startTaskCheck>>;
  try {
    started = await startTaskCheck(app.rollouts, { dataset: path, runtime: opts.runtime, concurrency: opts.concurrency });
  } catch (e) {
    console.error(`rollgate tasks check: ${(e as Error).message}`);
    await app.close();
    return 2;
  }
  const first = (await getTaskCheck(app.rollouts, started.id))!;
  const showBar = opts.progress && !opts.json;
  const bar = new cliProgress.SingleBar({
    format: ' {bar} {value}/{total} runs (oracle + nop) | {status}', stream: process.stderr, hideCursor: true, noTTYOutput: true, notTTYSchedule: 2000, barsize: 30,
  }, cliProgress.Presets.shades_classic);
  if (showBar) {
    console.error(`checking ${first.tasks.length} task(s) in ${path} (runtime ${opts.runtime})`);
    bar.start(first.total, 0, { status: 'starting' });
  }
  const unsubscribe = app.events.subscribe((ev) => {
    if (ev.type !== 'batch' || !showBar || (ev.id !== started.oracleBatch && ev.id !== started.nopBatch)) return;
    void getTaskCheck(app.rollouts, started.id).then((now) => {
      bar.update(now?.done ?? 0, { status: ev.message ? ev.message.slice(0, 80) : `${now?.broken ?? 0} broken so far` });
    });
  });
  const onSignal = () => { void app.rollouts.cancel(started.oracleBatch); void app.rollouts.cancel(started.nopBatch); };
  process.once('SIGINT', onSignal);
  const report = (await waitTaskCheck(app.rollouts, started.id))!;
  unsubscribe();
  process.off('SIGINT', onSignal);
  if (showBar) {
    bar.update(report.done, { status: report.status });
    bar.stop();
  }
  process.stdout.write(opts.json ? `${JSON.stringify(report, null, 2)}\n` : `\n${taskCheckTable(report)}`);
  await app.close();
  return report.status === 'completed' && report.tasks.every((t) => t.ok) ? 0 : 1;
}
