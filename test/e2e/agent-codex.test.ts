// The real Codex CLI (pinned) finishes a one-shell-call task through Rollgate and a sim engine, launched
// per shared/reference/harnesses/README.md: a custom `[model_providers.gw]` with wire_api="responses" in
// the run's own ~/.codex/config.toml, the session key in the provider's env_key, `codex exec
// --skip-git-repo-check`. (OPENAI_BASE_URL is ignored by Codex; wire_api="chat" is refused.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { checkAgentTurns, NOTES, TASK } from './agent-checks.js';
import { installAgent } from './agent-install.js';
import { runAgent } from './agent-run.js';

const CODEX_VERSION = '0.169.0';
let app: TestApp;
let codex: string;

beforeAll(async () => {
  codex = installAgent('@openai/codex', CODEX_VERSION, 'codex');
  app = await startTestApp({ simSkill: 1 });
});
afterAll(async () => { await app?.stop(); });

function configToml(baseUrl: string): string {
  return [
    'model = "Qwen/Qwen3-8B"',
    'model_provider = "gw"',
    '',
    '[model_providers.gw]',
    'name = "rollgate"',
    `base_url = ${JSON.stringify(baseUrl)}`,
    'env_key = "GW_API_KEY"',
    'wire_api = "responses"',
    '',
    '[analytics]',
    'enabled = false',
    '',
  ].join('\n');
}

describe(`codex ${CODEX_VERSION}`, () => {
  for (const engine of ['sim-vllm', 'sim-sglang']) {
    it(`counts the lines of notes.txt with one exec_command call on ${engine}`, async () => {
      const session = await app.createSession({ engine, harness: 'codex' });
      const run = await runAgent({
        bin: codex,
        // With bubblewrap on the machine (the sandbox tests install it), Codex wraps its own shell tool in
        // bwrap + codex-linux-sandbox, which its npm package does not ship: every command then fails. The
        // preset turns Codex's sandbox off for the same reason (Rollgate's runtime is the sandbox).
        args: ['exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', TASK],
        env: { GW_API_KEY: session.key },
        files: { 'notes.txt': NOTES },
        homeFiles: { '.codex/config.toml': configToml(session.urls.openai) },
        timeoutMs: 120_000,
      });
      expect(run.timedOut, run.stderr).toBe(false);
      expect(run.code, run.stderr + run.stdout).toBe(0);
      expect(run.stdout).toContain('3');

      const turns = await checkAgentTurns(app, session.id, 'exec_command', { tokenMode: engine === 'sim-sglang' });
      expect(turns.call.dialect).toBe('openai-responses');
      expect(JSON.parse(turns.call.response.message.tool_calls[0].function.arguments).cmd).toMatch(/wc -l/);
      // Codex's developer messages stay in place; its non-function tools were recorded, not offered.
      expect(turns.call.requestReceived.input.filter((i: any) => i.role === 'developer').length).toBeGreaterThan(0);
      // ...and reach the engine as system messages (the engine's default developerRole; Qwen3's template
      // would drop a developer role), which the request as served records in chat mode.
      if (engine === 'sim-vllm') {
        expect(turns.call.requestServed.messages.some((m: any) => m.role === 'developer')).toBe(false);
        expect(turns.call.requestServed.messages.filter((m: any) => m.role === 'system').length).toBeGreaterThan(1);
      }
      expect(turns.side).toHaveLength(0);
    });
  }
});
