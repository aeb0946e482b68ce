// Datasets (DESIGN §7): JSONL tasks `{id, prompt, files?, expected?, check?, image?, workdir?, metadata?}`
// or SWE-bench-style rows (swebench.ts), from a file or a demo shipped in assets/datasets/; or Harbor task
// folders (harbor/load.ts). JSONL validation is all-or-nothing: one bad row rejects the whole dataset, and
// every problem is reported with its line number and field. A broken Harbor folder only marks its own task.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { loadHarborTasks } from './harbor/load.js';
import type { HarborTaskInfo } from './harbor/load.js';
import { DEFAULT_SWEBENCH_TEST_COMMAND, DEFAULT_SWEBENCH_WORKDIR, isSweBenchRow, sweBenchRowSchema, type SweBenchSpec } from './swebench.js';

const here = dirname(fileURLToPath(import.meta.url));
export const DEMO_DATASETS_DIR = resolve(here, '..', '..', 'assets', 'datasets');

/** A path inside the work folder: relative, no `..`, no NUL. */
const relPath = z.string().min(1).refine(
  (p) => !isAbsolute(p) && !p.includes('\0') && !p.split(/[\\/]/).some((s) => s === '..') && !/^[A-Za-z]:/.test(p),
  { message: 'must be a relative path inside the work folder (no "..", not absolute)' },
);

export const evaluatorSpec = z.discriminatedUnion('type', [
  z.object({ type: z.literal('exact'), value: z.string().optional() }).strict(),
  z.object({ type: z.literal('regex'), pattern: z.string().min(1), flags: z.string().regex(/^[dgimsuy]*$/).optional() }).strict()
    .refine((e) => { try { new RegExp(e.pattern, e.flags); return true; } catch { return false; } }, { message: 'invalid regular expression', path: ['pattern'] }),
  z.object({
    type: z.literal('command'),
    command: z.string().min(1),
    /** auto: a number alone on the last stdout line is the reward, else exit code 0 → 1, other → 0. */
    reward: z.enum(['auto', 'exit', 'stdout']).optional(),
    timeoutMs: z.number().int().positive().optional(),
  }).strict(),
  z.object({
    type: z.literal('json'),
    /** Reward file in the work folder: a number, or an object with a `reward` (or `key`) number. */
    path: relPath.optional(),
    key: z.string().min(1).optional(),
    /** The check command (run in the work folder, in a fresh sandbox) that writes the file; the agent's own file never counts. */
    command: z.string({ error: 'the json evaluator needs a check "command" that writes the reward file (a file the agent wrote is not a reward)' }).min(1),
    timeoutMs: z.number().int().positive().optional(),
  }).strict(),
]);
export type EvaluatorSpec = z.infer<typeof evaluatorSpec>;

