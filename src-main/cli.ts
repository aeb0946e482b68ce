// `rollgate` command line (DESIGN §11). Wiring only: each command calls into the app.
import { Command, InvalidArgumentError } from 'commander';
import { createApp } from './app.js';
import { defaultDataDir } from './data-dir.js';
import { startSimEngine } from './engines/sim/index.js';
import { loadTopology } from './engines/topology.js';
import { openInBrowser } from './open-browser.js';

function int(name: string) {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`${name} must be a non-negative integer`);
    return n;
  };
}

function fraction(v: string): number {
  const n = Number(v);
  if (!(n >= 0 && n <= 1)) throw new InvalidArgumentError('must be between 0 and 1');
  return n;
}

function onSignals(close: () => Promise<void>): void {
  let closing = false;
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => {
      if (closing) process.exit(1);
      closing = true;
      close().finally(() => process.exit(0));
    });
  }
}

const program = new Command('rollgate').description('Agentic RL rollout gateway and workbench').showHelpAfterError();

program.command('serve')
  .description('headless server: gateway, control API and UI')
  .option('--host <host>', 'address to bind', '127.0.0.1')
  .option('--port <port>', 'port (0 = any free port)', int('port'), 8321)
  .option('--data-dir <dir>', 'data folder')
  .option('--topology <file>', 'YAML file describing engines')
  .option('--no-sim', 'do not start the embedded simulated engines')
  .option('--control-token <token>', 'token required by the control API (needed off loopback)', process.env.ROLLGATE_CONTROL_TOKEN)
  .option('--open', 'open the UI in a browser once ready')
  .action(async (opts: { host: string; port: number; dataDir?: string; topology?: string; sim: boolean; controlToken?: string; open?: boolean }) => {
    const engines = opts.topology ? loadTopology(opts.topology) : [];
    const app = await createApp({ host: opts.host, port: opts.port, dataDir: opts.dataDir ?? defaultDataDir(), sim: opts.sim, engines, controlToken: opts.controlToken });
    onSignals(app.close);
    console.log(`Rollgate listening on ${app.url}`);
    if (opts.open) openInBrowser(app.url);
  });

program.command('sim')
  .description('run one standalone simulated engine')
  .requiredOption('--flavor <flavor>', 'vllm | sglang', (v) => {
    if (v !== 'vllm' && v !== 'sglang') throw new InvalidArgumentError('flavor must be vllm or sglang');
    return v;
  })
  .option('--host <host>', 'address to bind', '127.0.0.1')
  .option('--port <port>', 'port (0 = any free port)', int('port'), 0)
  .option('--seed <n>', 'policy seed', int('seed'), 7)
  .option('--skill <p>', 'probability of a right answer, 0..1', fraction, 1)
  .option('--ttft-ms <ms>', 'time to first token', int('ttft-ms'), 0)
  .option('--per-token-ms <ms>', 'time per output token', int('per-token-ms'), 0)
  .action(async (opts: { flavor: 'vllm' | 'sglang'; host: string; port: number; seed: number; skill: number; ttftMs: number; perTokenMs: number }) => {
    const sim = await startSimEngine({ flavor: opts.flavor, host: opts.host, port: opts.port, seed: opts.seed, skill: opts.skill, ttftMs: opts.ttftMs, perTokenMs: opts.perTokenMs });
    onSignals(sim.close);
    console.log(`listening on ${sim.url}`);
  });

program.parseAsync(process.argv).catch((err: Error) => {
  console.error(`rollgate: ${err.message}`);
  process.exit(1);
});
