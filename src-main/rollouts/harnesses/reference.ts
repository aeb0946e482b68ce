// `oracle` and `nop`: the two reference "agents" a task author checks a task with (Harbor's convention).
// oracle runs the task's reference solution (a Harbor task's solution/solve.sh, mounted read-only at
// /solution for this harness only; a SWE-bench-style row's `patch`, applied with git in its workdir) and
// should score 1; nop does nothing and should score 0. Neither calls a model.
import type { Harness } from './types.js';

export const SOLUTION_MOUNT = '/solution';
const GOLD_PATCH = '.rollgate/gold.patch';

export const oracleHarness: Harness = {
  name: 'oracle',
  description: 'runs the task\'s reference solution (Harbor solution/solve.sh, or a SWE-bench row\'s patch); a sound task scores 1',
  kind: 'reference',
  dialect: 'none',
  defaultTimeoutMs: 600_000,
  mounts(task) {
    return task?.harbor?.solutionDir ? [{ host: task.harbor.solutionDir, target: SOLUTION_MOUNT }] : [];
  },
  homeFiles(ctx): Record<string, string> {
    const patch = ctx.task?.swebench?.goldPatch;
    return patch ? { [GOLD_PATCH]: patch.endsWith('\n') ? patch : `${patch}\n` } : {};
  },
  launch(ctx) {
    const task = ctx.task;
    if (task?.harbor?.solutionDir) return { file: 'bash', args: [`${SOLUTION_MOUNT}/solve.sh`], env: { ...task.harbor.solutionEnv } };
    if (task?.swebench?.goldPatch) return { file: 'git', args: ['apply', '--verbose', `${ctx.home}/${GOLD_PATCH}`], env: {} };
    throw new Error(`task ${ctx.taskId ?? '?'} has no reference solution (a Harbor solution/solve.sh or a SWE-bench "patch")`);
  },
};

export const nopHarness: Harness = {
  name: 'nop',
  description: 'does nothing and exits 0; a sound task scores 0',
  kind: 'reference',
  dialect: 'none',
  defaultTimeoutMs: 60_000,
  homeFiles: () => ({}),
  launch: () => ({ file: 'true', args: [], env: {} }),
};
