// `rollgate export` in-process (no network): options, stdout vs file, progress on stderr, errors.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerExport, runExport, type ExportCommandOptions } from '../../src-main/commands/export.js';
import type { CompletionRecord, NewSession } from '../../src-main/core/types.js';
import { openStore } from '../../src-main/store/index.js';

let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rollgate-cli-export-'));
  const store = openStore({ dataDir: dir });
  for (let s = 0; s < 5; s++) {
    const id = `ses_${s}`;
    const session: NewSession = {
      id, key: randomBytes(16).toString('hex'), engineId: s % 2 ? 'sim-sglang' : 'sim-vllm', harness: 'builtin', taskId: 'task',
      batchId: s < 3 ? 'b1' : 'b2', metadata: { sampleIndex: s }, status: 'finished', reward: s / 4, createdAt: s, finishedAt: s,
    };
    await store.writer.putSession(session);
    // Two turns: the second prompt extends the first prompt + output (one merged trace).
    const p1 = Int32Array.from([1, 2, 3, 4]);
    const o1 = Int32Array.from([10, 11, 99]);
    const p2 = Int32Array.from([...p1, ...o1, 5, 6]);
    const o2 = Int32Array.from([12, 99]);
    const base = {
      sessionId: id, dialect: 'openai-chat' as const, engineId: session.engineId!, replica: 'http://127.0.0.1:1', policyVersion: 1,
      requestServed: null, finishReason: 'stop' as const, usage: null, timings: { queueMs: 0, ttftMs: 1, totalMs: 2 },
      status: 'ok' as const, error: null, retryOf: null,
    };
    const response = (content: string) => ({
      id: 'r', model: 'm', created: 0, finish_reason: 'stop' as const, usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      message: { role: 'assistant' as const, content, reasoning: null, tool_calls: [] },
    });
    const c1: CompletionRecord = {
      ...base, id: `${id}-1`, seq: 0, createdAt: 1, promptIds: p1, outputIds: o1, outputLogprobs: Float32Array.from([-0.5, -0.25, -0.125]),
      requestReceived: { model: 'm', messages: [{ role: 'user', content: 'hi' }] }, response: response('hello'),
    };
    const c2: CompletionRecord = {
      ...base, id: `${id}-2`, seq: 1, createdAt: 2, promptIds: p2, outputIds: o2, outputLogprobs: Float32Array.from([-1, -2]),
      requestReceived: { model: 'm', messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }, { role: 'user', content: 'again' }] },
      response: response('bye'),
    };
    await store.writer.putCompletion(c1);
    await store.writer.putCompletion(c2);
  }
  await store.close();
});
afterAll(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

function sink(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  const parts: Buffer[] = [];
  stream.on('data', (b: Buffer) => parts.push(b));
  return { stream, text: () => Buffer.concat(parts).toString('utf8') };
}

const defaults: ExportCommandOptions = { format: 'train', builder: 'prefix-merge' };

describe('runExport', () => {
  it('writes train rows to stdout, no progress line', async () => {
    const out = sink();
    const err = sink();
    const p = await runExport({ ...defaults, dataDir: dir }, { stdout: out.stream, stderr: err.stream });
    const rows = out.text().split('\n').filter(Boolean).map((l) => JSON.parse(l));
    expect(rows).toHaveLength(5);
    expect(err.text()).toBe('');
    expect(p).toMatchObject({ sessions: 5, completions: 10, traces: 5, rows: 5 });
    const r0 = rows[0];
    expect(r0).toMatchObject({
      trace_id: 'ses_0/pm/ses_0-1', session_id: 'ses_0', task_id: 'task', batch_id: 'b1', group_id: 'b1:task', sample_index: 0,
      engine: 'sim-vllm', policy_versions: [1, 1], prompt_ids: [1, 2, 3, 4], response_ids: [10, 11, 99, 5, 6, 12, 99],
      loss_mask: [1, 1, 1, 0, 0, 1, 1], response_logprobs: [-0.5, -0.25, -0.125, 0, 0, -1, -2], reward: 0,
    });
  });

  it('writes to a file with a progress line on stderr; filters by batch, engine and reward', async () => {
    const file = join(dir, 'out.jsonl');
    const err = sink();
    const p = await runExport({ ...defaults, dataDir: dir, out: file, batch: 'b1', minReward: 0.2 }, { stdout: sink().stream, stderr: err.stream });
    const rows = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
    expect(rows.map((r) => r.session_id)).toEqual(['ses_1', 'ses_2']);
    expect(p.filtered).toBe(1);
    expect(err.text()).toMatch(/exported 2 traces from 3 sessions \(6 completions, 0\.0 MB\); skipped 1 outside the reward filters\n$/);
    const e = await runExport({ ...defaults, dataDir: dir, engine: 'sim-sglang', format: 'sft' }, { stdout: sink().stream, stderr: sink().stream });
    expect(e).toMatchObject({ sessions: 2, rows: 2 });
  });

  it('SFT rows carry the conversation up to the last turn', async () => {
    const out = sink();
    await runExport({ ...defaults, dataDir: dir, format: 'sft', session: 'ses_3' }, { stdout: out.stream, stderr: sink().stream });
    const [row] = out.text().split('\n').filter(Boolean).map((l) => JSON.parse(l));
    expect(row.messages).toEqual([
      { role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }, { role: 'user', content: 'again' }, { role: 'assistant', content: 'bye' },
    ]);
    expect(row.reward).toBe(0.75);
  });

  it('stops quietly when stdout is closed by the reader (EPIPE)', async () => {
    const broken = new Writable({ write(_chunk, _enc, cb) { const e = new Error('write EPIPE') as NodeJS.ErrnoException; e.code = 'EPIPE'; cb(e); } });
    await expect(runExport({ ...defaults, dataDir: dir }, { stdout: broken, stderr: sink().stream })).resolves.toBeTruthy();
  });

  it('refuses a folder without data and an empty reward range', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'rollgate-cli-export-empty-'));
    try {
      await expect(runExport({ ...defaults, dataDir: empty })).rejects.toThrow(/no Rollgate data in/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
    await expect(runExport({ ...defaults, dataDir: dir, minReward: 1, maxReward: 0 })).rejects.toThrow(/--min-reward is greater than --max-reward/);
  });
});

