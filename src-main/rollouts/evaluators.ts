// Evaluators (DESIGN §7): turn a finished run into a reward. Every evaluator returns a verdict
// {type, reward, output, error?}; an evaluator that cannot decide (bad regex, check that cannot start or
// times out, missing/invalid reward file) returns reward 0 with `error` set, and the error is kept with
// the session.
//
// Final answer (what `exact` and `regex` look at): the agent's stdout, trimmed. For `exact`:
//   1. If the text contains "The answer is X" (the sim policy's and the builtin agent's convention;
//      case-insensitive, last occurrence wins), X (up to the end of its line) is the answer.
//      Else if it contains `\boxed{X}`, X is the answer. Else the last non-empty line is the answer.
//   2. Both answer and expected value are normalized: Unicode NFKC, lower case, whitespace collapsed,
//      surrounding quotes/backticks/`**` removed, trailing punctuation (. , ; : ! ?) removed.
//   3. They match when the normalized strings are equal, or when both read as numbers (commas as
//      thousands separators allowed) that are equal within 1e-9 (relative), so "42.0" matches "42".
import { existsSync, lstatSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { dirname, resolve, sep } from 'node:path';
import type { EvaluatorVerdict } from '../store/index.js';
import type { ProcessResult } from './runtimes/process.js';
import type { EvaluatorSpec, Task } from './tasks.js';

export type { EvaluatorSpec } from './tasks.js';

const OUTPUT_LIMIT = 16 * 1024;

function clip(s: string, limit = OUTPUT_LIMIT): string {
  return s.length <= limit ? s : `${s.slice(0, limit / 4)}\n…[${s.length - limit} chars omitted]…\n${s.slice(-(limit * 3) / 4)}`;
}

/** The answer part of an agent's final output (rule 1 above). */
export function extractAnswer(text: string): string {
  const t = text.trim();
  const marks = [...t.matchAll(/the (?:final )?answer is[: \t]*/gi)];
  if (marks.length) {
    const last = marks[marks.length - 1];
    const a = t.slice(last.index + last[0].length).split('\n')[0].trim();
    if (a) return a;
  }
  const boxed = [...t.matchAll(/\\boxed\{([^{}]*)\}/g)];
  if (boxed.length) return boxed[boxed.length - 1][1].trim();
  const lines = t.split('\n').map((l) => l.trim()).filter(Boolean);
  return lines[lines.length - 1] ?? '';
}

/** Normalization of rule 2 above. */
export function normalizeAnswer(s: string): string {
  let t = s.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();
  for (let i = 0; i < 4; i++) {
    const before = t;
    t = t.replace(/[.,;:!?]+$/, '').trim();
    t = t.replace(/^\*\*(.*)\*\*$/, '$1').replace(/^__(.*)__$/, '$1').trim();
    t = t.replace(/^(["'`“”‘’])(.*)(["'`“”‘’])$/, '$2').trim();
    t = t.replace(/^\$(.*)\$$/, '$1').trim();
    if (t === before) break;
  }
  return t;
}

function asNumber(s: string): number | null {
  const t = s.replace(/(\d),(?=\d{3}\b)/g, '$1').replace(/\s/g, '');
  if (!/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(t)) return null;
  const n = Number(t);
  return Number.isFinite(n) ? n : null;
}

export function answersMatch(answer: string, expected: string): boolean {
  const a = normalizeAnswer(answer);
  const e = normalizeAnswer(expected);
  if (a === e) return true;
  const na = asNumber(a);
  const ne = asNumber(e);
  if (na === null || ne === null) return false;
  return Math.abs(na - ne) <= 1e-9 * Math.max(1, Math.abs(na), Math.abs(ne));
}

/** Which evaluator a task gets: explicit override, else the task's `check`, else `expected` → exact. */
export function evaluatorFor(task: Task, override?: EvaluatorSpec | null): EvaluatorSpec | null {
  if (override) return override;
  if (typeof task.check === 'string') return { type: 'command', command: task.check };
  if (task.check) return task.check;
  if (task.expected !== undefined) return { type: 'exact' };
  return null;
}

export interface EvaluateContext {
  task: Task;
  /** The agent's final output (stdout, or its end when it was long). */
  finalOutput: string;
  /** The work folder on the host (where reward files are read). */
  workDir: string;
  /**
   * Runs a check command in the work folder, in a fresh sandbox of the run's runtime (fresh HOME, the task's
   * tests mounted read-only), after every process of the agent is gone (runtimes/types.ts `Sandbox.check`).
   */
  runCheck: (command: string, timeoutMs: number) => Promise<ProcessResult>;
  /** Default time limit for check commands. */
  timeoutMs?: number;
}

/** Whether `dir`, symlinks resolved, is `root` or inside it (a missing `dir` is created by nobody: false). */
function insideReal(root: string, dir: string): boolean {
  try {
    const r = realpathSync(root);
    const d = realpathSync(dir);
    return d === r || d.startsWith(r + sep);
  } catch {
    return dir === root;
  }
}

/** A number alone on the last non-empty line of `stdout`, or null. */
export function lastLineNumber(stdout: string): number | null {
  const lines = stdout.split('\n').map((l) => l.trim()).filter(Boolean);
  const last = lines[lines.length - 1];
  return last === undefined ? null : asNumber(last);
}

function describeProcess(r: ProcessResult): string {
  const parts = [`exit ${r.exitCode ?? r.signal ?? '?'}`];
  if (r.stdout.trim()) parts.push(`stdout:\n${r.stdout.trimEnd()}`);
  if (r.stderr.trim()) parts.push(`stderr:\n${r.stderr.trimEnd()}`);
  return clip(parts.join('\n'));
}

function runCheck(command: string, ctx: EvaluateContext, timeoutMs: number | undefined): Promise<ProcessResult> {
  return ctx.runCheck(command, timeoutMs ?? ctx.timeoutMs ?? 120_000);
}

function processFailure(r: ProcessResult): string | null {
  if (r.spawnError) return `check could not start: ${r.spawnError}`;
  if (r.cancelled) return 'check cancelled';
  if (r.timedOut) return `check timed out after ${Math.round(r.durationMs / 1000)} s`;
  return null;
}

/** `{"traceRewards": {<trace, completion or response id>: number | null}}` in a reward file, when present and well formed. */
function traceRewardsIn(value: unknown): { traceRewards?: Record<string, number | null> } {
  const raw = value && typeof value === 'object' ? (value as Record<string, unknown>).traceRewards : undefined;
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return {};
  const out: Record<string, number | null> = {};
  for (const [k, v] of Object.entries(raw as Record<string, unknown>)) if (v === null || (typeof v === 'number' && Number.isFinite(v))) out[k] = v;
  return Object.keys(out).length ? { traceRewards: out } : {};
}

export async function evaluate(spec: EvaluatorSpec | null, ctx: EvaluateContext): Promise<EvaluatorVerdict> {
  if (!spec) return { type: 'none', reward: null, output: 'the task has no expected answer and no check' };
  try {
    switch (spec.type) {
      case 'exact': {
        const expected = spec.value ?? ctx.task.expected;
        if (expected === undefined) return { type: 'exact', reward: 0, error: 'exact evaluator without an expected value' };
        const answer = extractAnswer(ctx.finalOutput);
        const ok = answersMatch(answer, expected);
        return { type: 'exact', reward: ok ? 1 : 0, output: clip(`answer: ${JSON.stringify(answer)}; expected: ${JSON.stringify(expected)}`) };
      }
      case 'regex': {
        let re: RegExp;
        try {
          re = new RegExp(spec.pattern, spec.flags);
        } catch (e) {
          return { type: 'regex', reward: 0, error: `invalid regex: ${(e as Error).message}` };
        }
        const text = ctx.finalOutput.trim();
        const ok = re.test(text);
        return { type: 'regex', reward: ok ? 1 : 0, output: clip(`/${spec.pattern}/${spec.flags ?? ''} ${ok ? 'matched' : 'did not match'}`) };
      }
      case 'command': {
        const r = await runCheck(spec.command, ctx, spec.timeoutMs);
        const failure = processFailure(r);
        const output = describeProcess(r);
        if (failure) return { type: 'command', reward: 0, output, error: failure };
        const mode = spec.reward ?? 'auto';
        const printed = lastLineNumber(r.stdout);
        if (mode === 'stdout') {
          if (printed === null) return { type: 'command', reward: 0, output, error: 'the check printed no number on its last line' };
          return { type: 'command', reward: printed, output };
        }
        if (mode === 'auto' && printed !== null) return { type: 'command', reward: printed, output };
        return { type: 'command', reward: r.exitCode === 0 ? 1 : 0, output };
      }
      case 'json': {
        // The reward file counts only when the check command wrote it: one the agent left is removed first.
        const rel = spec.path ?? 'reward.json';
        const root = resolve(ctx.workDir);
        const file = resolve(root, rel);
        if (!file.startsWith(root + sep)) return { type: 'json', reward: 0, error: `reward file outside the work folder: ${rel}` };
        // The agent may have left symlinks: read and remove only inside the real work folder.
        if (!insideReal(root, dirname(file))) return { type: 'json', reward: 0, error: `reward file's folder leaves the work folder: ${rel}` };
        rmSync(file, { force: true, recursive: true });
        const r = await runCheck(spec.command, ctx, spec.timeoutMs);
        let output = describeProcess(r);
        const failure = processFailure(r);
        if (failure) return { type: 'json', reward: 0, output, error: failure };
        if (!existsSync(file)) return { type: 'json', reward: 0, output, error: `no reward file ${rel}` };
        if (!insideReal(root, dirname(file)) || !lstatSync(file).isFile()) return { type: 'json', reward: 0, output, error: `reward file ${rel} is not a plain file in the work folder` };
        const text = readFileSync(file, 'utf8');
        output = clip([output, `${rel}: ${text.trim()}`].filter(Boolean).join('\n'));
        let value: unknown;
        try {
          value = JSON.parse(text);
        } catch (e) {
          return { type: 'json', reward: 0, output, error: `reward file is not JSON: ${(e as Error).message}` };
        }
        const key = spec.key ?? 'reward';
        const reward = typeof value === 'number' ? value : value && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
        const traceRewards = traceRewardsIn(value);
        if (typeof reward === 'boolean') return { type: 'json', reward: reward ? 1 : 0, output, ...traceRewards };
        if (typeof reward !== 'number' || !Number.isFinite(reward)) return { type: 'json', reward: 0, output, error: `reward file has no numeric "${key}"` };
        return { type: 'json', reward, output, ...traceRewards };
      }
    }
  } catch (e) {
    return { type: (spec as { type: string }).type, reward: 0, error: `evaluator failed: ${(e as Error).message}` };
  }
}