export const taskSchema = z.object({
  id: z.string().min(1, 'must not be empty').max(200).regex(/^[^\s/\\:]*$/, 'must not contain whitespace, slashes or colons'),
  prompt: z.string().min(1),
  files: z.record(relPath, z.string()).optional(),
  expected: z.union([z.string(), z.number().finite()]).transform(String).optional(),
  /** A shell command run in the work folder (the command evaluator), or an explicit evaluator. */
  check: z.union([z.string().min(1), evaluatorSpec], {
    error: 'must be a shell command (string) or an evaluator {type: "exact"|"regex"|"command"|"json", …}',
  }).optional(),
  /** A container image the task runs in (docker runtime); `workdir` is the agent's folder inside it. */
  image: z.string().min(1).optional(),
  workdir: z.string().regex(/^\//, 'must be an absolute path in the image').optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  /**
   * Hidden check files: inline `{path: content}` or a folder (relative to the dataset file). Checks see them
   * read-only at $ROLLGATE_TESTS_DIR (/run/rollgate/tests in a sandbox); the agent never does.
   */
  tests: z.union([z.record(relPath, z.string()), z.string().min(1)]).optional(),
}).strict();

/** Where a container task runs: a prebuilt `image`, or a `buildContext` folder built once (images/builder.ts). */
export interface ContainerSpec {
  image?: string;
  buildContext?: string;
  buildTimeoutMs?: number;
  /** `none`: the build gets no network either (Harbor `allow_internet = false`). */
  buildNetwork?: 'none';
  /** The agent's folder in the image (default: the image's WORKDIR). */
  workdir?: string;
  cpus?: number;
  memoryMb?: number;
}

export type Task = z.infer<typeof taskSchema> & {
  container?: ContainerSpec;
  /** Harbor task folder facts (tests/, solution/, verifier settings); never shown to the agent. */
  harbor?: HarborTaskInfo;
  /** The check of a SWE-bench-style row; never shown to the agent. */
  swebench?: SweBenchSpec;
  /** Why this task cannot run (a broken Harbor folder): its samples fail with this reason, the batch goes on. */
  invalid?: string;
};
export type { HarborTaskInfo } from './harbor/load.js';

export class DatasetError extends Error {
  constructor(readonly source: string, readonly problems: string[]) {
    super(`invalid dataset ${source}:\n  ${problems.slice(0, 20).join('\n  ')}${problems.length > 20 ? `\n  … and ${problems.length - 20} more` : ''}`);
    this.name = 'DatasetError';
  }
}

export interface Dataset { name: string; source: string; tasks: Task[] }

function issuePath(path: ReadonlyArray<PropertyKey>): string {
  if (!path.length) return 'row';
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : /^[A-Za-z_$][\w$]*$/.test(String(p)) ? `${i ? '.' : ''}${String(p)}` : `[${JSON.stringify(String(p))}]`)).join('');
}

function issueMessage(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') return `unknown field(s) ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
  if (issue.code === 'invalid_key') return issue.issues[0]?.message ?? issue.message;
  return issue.message;
}

type Parsed = { success: true; data: Task } | { success: false; error: z.ZodError };

function plainTask(row: unknown): Parsed {
  const r = taskSchema.safeParse(row);
  if (!r.success) return r;
  const t: Task = r.data;
  if (t.image) t.container = { image: t.image, ...(t.workdir ? { workdir: t.workdir } : {}) };
  return { success: true, data: t };
}

/** The documented SWE-bench mapping (swebench.ts). */
function sweBenchTask(row: unknown): Parsed {
  const r = sweBenchRowSchema.safeParse(row);
  if (!r.success) return r;
  const s = r.data;
  const workdir = s.workdir ?? DEFAULT_SWEBENCH_WORKDIR;
  const meta = { instance_id: s.instance_id, ...(s.repo ? { repo: s.repo } : {}), ...(s.base_commit ? { base_commit: s.base_commit } : {}), ...(s.version ? { version: s.version } : {}), ...s.metadata };
  return {
    success: true,
    data: {
      id: s.instance_id, prompt: s.problem_statement, image: s.image, workdir, metadata: meta,
      container: { image: s.image, workdir },
      swebench: {
        testCommand: s.test_command ?? DEFAULT_SWEBENCH_TEST_COMMAND, failToPass: s.FAIL_TO_PASS ?? [], passToPass: s.PASS_TO_PASS ?? [],
        ...(s.test_patch ? { testPatch: s.test_patch } : {}), ...(s.patch ? { goldPatch: s.patch } : {}), ...(s.base_commit ? { baseCommit: s.base_commit } : {}),
      },
    },
  };
}

