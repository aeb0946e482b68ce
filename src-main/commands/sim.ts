// `rollgate sim`: one standalone simulated engine.
import { InvalidArgumentError, type Command } from 'commander';
import { FAMILY_NAMES } from '../core/families/index.js';
import { startSimEngine } from '../engines/sim/index.js';
import { familyOption, fraction, int, onSignals } from './options.js';

interface SimOptions {
  flavor: 'vllm' | 'sglang'; host: string; port: number; seed: number; skill: number; ttftMs: number; perTokenMs: number;
  family?: string; tokenizer?: string; model?: string; maxModelLen?: number; failureRate: number; dropRate: number; errorRate: number; nonCanonicalRate: number; missingIdsRate: number; shortLogprobsRate: number;
}

export function registerSim(program: Command): void {
  program.command('sim')
  .description('run one standalone simulated engine')
  .requiredOption('--flavor <flavor>', 'vllm | sglang', (v) => {
    if (v !== 'vllm' && v !== 'sglang') throw new InvalidArgumentError('flavor must be vllm or sglang');
    return v;
  })
  .option('--family <family>', `model family it renders, samples and parses like: ${FAMILY_NAMES.join(' | ')} (default: from the tokenizer, else qwen3)`, familyOption)
  .option('--tokenizer <spec>', "tokenizer: builtin:… or a Hugging Face model folder (default: the family's)")
  .option('--model <name>', 'served model name (default: a model of the family)')
  .option('--host <host>', 'address to bind', '127.0.0.1')
  .option('--port <port>', 'port (0 = any free port)', int('port'), 0)
  .option('--seed <n>', 'policy seed', int('seed'), 7)
  .option('--skill <p>', 'probability of a right answer, 0..1', fraction, 1)
  .option('--ttft-ms <ms>', 'time to first token', int('ttft-ms'), 0)
  .option('--per-token-ms <ms>', 'time per output token', int('per-token-ms'), 0)
  .option('--max-model-len <n>', 'context length (prompt + output tokens)', int('max-model-len'))
  .option('--failure-rate <p>', 'share of calls answered with an HTTP 500, 0..1', fraction, 0)
  .option('--drop-rate <p>', 'share of streams cut mid-answer (connection closed), 0..1', fraction, 0)
  .option('--error-rate <p>', 'share of streams ending in an error event mid-answer, 0..1', fraction, 0)
  .option('--non-canonical-rate <p>', 'share of tokens sampled in a non-canonical split, 0..1', fraction, 0)
  .option('--missing-ids-rate <p>', 'vLLM chat: share of answers reporting no prompt ids (capture fault), 0..1', fraction, 0)
  .option('--short-logprobs-rate <p>', 'vLLM chat: share of answers missing their last logprob (capture fault), 0..1', fraction, 0)
  .action(async (opts: SimOptions) => {
    const sim = await startSimEngine({
      flavor: opts.flavor, family: opts.family, tokenizer: opts.tokenizer, model: opts.model, host: opts.host, port: opts.port, seed: opts.seed, skill: opts.skill, ttftMs: opts.ttftMs, perTokenMs: opts.perTokenMs,
      maxModelLen: opts.maxModelLen, failureRate: opts.failureRate, midStreamDropRate: opts.dropRate, midStreamErrorRate: opts.errorRate, missingIdsRate: opts.missingIdsRate, shortLogprobsRate: opts.shortLogprobsRate,
      nonCanonicalRate: opts.nonCanonicalRate,
    });
    onSignals(sim.close);
    console.log(`listening on ${sim.url}`);
  });
}
