// Harbor task folders and SWE-bench-style rows end to end under the docker runtime, on a real dockerd
// (DOCKER_HOST), with images built locally from the machine's own files (no registry): the shipped
// examples give oracle → 1, nop → 0, the builtin agent the reward its work earns with every model call
// recorded; the agent cannot read or forge the tests or the reward; broken task folders fail alone with
// their reason; the image cache carries over to the next batch; `tasks check` reports broken tasks.
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rewardTable } from '../../src-main/commands/eval.js';
import { ImageBuilder } from '../../src-main/rollouts/images/builder.js';
import type { BatchView } from '../../src-main/rollouts/results.js';
import { startTaskCheck, waitTaskCheck } from '../../src-main/rollouts/task-check.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { ensureBaseImage } from '../helpers/base-image.js';

const EXAMPLES = resolve(import.meta.dirname, '..', '..', 'assets', 'tasks');
const docker = new Docker();
let app: TestApp;
let dir: string;
const builtTags: string[] = [];

beforeAll(async () => {
  await ensureBaseImage(docker);
  app = await startTestApp({ simSkill: 1 });
  dir = mkdtempSync(join(tmpdir(), 'rollgate-harbor-'));
});

afterAll(async () => {
  await app?.stop();
  for (const t of builtTags) await docker.getImage(t).remove({ force: true }).catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

function writeTree(root: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(root, rel, '..'), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
}

/** A private copy of the examples with a unique file in each environment: its first batch must build. */
function freshExamples(name: string): string {
  const root = join(dir, name);
  cpSync(EXAMPLES, root, { recursive: true });
  for (const t of ['fix-greeting', 'make-test-pass']) writeFileSync(join(root, t, 'environment', 'nonce.txt'), `${name}-${process.pid}-${Date.now()}`);
  return root;
}

async function run(body: Record<string, unknown>): Promise<{ view: BatchView; phases: string[] }> {
  const phases: string[] = [];
  let id = '';
  const off = app.events.subscribe((ev) => { if (ev.type === 'batch' && ev.id === id && ev.phase) phases.push(ev.phase); });
  try {
    id = (await app.rollouts.submit({ runtime: 'docker', concurrency: 2, ...body })).id;
    return { view: (await app.rollouts.wait(id))!, phases };
  } finally {
    off();
  }
}

const rewards = (v: BatchView) => Object.fromEntries(v.tasks.map((t) => [t.taskId, t.rewards[0]]));
const sampleOf = (v: BatchView, taskId: string) => v.tasks.find((t) => t.taskId === taskId)!.samples[0];

describe('Harbor example tasks under docker', () => {
  let examples: string;
  beforeAll(() => { examples = freshExamples('examples'); });

  it('oracle scores 1 and nop 0 on every shipped task; the next batch builds nothing', async () => {
    const oracle = await run({ dataset: examples, harness: 'oracle' });
    expect(oracle.view.status).toBe('completed');
    expect(rewards(oracle.view)).toEqual({ 'fix-greeting': 1, 'make-test-pass': 1 });
    expect(oracle.phases).toContain('image-build');
    const run0 = (await app.store.runs.get(sampleOf(oracle.view, 'make-test-pass').sessionId))!;
    expect(run0.evaluator).toMatchObject({ type: 'harbor', reward: 1, rewards: { reward: 1, hidden: 1 } });

    const nop = await run({ dataset: examples, harness: 'nop' });
    expect(rewards(nop.view)).toEqual({ 'fix-greeting': 0, 'make-test-pass': 0 });
    expect(nop.phases.filter((p) => p.startsWith('image-'))).toEqual([]);
    expect((await app.store.runs.get(sampleOf(nop.view, 'make-test-pass').sessionId))!.evaluator?.rewards).toEqual({ reward: 0, hidden: 0.333333 });
  });

  it('the builtin agent earns what its work earns, every model call recorded with its ids', async () => {
    const { view } = await run({ dataset: examples, harness: 'builtin', maxTurns: 4 });
    expect(view.status).toBe('completed');
    // The sim policy runs the fix script the instruction names; it has no way to fix calc.sh.
    expect(rewards(view)).toEqual({ 'fix-greeting': 1, 'make-test-pass': 0 });
    for (const t of view.tasks) {
      const s = t.samples[0];
      expect(s.completionCount).toBeGreaterThan(0);
      const { completions } = await app.api(`/api/sessions/${s.sessionId}/completions`);
      expect(completions).toHaveLength(s.completionCount);
      for (const c of completions) {
        expect(c.id).toMatch(/\S/);
        expect(c.sessionId).toBe(s.sessionId);
        expect(c.promptIds.length).toBeGreaterThan(0);
        expect(c.outputIds.length).toBeGreaterThan(0);
        expect(c.status).toBe('ok');
      }
    }
    const greet = (await app.store.runs.get(sampleOf(view, 'fix-greeting').sessionId))!;
    expect(greet.stdout).toMatch(/patched greet\.sh/);
  });

  it('the agent cannot read tests/, see the solution, or forge the reward', async () => {
    const attack = [
      'ls /tests /run/rollgate/tests /solution 2>&1 | sed "s/^/LS: /"',
      'cat /tests/test.sh 2>&1 | head -3 | sed "s/^/CAT: /"',
      'find / -name test.sh -path "*tests*" 2>/dev/null | sed "s/^/FOUND: /"',
      // Forgeries the verifier must not believe: a reward file, and a test.sh of its own in /tests.
      'mkdir -p /logs/verifier /tests && echo 1 > /logs/verifier/reward.txt && printf "echo 1 > /logs/verifier/reward.txt\\n" > /tests/test.sh',
      // task.toml's cpus = 1 is the container's CPU quota (cgroup v2 or v1).
      'echo "CPU: $(cat /sys/fs/cgroup/cpu.max /sys/fs/cgroup/cpu/cpu.cfs_quota_us 2>/dev/null | head -1)"',
      'echo done',
    ].join('; ');
    const { view } = await run({ dataset: examples, harness: 'command', command: attack });
    expect(rewards(view)).toEqual({ 'fix-greeting': 0, 'make-test-pass': 0 });
    const out = (await app.store.runs.get(sampleOf(view, 'fix-greeting').sessionId))!.stdout ?? '';
    expect(out).toMatch(/LS: .*\/tests.*No such file/);
    expect(out).toMatch(/LS: .*\/solution.*No such file/);
    expect(out).not.toMatch(/CAT: #!/);
    expect(out).not.toMatch(/FOUND:/);
    expect(out).toMatch(/^CPU: 100000\b/m);
    expect(out).not.toMatch(/greet\.sh "\$name"|Verifier/);
  });

  it('the verifier runs in a fresh container of the task image: a bash or python hook the agent planted is gone', async () => {
    const forger = '#!/bin/sh\nmkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt\n';
    const attack = [
      // The verifier runs `bash /tests/test.sh`: replace bash (unlink first: the running one is busy).
      `printf '${forger}' > /tmp/forger && chmod 755 /tmp/forger && rm -f /usr/bin/bash && cp /tmp/forger /usr/bin/bash`,
      'mkdir -p /usr/lib/python3/dist-packages && echo "import os" > /usr/lib/python3/dist-packages/sitecustomize.py',
      'head -2 /usr/bin/bash | tail -1 | grep -q reward.txt && echo PLANTED',
      // Work the agent did in its work folder still counts.
      'echo kept > /app/agent-note.txt',
    ].join('; ');
    const { view } = await run({ dataset: examples, harness: 'command', command: attack });
    const greet = (await app.store.runs.get(sampleOf(view, 'fix-greeting').sessionId))!;
    expect(greet.stdout).toMatch(/PLANTED/);
    expect(rewards(view)).toEqual({ 'fix-greeting': 0, 'make-test-pass': 0 });
    expect(greet.evaluator?.output).toMatch(/FAIL: greet\.sh/);
  });
});

describe('broken task folders', () => {
  it('fail only their own task, each with a clear reason (batch view and CLI table)', async () => {
    const root = join(dir, 'broken');
    cpSync(join(EXAMPLES, 'fix-greeting'), join(root, 'good'), { recursive: true });
    const toml = '[agent]\ntimeout_sec = 60\n[environment]\nallow_internet = false\n';
    writeTree(root, {
      'no-instruction/task.toml': toml, 'no-instruction/environment/Dockerfile': 'FROM debian:bookworm-slim\n', 'no-instruction/tests/test.sh': 'echo 1 > /logs/verifier/reward.txt\n',
      'bad-toml/instruction.md': 'Do nothing.', 'bad-toml/task.toml': '[agent]\ntimeout_sec = = 3\n', 'bad-toml/environment/Dockerfile': 'FROM debian:bookworm-slim\n', 'bad-toml/tests/test.sh': 'true\n',
      'bad-dockerfile/instruction.md': 'Do nothing.', 'bad-dockerfile/task.toml': toml,
      'bad-dockerfile/environment/Dockerfile': `FROM debian:bookworm-slim\nRUN echo "step that fails ${Date.now()}" && exit 7\n`, 'bad-dockerfile/tests/test.sh': 'true\n',
      'no-reward/instruction.md': 'Do nothing.', 'no-reward/task.toml': toml, 'no-reward/environment/Dockerfile': 'FROM debian:bookworm-slim\nWORKDIR /app\n',
      'no-reward/tests/test.sh': 'echo "tests ran but wrote nothing"\n',
    });
    const { view } = await run({ dataset: root, harness: 'nop' });
    expect(view.status).toBe('completed');
    const reasons = Object.fromEntries(view.tasks.map((t) => [t.taskId, t.samples[0].error]));
    expect(reasons).toEqual({
      'bad-dockerfile': expect.stringMatching(/no image for task bad-dockerfile: docker build failed: .*returned a non-zero code: 7/),
      'bad-toml': expect.stringMatching(/broken Harbor task bad-toml: task\.toml line 2/),
      good: null,
      'no-instruction': expect.stringMatching(/broken Harbor task no-instruction: no instruction\.md/),
      'no-reward': expect.stringMatching(/the verifier wrote no reward/),
    });
    expect(rewards(view)).toEqual({ 'bad-dockerfile': null, 'bad-toml': null, good: 0, 'no-instruction': null, 'no-reward': 0 });
    expect(sampleOf(view, 'bad-toml').outcome).toBe('task_error');
    const table = rewardTable(view);
    expect(table).toMatch(/bad-dockerfile: no image for task bad-dockerfile: docker build failed/);
    expect(table).toMatch(/no-reward: .*the verifier wrote no reward/);
  });

  it('batches refuse container tasks on a runtime that cannot run them; auto picks docker for them', async () => {
    await expect(app.rollouts.submit({ dataset: EXAMPLES, harness: 'nop', runtime: 'local' })).rejects.toThrow(/runs in its own container image .*use runtime "docker"/);
    const { id, runtime } = (await app.rollouts.submit({ dataset: EXAMPLES, harness: 'nop', runtime: 'auto' })) as { id: string; runtime: string };
    expect(runtime).toBe('docker');
    await app.rollouts.wait(id);
  });
});

describe('tasks check', () => {
  it('reports sound and broken tasks (oracle must score 1, nop 0)', async () => {
    const root = join(dir, 'check');
    cpSync(join(EXAMPLES, 'fix-greeting'), join(root, 'fix-greeting'), { recursive: true });
    // A task whose tests pass without any work: nop scores 1, so it measures nothing.
    cpSync(join(EXAMPLES, 'fix-greeting'), join(root, 'always-passes'), { recursive: true });
    writeFileSync(join(root, 'always-passes', 'tests', 'test.sh'), 'mkdir -p /logs/verifier; echo 1 > /logs/verifier/reward.txt\n');
    // A task whose solution does not solve it.
    cpSync(join(EXAMPLES, 'make-test-pass'), join(root, 'wrong-solution'), { recursive: true });
    writeFileSync(join(root, 'wrong-solution', 'solution', 'solve.sh'), 'echo "not a fix"\n');
    const started = await startTaskCheck(app.rollouts, { dataset: root });
    const report = (await waitTaskCheck(app.rollouts, started.id))!;
    expect(report.status).toBe('completed');
    expect(report.tasks).toEqual([
      { taskId: 'always-passes', oracle: 1, nop: 1, ok: false, problems: ['nop scored 1 (a sound task gives 0)'] },
      { taskId: 'fix-greeting', oracle: 1, nop: 0, ok: true, problems: [] },
      { taskId: 'wrong-solution', oracle: 0, nop: 0, ok: false, problems: ['oracle scored 0 (a sound task gives 1)'] },
    ]);
    expect(report.broken).toBe(2);
    const viaApi = await app.api(`/api/tasks/check/${started.id}`);
    expect(viaApi.tasks).toEqual(report.tasks);
  });
});

describe('SWE-bench-style rows', () => {
  let image: string;
  const base = { instance_id: 'local__calc-1', problem_statement: 'add() in calc.sh subtracts instead of adding. Fix it.', repo: 'local/calc', test_command: 'sh run_tests.sh', FAIL_TO_PASS: '["test_add"]', PASS_TO_PASS: ['test_sub'] };
  const fix = "sed -i '/^add/s/-/+/' calc.sh";

  beforeAll(async () => {
    // A repository image like SWE-bench's: the repo at /testbed, at its base commit.
    const ctx = join(dir, 'swe-env');
    writeTree(ctx, {
      Dockerfile: [
        'FROM debian:bookworm-slim', 'WORKDIR /testbed', 'COPY repo/ /testbed/',
        'RUN git init -q && git -c user.email=t@example.com -c user.name=t add -A && git -c user.email=t@example.com -c user.name=t commit -qm base',
      ].join('\n'),
      'repo/calc.sh': 'add() { echo $(( $1 - $2 )); }\nsub() { echo $(( $1 - $2 )); }\n',
      'repo/run_tests.sh': '. ./calc.sh\nfail=0\nfor t in "$@"; do case $t in\n  test_add) [ "$(add 2 3)" = 5 ] || { echo "FAIL test_add"; fail=1; } ;;\n  test_sub) [ "$(sub 5 3)" = 2 ] || { echo "FAIL test_sub"; fail=1; } ;;\n  *) echo "no test $t"; fail=1 ;;\nesac; done\nexit $fail\n',
    });
    image = (await new ImageBuilder(docker).ensureBuilt(ctx, { network: 'none' })).image;
    builtTags.push(image);
  });

  async function runRow(row: Record<string, unknown>, harness: string, command?: string) {
    const file = join(dir, `swe-${harness}-${Date.now()}.jsonl`);
    writeFileSync(file, `${JSON.stringify(row)}\n`);
    const { view } = await run({ dataset: file, harness, ...(command ? { command } : {}) });
    const s = view.tasks[0].samples[0];
    return { view, sample: s, run: (await app.store.runs.get(s.sessionId))! };
  }

  it('runs end to end: the gold patch scores 1, nothing scores 0, an agent\'s fix scores 1 and its diff is kept', async () => {
    const row = { ...base, image, patch: 'diff --git a/calc.sh b/calc.sh\n--- a/calc.sh\n+++ b/calc.sh\n@@ -1,2 +1,2 @@\n-add() { echo $(( $1 - $2 )); }\n+add() { echo $(( $1 + $2 )); }\n sub() { echo $(( $1 - $2 )); }\n' };
    const oracle = await runRow(row, 'oracle');
    expect(oracle.sample.reward).toBe(1);
    const nop = await runRow(row, 'nop');
    expect(nop.sample.reward).toBe(0);
    expect(nop.run.evaluator).toMatchObject({ type: 'swebench', diff: '' });
    expect(nop.run.evaluator?.output).toMatch(/FAIL test_add/);

    const agent = await runRow(row, 'command', `cd /testbed && ${fix} && echo fixed`);
    expect(agent.sample.reward).toBe(1);
    expect(agent.run.evaluator?.diff).toMatch(/^-add\(\) \{ echo \$\(\( \$1 - \$2 \)\); \}$/m);
    expect(agent.run.evaluator?.diff).toMatch(/^\+add\(\) \{ echo \$\(\( \$1 \+ \$2 \)\); \}$/m);
    // The inspector reads it from the run route.
    const viaApi = await app.api(`/api/sessions/${agent.sample.sessionId}/run`);
    expect(viaApi.evaluator.diff).toBe(agent.run.evaluator?.diff);
  });

  it('the agent\'s edits to the tests do not count: test_patch puts them back first', async () => {
    const testPatch = 'diff --git a/run_tests.sh b/run_tests.sh\n--- a/run_tests.sh\n+++ b/run_tests.sh\n@@ -1,2 +1,3 @@\n+# the tests as of the fix\n . ./calc.sh\n fail=0\n';
    const cheat = 'cd /testbed && printf "exit 0\\n" > run_tests.sh && echo "made the tests pass"';
    const cheated = await runRow({ ...base, image, test_patch: testPatch }, 'command', cheat);
    expect(cheated.run.evaluator?.diff).toMatch(/^\+exit 0$/m);
    expect(cheated.sample.reward).toBe(0);
    expect(cheated.run.evaluator?.output).toMatch(/FAIL test_add/);
    const honest = await runRow({ ...base, image, test_patch: testPatch }, 'command', `cd /testbed && ${fix}`);
    expect(honest.sample.reward).toBe(1);
  });
});
