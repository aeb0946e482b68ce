// A real agent CLI through its preset in a batch: Qwen Code (pinned 0.24.4) on demo:repo-fix against the
// sim. The reward is whatever the task's check (`node test.js`) says: the sim policy can only solve the
// task whose prompt names the fix command, so fix-greeting scores 1 and the others 0.
// Never skipped: the batch installs the pinned agent on demand through the manager's installer (into the
// shared agent cache, so the agents step's other tests reuse it), exactly as `rollgate eval` would.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { AGENT_CACHE } from './agent-install.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ simSkill: 1, rollouts: { agentsDir: AGENT_CACHE } });
});
afterAll(async () => { await app?.stop(); });

describe('qwen-code preset in a batch (demo:repo-fix)', () => {
  it('runs each repository in its own folder and HOME, scored by the check', async () => {
    const phases: Array<{ id: string; phase: string }> = [];
    const unsubscribe = app.events.subscribe((e) => { if (e.type === 'batch' && e.phase) phases.push({ id: e.id, phase: e.phase }); });
    const { id } = (await app.rollouts.submit({ dataset: 'demo:repo-fix', harness: 'qwen-code', engine: 'sim-vllm', n: 1, concurrency: 2 }));
    const view = (await app.rollouts.wait(id))!;
    unsubscribe();
    // Installed now (install-installing … install-done) or found in the cache (installed), before any run.
    expect(phases.filter((p) => p.id === id)[0]?.phase).toMatch(/^install/);
    expect(view.status, view.error ?? '').toBe('completed');
    expect(view.spec).toMatchObject({ agent: '@qwen-code/qwen-code@0.24.4' });
    const rewards = Object.fromEntries(view.tasks.map((t) => [t.taskId, t.rewards[0]]));
    expect(rewards).toEqual({ 'fix-add': 0, 'fix-reverse': 0, 'fix-fizzbuzz': 0, 'fix-greeting': 1 });
    for (const t of view.tasks) {
      const s = t.samples[0];
      expect(s).toMatchObject({ status: 'finished', outcome: 'ok', exitCode: 0 });
      expect(s.completionCount).toBeGreaterThanOrEqual(1);
      const run = (await app.store.runs.get(s.sessionId))!;
      expect(run.evaluator).toMatchObject({ type: 'command', reward: t.rewards[0] });
    }
    // The fixing turn went through qwen's own shell tool.
    const greeting = view.tasks.find((t) => t.taskId === 'fix-greeting')!.samples[0];
    expect(greeting.completionCount).toBeGreaterThanOrEqual(2);
    const calls = (await app.store.completions.listBySession(greeting.sessionId)).flatMap((c) => c.response?.message.tool_calls ?? []);
    expect(calls.map((c) => [c.function.name, JSON.parse(c.function.arguments).command])).toContainEqual(['run_shell_command', 'node apply-fix.js']);
    expect((await app.store.runs.get(greeting.sessionId))!.evaluator!.output).toMatch(/all tests passed/);
  }, 300_000);
});
