// Datasets: JSONL parsing and validation (line + field in every error, all-or-nothing), the demos.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DatasetError, listDemoDatasets, loadDataset, parseDataset, validateTasks } from '../../src-main/rollouts/tasks.js';

function problems(fn: () => unknown): string[] {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(DatasetError);
    return (e as DatasetError).problems;
  }
  throw new Error('expected a DatasetError');
}

describe('parseDataset', () => {
  it('parses valid rows, skipping blank and comment lines; numbers in expected become strings', () => {
    const tasks = parseDataset([
      '// a comment',
      '{"id":"a","prompt":"What is 1 + 1?","expected":2}',
      '',
      '{"id":"b","prompt":"fix it","files":{"src/x.js":"1"},"check":"node test.js","metadata":{"k":1}}',
      '{"id":"c","prompt":"p","check":{"type":"regex","pattern":"^ok$","flags":"i"}}',
    ].join('\n'), 't.jsonl');
    expect(tasks.map((t) => t.id)).toEqual(['a', 'b', 'c']);
    expect(tasks[0].expected).toBe('2');
    expect(tasks[1].files).toEqual({ 'src/x.js': '1' });
  });

  it('reports every bad row with its line number and field, and rejects the whole dataset', () => {
    const text = [
      '{"id":"ok-1","prompt":"fine"}',
      '{"id":"","prompt":"empty id"}',
      '{"id":"x","prompt":"p","files":{"../escape.txt":"no"}}',
      'not json at all',
      '{"id":"y","prompt":"p","expected":"1","colour":"red"}',
      '{"id":"ok-1","prompt":"duplicate"}',
      '{"id":"z","prompt":"p","check":{"type":"regex","pattern":"("}}',
      '{"id":"w","prompt":42}',
      '{"id":"v","prompt":"p","check":{"type":"magic"}}',
    ].join('\n');
    const p = problems(() => parseDataset(text, 'bad.jsonl'));
    expect(p.find((m) => m.startsWith('line 2: id:'))).toBeTruthy();
    expect(p).toContain('line 3: files["../escape.txt"]: must be a relative path inside the work folder (no "..", not absolute)');
    expect(p).toContain('line 2: id: must not be empty');
    expect(p.find((m) => m.startsWith('line 4: row: not valid JSON'))).toBeTruthy();
    expect(p.find((m) => m.startsWith('line 5: row: unknown field(s) "colour"'))).toBeTruthy();
    expect(p.find((m) => m.startsWith('line 6: id: duplicate id "ok-1" (first at line 1)'))).toBeTruthy();
    expect(p.find((m) => m.startsWith('line 7: check'))).toBeTruthy();
    expect(p.find((m) => m.startsWith('line 8: prompt:'))).toBeTruthy();
    expect(p.find((m) => m.startsWith('line 9: check: must be a shell command'))).toBeTruthy();
    // sorted by line
    const lines = p.map((m) => Number(/^line (\d+)/.exec(m)![1]));
    expect([...lines].sort((a, b) => a - b)).toEqual(lines);
  });

  it('a single bad row among good ones still rejects everything (no partial batch)', () => {
    const rows = Array.from({ length: 50 }, (_, i) => JSON.stringify({ id: `t${i}`, prompt: 'p' }));
    rows[37] = JSON.stringify({ id: 't37' });
    const p = problems(() => parseDataset(rows.join('\n'), 'x'));
    expect(p).toEqual(['line 38: prompt: Invalid input: expected string, received undefined']);
  });

  it('an empty dataset is an error', () => {
    expect(problems(() => parseDataset('\n// nothing\n', 'empty'))).toEqual(['no tasks']);
  });

  it('the error message names the source and the problems', () => {
    expect(() => parseDataset('{"id":"a"}', 'my.jsonl')).toThrow(/invalid dataset my\.jsonl:\n {2}line 1: prompt:/);
  });
});

describe('validateTasks (inline tasks of POST /api/batches)', () => {
  it('names rows by index', () => {
    expect(problems(() => validateTasks([{ id: 'a', prompt: 'p' }, { id: 'b', prompt: '' }], 'tasks', (i) => `tasks[${i}]`)))
      .toEqual([expect.stringMatching(/^tasks\[1\]: prompt:/)]);
  });
});

describe('loadDataset', () => {
  it('loads a file relative to cwd and reports a missing one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rollgate-ds-'));
    writeFileSync(join(dir, 'd.jsonl'), '{"id":"a","prompt":"p","expected":"1"}\n');
    expect(loadDataset('d.jsonl', dir).tasks).toHaveLength(1);
    expect(problems(() => loadDataset('nope.jsonl', dir))[0]).toMatch(/^file not found/);
    expect(problems(() => loadDataset('demo:nope'))[0]).toMatch(/unknown demo dataset "nope"; demos: .*calculator/);
  });

  it('ships demo:calculator (≥ 12 arithmetic tasks with numeric answers) and demo:repo-fix (≥ 3 repos with a check)', () => {
    expect(listDemoDatasets()).toEqual(expect.arrayContaining(['calculator', 'repo-fix']));
    const calc = loadDataset('demo:calculator').tasks;
    expect(calc.length).toBeGreaterThanOrEqual(12);
    for (const t of calc) expect(Number.isFinite(Number(t.expected))).toBe(true);
    const repo = loadDataset('demo:repo-fix').tasks;
    expect(repo.length).toBeGreaterThanOrEqual(3);
    for (const t of repo) {
      expect(Object.keys(t.files ?? {}).length).toBeGreaterThanOrEqual(2);
      expect(typeof t.check).toBe('string');
    }
  });
});
