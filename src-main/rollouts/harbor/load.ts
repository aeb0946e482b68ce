// Harbor task folders → tasks (DESIGN §7). A folder is a task when it holds task.toml or instruction.md;
// otherwise its sub-folders that are tasks are loaded, in name order. A broken task folder (no
// instruction, task.toml that does not parse, nothing to build, no tests/test.sh) becomes a task marked
// `invalid` with the reason: its samples fail with that reason and the rest of the batch runs.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Task } from '../tasks.js';
import { DatasetError } from '../tasks.js';
import { parseTaskToml, type HarborSettings } from './task-toml.js';

/** What the verifier and the oracle need; none of it is visible to the agent. */
export interface HarborTaskInfo {
  dir: string;
  /** Mounted read-only at /tests for the verifier only, after the agent has exited. */
  testsDir: string;
  /** Mounted at /solution for the `oracle` harness only; null when the task ships no solution/solve.sh. */
  solutionDir: string | null;
  agentTimeoutMs?: number;
  verifierTimeoutMs?: number;
  verifierEnv: Record<string, string>;
  solutionEnv: Record<string, string>;
  allowInternet: boolean;
}

const isFile = (p: string) => existsSync(p) && statSync(p).isFile();

export function isHarborTaskDir(dir: string): boolean {
  return isFile(join(dir, 'task.toml')) || isFile(join(dir, 'instruction.md'));
}

/** A task id from a folder name: the id rules of tasks.ts (no whitespace, slashes or colons). */
function taskId(dir: string): string {
  return basename(dir).replace(/[\s/\\:]+/g, '_').slice(0, 200) || 'task';
}

export function loadHarborTask(dir: string): Task {
  const id = taskId(dir);
  const problems: string[] = [];
  const instructionPath = join(dir, 'instruction.md');
  const instruction = isFile(instructionPath) ? readFileSync(instructionPath, 'utf8').trim() : '';
  if (!instruction) problems.push(isFile(instructionPath) ? 'instruction.md is empty' : 'no instruction.md (the prompt)');

  let settings: HarborSettings | null = null;
  if (!isFile(join(dir, 'task.toml'))) problems.push('no task.toml');
  else {
    try {
      settings = parseTaskToml(readFileSync(join(dir, 'task.toml'), 'utf8'));
    } catch (e) {
      problems.push((e as Error).message);
    }
  }
  const envDir = join(dir, 'environment');
  const hasDockerfile = isFile(join(envDir, 'Dockerfile'));
  if (settings && !hasDockerfile && !settings.dockerImage) problems.push('no environment/Dockerfile and no [environment] docker_image in task.toml');
  const testsDir = join(dir, 'tests');
  if (!isFile(join(testsDir, 'test.sh'))) problems.push('no tests/test.sh (the verifier)');
  const solutionDir = isFile(join(dir, 'solution', 'solve.sh')) ? join(dir, 'solution') : null;

  const s = settings;
  return {
    id,
    prompt: instruction || '(this task has no instruction)',
    metadata: { harbor: { dir, ...(s?.name ? { name: s.name } : {}) }, ...(s?.metadata ?? {}) },
    container: {
      // A Dockerfile wins over docker_image, as in Harbor's docker environment.
      ...(hasDockerfile ? { buildContext: envDir } : s?.dockerImage ? { image: s.dockerImage } : {}),
      ...(s?.buildTimeoutMs ? { buildTimeoutMs: s.buildTimeoutMs } : {}),
      ...(s && !s.allowInternet ? { buildNetwork: 'none' as const } : {}),
      ...(s?.cpus ? { cpus: s.cpus } : {}),
      ...(s?.memoryMb ? { memoryMb: s.memoryMb } : {}),
    },
    harbor: {
      dir, testsDir, solutionDir,
      ...(s?.agentTimeoutMs ? { agentTimeoutMs: s.agentTimeoutMs } : {}),
      ...(s?.verifierTimeoutMs ? { verifierTimeoutMs: s.verifierTimeoutMs } : {}),
      verifierEnv: s?.verifierEnv ?? {}, solutionEnv: s?.solutionEnv ?? {}, allowInternet: s?.allowInternet ?? true,
    },
    ...(problems.length ? { invalid: `broken Harbor task ${id}: ${problems.join('; ')}` } : {}),
  };
}

/** One task folder, or every task folder directly inside `path`. */
export function loadHarborTasks(path: string, ref: string = path): Task[] {
  if (isHarborTaskDir(path)) return [loadHarborTask(path)];
  const dirs = readdirSync(path, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
    .map((e) => join(path, e.name))
    .filter((d) => isHarborTaskDir(d) || existsSync(join(d, 'environment')) || existsSync(join(d, 'tests')))
    .sort();
  if (!dirs.length) throw new DatasetError(ref, [`no Harbor task folders in ${path} (a task folder holds instruction.md, task.toml, environment/ and tests/test.sh)`]);
  return dirs.map(loadHarborTask);
}
