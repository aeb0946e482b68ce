// A real agent CLI inside a task's own image: Qwen Code (pinned) on the shipped Harbor tasks under the
// docker runtime. The image has no Node: Rollgate's Node and the installed agent are mounted read-only,
// the session reaches the agent through the run's socket. The reward is the verifier's: the sim policy
// runs the fix script fix-greeting's instruction names (1) and cannot fix calc.sh (0).
import Docker from 'dockerode';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { ensureBaseImage } from '../helpers/base-image.js';
import { AGENT_CACHE } from './agent-install.js';

const EXAMPLES = resolve(import.meta.dirname, '..', '..', 'assets', 'tasks');
let app: TestApp;
beforeAll(async () => {
  await ensureBaseImage(new Docker());
  app = await startTestApp({ simSkill: 1, rollouts: { agentsDir: AGENT_CACHE } });
});
afterAll(async () => { await app?.stop(); });

describe('qwen-code preset on Harbor tasks (docker runtime)', () => {
  it('runs inside each task image and earns the verifier\'s reward, every model call recorded', async () => {
    const { id } = (await app.rollouts.submit({ dataset: EXAMPLES, harness: 'qwen-code', engine: 'sim-vllm', runtime: 'docker', n: 1, concurrency: 2 }));
    const view = (await app.rollouts.wait(id))!;
    expect(view.status, view.error ?? '').toBe('completed');
    const rewards = Object.fromEntries(view.tasks.map((t) => [t.taskId, t.rewards[0]]));
    expect(rewards, JSON.stringify(view.tasks.map((t) => t.samples[0].error))).toEqual({ 'fix-greeting': 1, 'make-test-pass': 0 });
    for (const t of view.tasks) {
      const s = t.samples[0];
      expect(s).toMatchObject({ status: 'finished', outcome: 'ok', exitCode: 0 });
      expect(s.completionCount).toBeGreaterThanOrEqual(1);
      for (const c of (await app.store.completions.listBySession(s.sessionId))) {
        expect(c.id).toMatch(/\S/);
        expect(c.outputIds.length).toBeGreaterThan(0);
      }
      expect((await app.store.runs.get(s.sessionId))!.evaluator).toMatchObject({ type: 'harbor', reward: t.rewards[0] });
    }
    const greeting = view.tasks.find((t) => t.taskId === 'fix-greeting')!.samples[0];
    const calls = (await app.store.completions.listBySession(greeting.sessionId)).flatMap((c) => c.response?.message.tool_calls ?? []);
    expect(calls.map((c) => [c.function.name, JSON.parse(c.function.arguments).command])).toContainEqual(['run_shell_command', 'sh apply-fix.sh']);
  }, 300_000);
});
