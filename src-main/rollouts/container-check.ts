// Grading container tasks (DESIGN §7), after the agent's container is gone. Both kinds run through the
// runtime's `check` (a fresh container; nothing here starts one):
// - Harbor: tests/ is copied to /tests in a fresh container of the task's own image holding only the
//   agent's work folder (a replaced binary or a planted site-packages hook elsewhere is gone), /logs/verifier is a fresh host folder mounted in, `bash /tests/test.sh` runs in the task's
//   workdir, and the reward is read from that host folder (harbor/reward.ts).
// - SWE-bench-style rows: the agent's diff (against base_commit, else HEAD) is taken from the snapshot,
//   then applied in a clean container from the task's own image, with test_patch, and the listed tests
//   (FAIL_TO_PASS + PASS_TO_PASS) run with test_command: exit 0 → reward 1, else 0. The diff is kept
//   with the verdict (the session inspector shows it).
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EvaluatorVerdict } from '../store/index.js';
import { readHarborReward } from './harbor/reward.js';
import { shellQuote } from './harnesses/common.js';
import type { Task } from './tasks.js';

export interface ContainerCheck {
  command: string;
  env: Record<string, string>;
  /** Host folder mounted read-only for the check only ($ROLLGATE_TESTS_DIR inside). */
  checkFiles?: string;
  /** Host folder mounted read-write at `sandbox` (what the check leaves for Rollgate to read). */
  outputDir?: { host: string; sandbox: string };
  /** Start from the task's own image instead of the snapshot of the agent's container. */
  fromImage?: boolean;
  /** Start from the task's own image with only this folder carried over from the agent's container. */
  carryWork?: string;
  timeoutMs: number;
}

export interface CheckResult {
  exitCode: number | null;
  timedOut: boolean;
  cancelled: boolean;
  spawnError: string | null;
  stdout: string;
  stderr: string;
}

export type RunContainerCheck = (check: ContainerCheck) => Promise<CheckResult>;

const OUTPUT_LIMIT = 16 * 1024;
const DIFF_LIMIT = 4 * 1024 * 1024;
const VERIFIER_LOGS = '/logs/verifier';
const OUT_MOUNT = '/run/rollgate/out';
export const DEFAULT_VERIFIER_TIMEOUT_MS = 600_000;

function describe(r: CheckResult): string {
  const parts = [`exit ${r.exitCode ?? '?'}`];
  if (r.stdout.trim()) parts.push(`stdout:\n${r.stdout.trimEnd()}`);
  if (r.stderr.trim()) parts.push(`stderr:\n${r.stderr.trimEnd()}`);
  const s = parts.join('\n');
  return s.length <= OUTPUT_LIMIT ? s : `${s.slice(0, OUTPUT_LIMIT / 4)}\n…[${s.length - OUTPUT_LIMIT} chars omitted]…\n${s.slice(-(OUTPUT_LIMIT * 3) / 4)}`;
}

function failure(r: CheckResult, what: string, timeoutMs: number): string | null {
  if (r.spawnError) return `${what} could not start: ${r.spawnError}`;
  if (r.cancelled) return 'check cancelled';
  if (r.timedOut) return `${what} timed out after ${Math.round(timeoutMs / 1000)} s`;
  return null;
}

