// The real Claude Code CLI (pinned) finishes a one-shell-call task through Rollgate and a sim engine,
// launched per shared/reference/harnesses/README.md: ANTHROPIC_BASE_URL (bare, no /v1), the session key
// as ANTHROPIC_API_KEY, `-p`, `--allowedTools Bash` (it refuses --dangerously-skip-permissions as root).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { checkAgentTurns, NOTES, TASK } from './agent-checks.js';
import { installAgent } from './agent-install.js';
import { runAgent } from './agent-run.js';

const CLAUDE_CODE_VERSION = '2.1.330';
let app: TestApp;
let claude: string;

beforeAll(async () => {
  claude = installAgent('@anthropic-ai/claude-code', CLAUDE_CODE_VERSION, 'claude');
  app = await startTestApp({ simSkill: 1 });
});
afterAll(async () => { await app?.stop(); });

describe(`claude-code ${CLAUDE_CODE_VERSION}`, () => {
  for (const engine of ['sim-vllm', 'sim-sglang']) {
    it(`counts the lines of notes.txt with one Bash call on ${engine}`, async () => {
      const session = await app.createSession({ engine, harness: 'claude-code' });
      const run = await runAgent({
        bin: claude,
        args: ['-p', TASK, '--model', 'Qwen/Qwen3-8B', '--allowedTools', 'Bash'],
        env: {
          ANTHROPIC_BASE_URL: session.urls.anthropic,
          ANTHROPIC_API_KEY: session.key,
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
          DISABLE_AUTOUPDATER: '1',
          DISABLE_TELEMETRY: '1',
          DISABLE_ERROR_REPORTING: '1',
        },
        files: { 'notes.txt': NOTES },
        timeoutMs: 120_000,
      });
      expect(run.timedOut, run.stderr).toBe(false);
      expect(run.code, run.stderr + run.stdout).toBe(0);
      expect(run.stdout).toContain('3');

      const turns = await checkAgentTurns(app, session.id, 'Bash', { tokenMode: engine === 'sim-sglang' });
      expect(turns.call.dialect).toBe('anthropic');
      const cmd = JSON.parse(turns.call.response.message.tool_calls[0].function.arguments).command;
      expect(cmd).toMatch(/wc -l/);
      // Claude Code sends a role:"system" message inside `messages`; it stays where the agent put it.
      const received = turns.call.requestReceived;
      expect(received.messages.some((m: any) => m.role === 'system')).toBe(true);
      // One request per model turn, no side requests in -p mode.
      expect(turns.side).toHaveLength(0);
    });
  }
});