describe('the export command line', () => {
  function program() {
    const errors: string[] = [];
    const p = new Command('rollgate').exitOverride().configureOutput({ writeErr: (s) => errors.push(s), writeOut: () => undefined });
    registerExport(p);
    return { p, errors };
  }

  it('rejects unknown formats and builders and non-numeric rewards', async () => {
    for (const args of [['--format', 'csv'], ['--builder', 'x'], ['--min-reward', 'high']]) {
      const { p, errors } = program();
      await expect(p.parseAsync(['node', 'rollgate', 'export', ...args])).rejects.toThrow();
      expect(errors.join('')).toMatch(/must be one of|must be a number/);
    }
  });

  it('passes parsed options through', async () => {
    const { p } = program();
    const file = join(dir, 'cmd.jsonl');
    await p.parseAsync(['node', 'rollgate', 'export', '--data-dir', dir, '--out', file, '--no-progress', '--builder', 'per-request', '--max-reward', '0.25']);
    const rows = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
    expect(rows.map((r) => r.trace_id)).toEqual(['ses_0/pr/ses_0-1', 'ses_0/pr/ses_0-2', 'ses_1/pr/ses_1-1', 'ses_1/pr/ses_1-2']);
  });
});

describe('rollgate export --verify (issue 14)', () => {
  it('passes an untouched export; names a row edited in the file and a row that no longer matches the store', async () => {
    const { runVerify, verifySummary } = await import('../../src-main/commands/export-verify.js');
    const { traceDigest } = await import('../../src-main/core/export/digest.js');
    const { writeFileSync } = await import('node:fs');
    const file = join(dir, 'verify.jsonl');
    await runExport({ ...defaults, dataDir: dir, out: file, progress: false }, { stdout: sink().stream, stderr: sink().stream });
    const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
    expect(lines).toHaveLength(5);
    const ok = await runVerify(file, { dataDir: dir });
    expect(ok).toEqual({ rows: 5, ok: 5, problems: [] });
    expect(verifySummary(ok)).toBe('verified 5 rows: 5 match the store');

    const rows = lines.map((l) => JSON.parse(l));
    rows[1].response_logprobs[0] = -0.75; // edited, digest left as it was
    rows[3].loss_mask[3] = 1; // edited, digest recomputed: consistent in itself, but not what the store holds
    rows[3].digest = traceDigest(rows[3]);
    writeFileSync(file, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const bad = await runVerify(file, { dataDir: dir });
    expect(bad.ok).toBe(3);
    expect(bad.problems).toEqual([
      { line: 2, traceId: rows[1].trace_id, problem: expect.stringMatching(/do not match the row's digest/) },
      { line: 4, traceId: rows[3].trace_id, problem: expect.stringMatching(/differs from the trace the store holds/) },
    ]);
    expect(verifySummary(bad)).toMatch(/^verified 5 rows: 3 match the store, 2 do not\n  line 2 /);
  });
});
