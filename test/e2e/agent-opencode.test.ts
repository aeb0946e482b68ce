// The real opencode CLI (pinned) finishes a one-shell-call task through Rollgate and a sim engine,
// launched per shared/reference/harnesses/README.md: a custom provider in the run's own
// ~/.config/opencode/opencode.json (chat completions through @ai-sdk/openai-compatible by default; the
// same config with @ai-sdk/anthropic or @ai-sdk/openai speaks Anthropic Messages or Responses), the
// session key through {env:GW_API_KEY}, `opencode run -m gw/MODEL <words…>`. opencode sends a title
// request in parallel with the main call: a side request, recorded like any other.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { checkAgentTurns, NOTES, TASK } from './agent-checks.js';
import { installAgent } from './agent-install.js';
import { runAgent } from './agent-run.js';

const OPENCODE_VERSION = '1.18.33';
const MODEL = 'Qwen/Qwen3-8B';
let app: TestApp;
let opencode: string;

beforeAll(async () => {
  opencode = installAgent('opencode-ai', OPENCODE_VERSION, 'opencode');
  app = await startTestApp({ simSkill: 1 });
});
afterAll(async () => { await app?.stop(); });

type Provider = { npm: '@ai-sdk/openai-compatible' | '@ai-sdk/anthropic' | '@ai-sdk/openai'; dialect: string };
const PROVIDERS: Record<string, Provider> = {
  chat: { npm: '@ai-sdk/openai-compatible', dialect: 'openai-chat' },
  anthropic: { npm: '@ai-sdk/anthropic', dialect: 'anthropic' },
  responses: { npm: '@ai-sdk/openai', dialect: 'openai-responses' },
};

function config(p: Provider, urls: { openai: string; anthropic: string }) {
  return {
    $schema: 'https://opencode.ai/config.json',
    provider: {
      gw: {
        npm: p.npm,
        name: 'Rollgate',
        options: { baseURL: p.npm === '@ai-sdk/anthropic' ? `${urls.anthropic}/v1` : urls.openai, apiKey: '{env:GW_API_KEY}' },
        models: { [MODEL]: { name: 'Qwen3 8B via Rollgate', tool_call: true } },
      },
    },
    model: `gw/${MODEL}`,
    small_model: `gw/${MODEL}`,
    autoupdate: false,
    share: 'disabled',
  };
}

const RUNS: Array<[keyof typeof PROVIDERS, string]> = [
  ['chat', 'sim-vllm'],
  ['chat', 'sim-sglang'],
  ['anthropic', 'sim-sglang'],
  ['responses', 'sim-vllm'],
];

describe(`opencode ${OPENCODE_VERSION}`, () => {
  for (const [provider, engine] of RUNS) {
    it(`counts the lines of notes.txt with one bash call (${PROVIDERS[provider]!.npm}) on ${engine}`, async () => {
      const p = PROVIDERS[provider]!;
      const session = await app.createSession({ engine, harness: 'opencode' });
      const run = await runAgent({
        bin: opencode,
        // Separate words: one argv with spaces reaches the model quoted.
        args: ['run', '-m', `gw/${MODEL}`, ...TASK.split(' ')],
        env: {
          GW_API_KEY: session.key,
          OPENCODE_DISABLE_MODELS_FETCH: '1',
          OPENCODE_DISABLE_AUTOUPDATE: '1',
          OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
        },
        files: { 'notes.txt': NOTES },
        homeFiles: { '.config/opencode/opencode.json': JSON.stringify(config(p, session.urls)) },
        timeoutMs: 120_000,
      });
      expect(run.timedOut, run.stderr).toBe(false);
      expect(run.code, run.stderr + run.stdout).toBe(0);
      expect(run.stdout).toContain('3');

      const turns = await checkAgentTurns(app, session.id, 'bash', { tokenMode: engine === 'sim-sglang' });
      for (const c of turns.all) expect(c.dialect).toBe(p.dialect);
      expect(JSON.parse(turns.call.response.message.tool_calls[0].function.arguments).command).toMatch(/wc -l/);
      // The side requests are opencode's title generator (no tools), nothing else.
      for (const c of turns.side) {
        expect(c.requestServed?.tools ?? []).toHaveLength(0);
        expect(JSON.stringify(c.requestReceived)).toMatch(/title/i);
      }
    });
  }
});
