// `rollgate export` on the data folder of a running Rollgate equals GET /api/export (issue 4).
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT as ROOT } from '../helpers/paths.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { toolSession } from './traces-agent.js';

const run = promisify(execFile);
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');
const CLI = join(ROOT, 'src-main', 'cli.ts');

let app: TestApp;
let out: string;
beforeAll(async () => {
  app = await startTestApp({ simSkill: 1 });
  out = mkdtempSync(join(tmpdir(), 'rollgate-export-cli-'));
  const a = await toolSession(app, 'sim-vllm', { reward: 1, body: { taskId: 'arith' } });
  const b = await toolSession(app, 'sim-sglang', { reward: 0, body: { taskId: 'arith' } });
  await toolSession(app, 'sim-sglang', { reward: 1 });
  for (const s of [a, b]) await app.store.writer.updateSession(s.sessionId, { batchId: 'b1' });
});
afterAll(async () => {
  await app?.stop();
  if (out) rmSync(out, { recursive: true, force: true });
});

async function apiExport(query: string): Promise<string> {
  const res = await fetch(`${app.url}/api/export${query}`);
  expect(res.status).toBe(200);
  return res.text();
}

async function cli(args: string[]) {
  return run(TSX, [CLI, 'export', '--data-dir', app.dataDir, ...args], { cwd: ROOT, maxBuffer: 256 * 1024 * 1024, env: { ...process.env, ROLLGATE_DATA_DIR: '' } });
}

describe('rollgate export', () => {
  it('to a file equals the API export (train), with a progress line on stderr', async () => {
    const file = join(out, 'train.jsonl');
    const { stdout, stderr } = await cli(['--out', file]);
    expect(stdout).toBe('');
    const text = readFileSync(file, 'utf8');
    expect(text.length).toBeGreaterThan(1000);
    expect(text).toBe(await apiExport('?format=train'));
    const lines = text.split('\n').filter(Boolean);
    expect(stderr).toMatch(new RegExp(`exported ${lines.length} traces from 3 sessions \\(\\d+ completions, [0-9.]+ MB\\)`));
    for (const l of lines) {
      const row = JSON.parse(l);
      expect(row.response_ids.length).toBe(row.loss_mask.length);
      expect(row.response_ids.length).toBe(row.response_logprobs.length);
    }
  }, 60_000);

  it('filters and formats like the API (batch, engine, reward range, builder, sft), to stdout without progress', async () => {
    const cases: Array<[string[], string]> = [
      [['--batch', 'b1', '--format', 'sft'], '?batch=b1&format=sft'],
      [['--engine', 'sim-sglang', '--builder', 'per-request', '--min-reward', '0.5'], '?engine=sim-sglang&builder=per-request&minReward=0.5'],
      [['--max-reward', '0', '--messages'], '?maxReward=0&messages=1'],
    ];
    for (const [args, query] of cases) {
      const { stdout, stderr } = await cli(args);
      expect(stderr).toBe('');
      const expected = await apiExport(query);
      expect(expected.length, query).toBeGreaterThan(0);
      expect(stdout, args.join(' ')).toBe(expected);
    }
  }, 120_000);

  it('fails clearly on a folder without data and on bad options', async () => {
    const empty = mkdtempSync(join(out, 'empty-'));
    await expect(run(TSX, [CLI, 'export', '--data-dir', empty], { cwd: ROOT })).rejects.toMatchObject({ stderr: expect.stringMatching(/no Rollgate data in/) });
    await expect(cli(['--format', 'csv'])).rejects.toMatchObject({ stderr: expect.stringMatching(/--format must be one of train, sft/) });
    await expect(cli(['--min-reward', 'x'])).rejects.toMatchObject({ stderr: expect.stringMatching(/must be a number/) });
  }, 60_000);
});
