// A real agent CLI through its preset in a batch: Qwen Code (pinned 0.24.4) on demo:repo-fix against the
// sim. The reward is whatever the task's check (`node test.js`) says: the sim policy can only solve the
// task whose prompt names the fix command, so fix-greeting scores 1 and the others 0.
// Runs when the agent is already installed in .cache/agents (test/e2e installs it there), or with
// ROLLGATE_INSTALL_AGENTS=1 (installs on demand through the preset, as `rollgate eval` would).
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getHarness } from '../../src-main/rollouts/harnesses/index.js';
import { installedAgentBin } from '../../src-main/rollouts/install.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { REPO_ROOT } from '../helpers/paths.js';

const AGENTS = process.env.ROLLGATE_AGENT_CACHE ?? join(REPO_ROOT, '.cache', 'agents');
const qwen = getHarness('qwen-code')!;
const available = !!installedAgentBin(AGENTS, qwen.agent!) || process.env.ROLLGATE_INSTALL_AGENTS === '1';

let app: TestApp;
beforeAll(async () => {
  if (available) app = await startTestApp({ simSkill: 1, rollouts: { agentsDir: AGENTS } });
});
afterAll(async () => { await app?.stop(); });

describe.skipIf(!available)('qwen-code preset in a batch (demo:repo-fix)', () => {
  it('runs each repository in its own folder and HOME, scored by the check', async () => {
    const phases: string[] = [];
    const unsubscribe = app.events.subscribe((e) => { if (e.type === 'batch' && e.phase) phases.push(e.phase); });
    const { id } = app.rollouts.submit({ dataset: 'demo:repo-fix', harness: 'qwen-code', engine: 'sim-vllm', n: 1, concurrency: 2 });
    const view = (await app.rollouts.wait(id))!;
    unsubscribe();
    expect(phases[0]).toMatch(/^install/); // installed (cached) or install-* progress
    expect(view.status).toBe('completed');
    expect(view.spec).toMatchObject({ agent: '@qwen-code/qwen-code@0.24.4' });
    const rewards = Object.fromEntries(view.tasks.map((t) => [t.taskId, t.rewards[0]]));
    expect(rewards).toEqual({ 'fix-add': 0, 'fix-reverse': 0, 'fix-fizzbuzz': 0, 'fix-greeting': 1 });
    for (const t of view.tasks) {
      const s = t.samples[0];
      expect(s).toMatchObject({ status: 'finished', outcome: 'ok', exitCode: 0 });
      expect(s.completionCount).toBeGreaterThanOrEqual(2);
      const run = app.store.runs.get(s.sessionId)!;
      expect(run.evaluator).toMatchObject({ type: 'command', reward: t.rewards[0] });
    }
    // The fixing turn went through qwen's own shell tool.
    const greeting = view.tasks.find((t) => t.taskId === 'fix-greeting')!.samples[0];
    const calls = app.store.completions.listBySession(greeting.sessionId).flatMap((c) => c.response?.message.tool_calls ?? []);
    expect(calls.map((c) => c.function.name)).toContain('run_shell_command');
    expect(app.store.runs.get(greeting.sessionId)!.evaluator!.output).toMatch(/all tests passed/);
  }, 300_000);
});