/** A fresh, empty host folder under the run folder for one check's output. */
function freshDir(root: string, name: string): string {
  const dir = join(root, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return dir;
}

export async function verifyHarbor(task: Task, workdir: string, runRoot: string, run: RunContainerCheck): Promise<EvaluatorVerdict> {
  const h = task.harbor!;
  const logs = freshDir(runRoot, 'verifier');
  const timeoutMs = h.verifierTimeoutMs ?? DEFAULT_VERIFIER_TIMEOUT_MS;
  // Harbor uploads tests/ to /tests right before the verifier; the copy keeps that layout (tests may write there).
  const command = [
    'rm -rf /tests && mkdir -p /tests && cp -a "$ROLLGATE_TESTS_DIR"/. /tests/ || exit 90',
    `cd ${shellQuote(workdir)} 2>/dev/null || cd /`,
    'bash /tests/test.sh',
  ].join('\n');
  const r = await run({ command, env: { ...h.verifierEnv }, checkFiles: h.testsDir, outputDir: { host: logs, sandbox: VERIFIER_LOGS }, carryWork: workdir, timeoutMs });
  const output = describe(r);
  const failed = failure(r, 'the verifier', timeoutMs);
  if (failed) return { type: 'harbor', reward: 0, output, error: failed };
  if (r.exitCode === 89) return { type: 'harbor', reward: 0, output, error: `could not carry the agent's work folder ${workdir} into the verifier container` };
  if (r.exitCode === 90) return { type: 'harbor', reward: 0, output, error: 'could not copy tests/ to /tests in the verifier container' };
  const got = readHarborReward(logs);
  if (got.error) return { type: 'harbor', reward: 0, output, error: got.error };
  return { type: 'harbor', reward: got.reward, output, rewards: got.rewards };
}

/** The agent's changes in `workdir` (a git repository) as a binary-safe unified diff. */
export async function agentDiff(workdir: string, base: string | undefined, runRoot: string, run: RunContainerCheck): Promise<{ diff: string } | { error: string }> {
  const out = freshDir(runRoot, 'diff');
  const command = [
    `cd ${shellQuote(workdir)} || exit 91`,
    'git rev-parse --git-dir >/dev/null 2>&1 || exit 92',
    // A throwaway index: the snapshot's own index stays as the agent left it.
    `GIT_INDEX_FILE=${OUT_MOUNT}/index git add -A >/dev/null 2>&1 || exit 93`,
    `GIT_INDEX_FILE=${OUT_MOUNT}/index git diff --cached --binary ${shellQuote(base ?? 'HEAD')} > ${OUT_MOUNT}/agent.diff || exit 94`,
  ].join('\n');
  const r = await run({ command, env: {}, outputDir: { host: out, sandbox: OUT_MOUNT }, timeoutMs: 120_000 });
  const failed = failure(r, 'taking the agent\'s diff', 120_000);
  if (failed) return { error: failed };
  if (r.exitCode === 91) return { error: `no folder ${workdir} in the image` };
  if (r.exitCode === 92) return { error: `${workdir} is not a git repository` };
  if (r.exitCode !== 0) return { error: `git could not take the agent's diff (exit ${r.exitCode}): ${r.stderr.trim().slice(0, 500)}` };
  const file = join(out, 'agent.diff');
  if (!existsSync(file)) return { error: 'the agent\'s diff was not written' };
  const diff = readFileSync(file, 'utf8');
  return diff.length > DIFF_LIMIT ? { error: `the agent's diff is larger than ${DIFF_LIMIT / 1024 / 1024} MiB` } : { diff };
}

export async function verifySweBench(task: Task, workdir: string, runRoot: string, run: RunContainerCheck): Promise<EvaluatorVerdict> {
  const s = task.swebench!;
  const taken = await agentDiff(workdir, s.baseCommit, runRoot, run);
  if ('error' in taken) return { type: 'swebench', reward: 0, error: taken.error };
  const files = freshDir(runRoot, 'swebench-check');
  writeFileSync(join(files, 'agent.diff'), taken.diff);
  if (s.testPatch) writeFileSync(join(files, 'test.patch'), s.testPatch.endsWith('\n') ? s.testPatch : `${s.testPatch}\n`);
  const tests = [...s.failToPass, ...s.passToPass].map(shellQuote).join(' ');
  const command = [
    `cd ${shellQuote(workdir)} || exit 91`,
    ...(s.baseCommit ? [`git checkout -q ${shellQuote(s.baseCommit)} 2>/dev/null || true`] : []),
    'if [ -s "$ROLLGATE_TESTS_DIR/agent.diff" ]; then git apply --binary "$ROLLGATE_TESTS_DIR/agent.diff" || { echo "the agent\'s diff does not apply to a clean checkout" >&2; exit 95; }; fi',
    // As SWE-bench's harness does: the files test_patch touches go back to the base first, so the agent's
    // edits to the tests themselves do not count.
    ...(s.testPatch ? [
      `for f in $(git apply --numstat "$ROLLGATE_TESTS_DIR/test.patch" | cut -f3); do git checkout -q ${shellQuote(s.baseCommit ?? 'HEAD')} -- "$f" 2>/dev/null || rm -f "$f"; done`,
      'git apply "$ROLLGATE_TESTS_DIR/test.patch" || { echo "test_patch does not apply" >&2; exit 96; }',
    ] : []),
    `${s.testCommand}${tests ? ` ${tests}` : ''}`,
  ].join('\n');
  const timeoutMs = DEFAULT_VERIFIER_TIMEOUT_MS;
  const r = await run({ command, env: {}, checkFiles: files, fromImage: true, timeoutMs });
  const output = describe(r);
  const failed = failure(r, 'the tests', timeoutMs);
  if (failed) return { type: 'swebench', reward: 0, output, diff: taken.diff, error: failed };
  if (r.exitCode === 96) return { type: 'swebench', reward: 0, output, diff: taken.diff, error: 'test_patch does not apply to the repository' };
  return { type: 'swebench', reward: r.exitCode === 0 ? 1 : 0, output, diff: taken.diff };
}
