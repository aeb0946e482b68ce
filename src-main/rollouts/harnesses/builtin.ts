// `builtin`: the small tool-using agent shipped with Rollgate (builtin-agent.mjs, plain Node, no deps).
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Harness } from './types.js';

export const BUILTIN_AGENT_PATH = join(dirname(fileURLToPath(import.meta.url)), 'builtin-agent.mjs');

export const builtinHarness: Harness = {
  name: 'builtin',
  description: 'small tool-using agent shipped with Rollgate (OpenAI chat; tools: calculator, read_file, write_file, run)',
  kind: 'builtin',
  dialect: 'openai-chat',
  defaultTimeoutMs: 120_000,
  validate(options) {
    if (options.maxTurns !== undefined && !(Number.isInteger(options.maxTurns) && options.maxTurns > 0)) return 'maxTurns must be a positive integer';
    return null;
  },
  homeFiles: () => ({}),
  launch(ctx) {
    return {
      file: process.execPath,
      args: [BUILTIN_AGENT_PATH, '--max-turns', String(ctx.options.maxTurns ?? 8), '--', ctx.prompt],
      // Inside the desktop app process.execPath is Electron: run it as plain Node.
      env: process.versions.electron ? { ELECTRON_RUN_AS_NODE: '1' } : ({} as Record<string, string>),
    };
  },
};
