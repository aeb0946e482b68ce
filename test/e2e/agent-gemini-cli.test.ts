// The real Gemini CLI (pinned) finishes a one-shell-call task through Rollgate and a sim engine, launched
// per shared/reference/harnesses/README.md: ~/.gemini/settings.json selecting the gemini-api-key auth
// (required), GEMINI_API_KEY = the session key, GOOGLE_GEMINI_BASE_URL = the bare session URL,
// GEMINI_CLI_TRUST_WORKSPACE=true, `-p … -m MODEL --approval-mode yolo` (run_shell_command is only
// offered in yolo mode).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { checkAgentTurns, NOTES, TASK } from './agent-checks.js';
import { installAgent } from './agent-install.js';
import { runAgent } from './agent-run.js';

const GEMINI_CLI_VERSION = '0.61.0';
let app: TestApp;
let gemini: string;

const settings = {
  security: { auth: { selectedType: 'gemini-api-key' } },
  privacy: { usageStatisticsEnabled: false },
  telemetry: { enabled: false },
  general: { disableAutoUpdate: true, disableUpdateNag: true, enableAutoUpdate: false, enableAutoUpdateNotification: false },
};

beforeAll(async () => {
  gemini = installAgent('@google/gemini-cli', GEMINI_CLI_VERSION, 'gemini');
  app = await startTestApp({ simSkill: 1 });
});
afterAll(async () => { await app?.stop(); });

describe(`gemini-cli ${GEMINI_CLI_VERSION}`, () => {
  for (const engine of ['sim-vllm', 'sim-sglang']) {
    it(`counts the lines of notes.txt with one run_shell_command call on ${engine}`, async () => {
      const session = await app.createSession({ engine, harness: 'gemini-cli' });
      const run = await runAgent({
        bin: gemini,
        args: ['-p', TASK, '-m', 'Qwen/Qwen3-8B', '--approval-mode', 'yolo'],
        env: { GEMINI_API_KEY: session.key, GOOGLE_GEMINI_BASE_URL: session.urls.gemini, GEMINI_CLI_TRUST_WORKSPACE: 'true' },
        files: { 'notes.txt': NOTES },
        homeFiles: { '.gemini/settings.json': JSON.stringify(settings) },
        timeoutMs: 120_000,
      });
      expect(run.timedOut, run.stderr).toBe(false);
      expect(run.code, run.stderr + run.stdout).toBe(0);
      expect(run.stdout).toContain('3');

      const turns = await checkAgentTurns(app, session.id, 'run_shell_command', { tokenMode: engine === 'sim-sglang' });
      expect(turns.call.dialect).toBe('gemini');
      expect(JSON.parse(turns.call.response.message.tool_calls[0].function.arguments).command).toMatch(/wc -l/);
      // The functionResponse came back under the call's id (kept through the codec).
      const contents = turns.answer.requestReceived.contents as any[];
      const callPart = contents.flatMap((c) => c.parts).find((p: any) => p.functionCall);
      const resultPart = contents.flatMap((c) => c.parts).find((p: any) => p.functionResponse);
      expect(resultPart.functionResponse.id).toBe(callPart.functionCall.id);
      // With -m there is no router call; anything else is a side request the agent made on its own.
      for (const c of turns.side) expect(c.dialect).toBe('gemini');
    });
  }
});
