// The real Qwen Code and opencode CLIs (pinned) finish their one-shell-call task through Rollgate and a
// sim engine speaking another model family in token mode (issue 13): Qwen3-Coder's XML tool calls and
// gpt-oss's harmony channels, rendered, sampled and parsed by the family, the answer's prompt extending
// the call's prompt + sampled ids. Run one agent at a time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimEngine, type SimEngine } from '../../src-main/engines/sim/index.js';
import { loadTokenFormat } from '../../src-main/engines/token-format.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { NOTES, TASK } from './agent-checks.js';
import { installAgent } from './agent-install.js';
import { runAgent } from './agent-run.js';

const QWEN_CODE_VERSION = '0.24.4';
const OPENCODE_VERSION = '1.18.33';
const FAMILIES = ['qwen3-coder', 'gpt-oss'] as const;
let app: TestApp;
const sims = new Map<string, SimEngine>();

beforeAll(async () => {
  for (const family of FAMILIES) sims.set(family, await startSimEngine({ flavor: 'sglang', family, seed: 7, skill: 1, maxModelLen: 131072 }));
  app = await startTestApp({
    sim: false,
    engines: FAMILIES.map((family) => ({ id: `sim-${family}`, kind: 'sglang' as const, replicas: [sims.get(family)!.url], model: sims.get(family)!.model, mode: 'token' as const, family })),
  });
}, 120_000);
afterAll(async () => {
  await app?.stop();
  await Promise.all([...sims.values()].map((s) => s.close()));
});

interface Agent {
  name: string;
  shellTool: string;
  run(session: Awaited<ReturnType<TestApp['createSession']>>, model: string): ReturnType<typeof runAgent>;
}

const AGENTS: Agent[] = [
  {
    name: `qwen-code ${QWEN_CODE_VERSION}`,
    shellTool: 'run_shell_command',
    run: (session, model) => runAgent({
      bin: installAgent('@qwen-code/qwen-code', QWEN_CODE_VERSION, 'qwen'),
      args: ['-p', TASK, '--yolo'],
      env: { OPENAI_API_KEY: session.key, OPENAI_BASE_URL: session.urls.openai, OPENAI_MODEL: model },
      files: { 'notes.txt': NOTES },
      homeFiles: { '.qwen/settings.json': JSON.stringify({ security: { auth: { selectedType: 'openai' } }, privacy: { usageStatisticsEnabled: false }, telemetry: { enabled: false }, general: { disableAutoUpdate: true, disableUpdateNag: true } }) },
      timeoutMs: 180_000,
    }),
  },
  {
    name: `opencode ${OPENCODE_VERSION}`,
    shellTool: 'bash',
    run: (session, model) => runAgent({
      bin: installAgent('opencode-ai', OPENCODE_VERSION, 'opencode'),
      args: ['run', '-m', `gw/${model}`, ...TASK.split(' ')],
      env: { GW_API_KEY: session.key, OPENCODE_DISABLE_MODELS_FETCH: '1', OPENCODE_DISABLE_AUTOUPDATE: '1', OPENCODE_DISABLE_LSP_DOWNLOAD: '1' },
      files: { 'notes.txt': NOTES },
      homeFiles: {
        '.config/opencode/opencode.json': JSON.stringify({
          $schema: 'https://opencode.ai/config.json',
          provider: { gw: { npm: '@ai-sdk/openai-compatible', name: 'Rollgate', options: { baseURL: session.urls.openai, apiKey: '{env:GW_API_KEY}' }, models: { [model]: { name: model, tool_call: true } } } },
          model: `gw/${model}`, small_model: `gw/${model}`, autoupdate: false, share: 'disabled',
        }),
      },
      timeoutMs: 180_000,
    }),
  },
];

describe('real agents through other model families in token mode', () => {
  for (const agent of AGENTS) {
    for (const family of FAMILIES) {
      it(`${agent.name} counts the lines of notes.txt through a ${family} sim engine`, async () => {
        const session = await app.createSession({ engine: `sim-${family}` });
        const run = await agent.run(session, sims.get(family)!.model);
        expect(run.timedOut, run.stderr).toBe(false);
        expect(run.code, run.stderr + run.stdout).toBe(0);
        expect(run.stdout).toContain('3');

        const fmt = await loadTokenFormat({ family });
        const { completions } = await app.api(`/api/sessions/${session.id}/completions`);
        const all = completions as any[];
        for (const c of all) {
          expect(c.status, c.error).toBe('ok');
          expect(c.outputLogprobs).toHaveLength(c.outputIds.length);
          expect(fmt.stopIds).toContain(c.outputIds.at(-1));
        }
        // The task's turns, read back the way the model sees its prompt.
        const view = (c: any) => fmt.family.readPrompt(fmt.tok.decode(c.promptIds));
        const task = all.filter((c) => view(c).tools.some((t) => t.name === agent.shellTool) && fmt.tok.decode(c.promptIds).includes(TASK));
        const call = task.find((c) => c.response.message.tool_calls.length > 0);
        expect(call, JSON.stringify(all.map((c) => c.response?.message))).toBeTruthy();
        expect(call.response.message.tool_calls[0].function.name).toBe(agent.shellTool);
        const answer = task.find((c) => c.seq > call.seq && c.response.message.tool_calls.length === 0);
        expect(answer).toBeTruthy();
        expect(answer.response.message.content).toContain('3');
        const toolTurns = view(answer).turns.filter((t) => t.role === 'tool');
        expect(toolTurns.at(-1)?.content).toMatch(/(^|\n)(Output:\s*)?3( notes\.txt)?[ \t]*(\n|$)/);
        // Token mode: the answer's prompt is the call's prompt + its sampled ids + the tool result.
        expect(answer.promptIds.slice(0, call.promptIds.length + call.outputIds.length)).toEqual([...call.promptIds, ...call.outputIds]);
      }, 240_000);
    }
  }
});
