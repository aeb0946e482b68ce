// `rollgate sim`: one standalone simulated engine.
import { InvalidArgumentError, type Command } from 'commander';
import { startSimEngine } from '../engines/sim/index.js';
import { fraction, int, onSignals } from './options.js';

export function registerSim(program: Command): void {
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
}