/** Validates task objects; `where(i)` names a row in errors (e.g. "line 3"). Throws DatasetError listing every problem. */
export function validateTasks(rows: unknown[], source: string, where: (i: number) => string = (i) => `task ${i + 1}`): Task[] {
  const problems: string[] = [];
  const tasks: Task[] = [];
  const seen = new Map<string, number>();
  rows.forEach((row, i) => {
    const r = isSweBenchRow(row) ? sweBenchTask(row) : plainTask(row);
    if (!r.success) {
      for (const issue of r.error.issues) {
        problems.push(`${where(i)}: ${issuePath(issue.path)}: ${issueMessage(issue)}`);
      }
      return;
    }
    const prev = seen.get(r.data.id);
    if (prev !== undefined) problems.push(`${where(i)}: id: duplicate id "${r.data.id}" (first at ${where(prev)})`);
    else seen.set(r.data.id, i);
    tasks.push(r.data);
  });
  if (!problems.length && !tasks.length) problems.push('no tasks');
  if (problems.length) throw new DatasetError(source, problems);
  return tasks;
}

/**
 * Where a row stops being JSON, without quoting it: the engine's message quotes the text, and a path that is not
 * a dataset at all (a key file, /etc/shadow) must not have its contents echoed back to whoever submitted it.
 */
function notJson(e: unknown): string {
  const at = /position (\d+)/.exec((e as Error).message)?.[1];
  return at === undefined ? 'not valid JSON' : `not valid JSON (at character ${Number(at) + 1})`;
}

/** Parses JSONL text (blank lines and lines starting with `//` or `#` are skipped). */
export function parseDataset(text: string, source: string): Task[] {
  const rows: unknown[] = [];
  const lines: number[] = [];
  const problems: string[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    const t = line.trim();
    if (!t || t.startsWith('//') || t.startsWith('#')) return;
    try {
      rows.push(JSON.parse(t));
      lines.push(i + 1);
    } catch (e) {
      problems.push(`line ${i + 1}: row: ${notJson(e)}`);
    }
  });
  let tasks: Task[] = [];
  try {
    tasks = validateTasks(rows, source, (i) => `line ${lines[i]}`);
  } catch (e) {
    if (!(e instanceof DatasetError)) throw e;
    problems.push(...e.problems.filter((p) => p !== 'no tasks' || !problems.length));
  }
  if (problems.length) {
    const lineOf = (p: string) => Number(/^line (\d+)/.exec(p)?.[1] ?? 0);
    throw new DatasetError(source, problems.sort((a, b) => lineOf(a) - lineOf(b)));
  }
  return tasks;
}

/** A `tests` folder is relative to the dataset file's folder. */
function withTestsFrom(tasks: Task[], dir: string): Task[] {
  return tasks.map((t) => (typeof t.tests === 'string' && !isAbsolute(t.tests) ? { ...t, tests: resolve(dir, t.tests) } : t));
}

export function listDemoDatasets(dir: string = DEMO_DATASETS_DIR): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((f) => f.endsWith('.jsonl')).map((f) => basename(f, '.jsonl')).sort();
}

/** `demo:NAME` (assets/datasets/NAME.jsonl), a JSONL file path, or a Harbor task folder / folder of them (relative to `cwd`). */
export function loadDataset(ref: string, cwd: string = process.cwd()): Dataset {
  if (ref.startsWith('demo:')) {
    const name = ref.slice(5);
    const demos = listDemoDatasets();
    if (!demos.includes(name)) throw new DatasetError(ref, [`unknown demo dataset "${name}"; demos: ${demos.join(', ') || '(none)'}`]);
    const source = join(DEMO_DATASETS_DIR, `${name}.jsonl`);
    return { name: ref, source, tasks: withTestsFrom(parseDataset(readFileSync(source, 'utf8'), ref), dirname(source)) };
  }
  const path = resolve(cwd, ref);
  if (!existsSync(path)) throw new DatasetError(ref, [`file not found: ${path}`]);
  if (statSync(path).isDirectory()) return { name: basename(path), source: path, tasks: loadHarborTasks(path, ref) };
  return { name: basename(path), source: path, tasks: withTestsFrom(parseDataset(readFileSync(path, 'utf8'), ref), dirname(path)) };
}
