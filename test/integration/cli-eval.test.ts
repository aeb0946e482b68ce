// `rollgate eval` and `rollgate session` as child processes (tsx src-main/cli.ts …), temp data dirs.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src-main/store/index.js';
import { startTestApp } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';

const dirs: string[] = [];
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });
const tempDir = () => { const d = mkdtempSync(join(tmpdir(), 'rollgate-cli-')); dirs.push(d); return d; };

const rollgate = runCli;

describe('rollgate eval', () => {
  it('runs demo:calculator with the builtin agent, shows progress, prints the reward table and exits 0', async () => {
    const dataDir = tempDir();
    const r = await rollgate(['eval', '--dataset', 'demo:calculator', '--harness', 'builtin', '-n', '2', '--data-dir', dataDir]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/32\/32 samples/);
    const lines = r.stdout.split('\n');
    expect(lines.find((l) => l.startsWith('batch bat_'))).toMatch(/completed {2}dataset=demo:calculator {2}harness=builtin {2}engine=sim-vllm \(simulated\) {2}n=2/);
    expect(lines.find((l) => l.startsWith('task '))).toMatch(/^task\s+samples\s+mean\s+pass@1\s+pass@2\s+rewards$/);
    const rows = lines.filter((l) => l.startsWith('calc-'));
    expect(rows).toHaveLength(16);
    for (const row of rows) expect(row).toMatch(/^calc-\S+\s+2\/2\s+[01]\.\d{3}\s+\d\.\d{3}\s+\d\.\d{3}\s+[01] [01]$/);
    const mean = Number(/mean reward (\d\.\d+) over 32 scored samples/.exec(r.stdout)![1]);
    expect(mean).toBeGreaterThan(0.5);
    expect(mean).toBeLessThan(1);
    expect(r.stdout).toMatch(/sessions: 32 finished, 0 failed, 0 interrupted, 0 not run \(of 32\)/);
    // capture health (issue 14) under the table
    expect(r.stdout).toMatch(/^capture sim-vllm: \d+ traces, 0 masked; 0 incomplete sessions; chain breaks [\d.]+\/trace.*; retries 0; [\d.]+ completions\/trace$/m);

    // The batch is in the data dir, complete.
    const store = openStore({ dataDir });
    try {
      const [batch] = (await store.batches.list());
      expect(batch.status).toBe('completed');
      expect((await store.sessions.count({ batchId: batch.id }))).toBe(32);
    } finally {
      await store.close();
    }
  }, 180_000);

  it('exits non-zero with the line and field of a bad dataset row', async () => {
    const dir = tempDir();
    const file = join(dir, 'bad.jsonl');
    writeFileSync(file, '{"id":"a","prompt":"What is 1 + 1?","expected":"2"}\n{"id":"b","expected":"3"}\n');
    const r = await rollgate(['eval', '--dataset', file, '--harness', 'builtin', '--data-dir', join(dir, 'data')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/invalid dataset .*bad\.jsonl:\n {2}line 2: prompt: /);
    const unknown = await rollgate(['eval', '--dataset', 'demo:calculator', '--harness', 'nope', '--data-dir', join(dir, 'data')]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown harness "nope"/);
  }, 60_000);

  it('--runtime (or the topology file\'s runtime): names where agents run; local warns that they are unsandboxed; a wrong name exits 2', async () => {
    const dir = tempDir();
    const file = join(dir, 'one.jsonl');
    writeFileSync(file, '{"id":"a","prompt":"What is 2 + 2?","expected":"4"}\n');
    const args = ['eval', '--dataset', file, '--harness', 'command', '--command', 'echo "The answer is 4."', '--data-dir', join(dir, 'data')];
    // The default can come from the topology file (`runtime:`); --runtime wins over it.
    const topology = join(dir, 'topology.yaml');
    writeFileSync(topology, 'runtime: local\nengines:\n  - { id: spare, kind: vllm, replicas: ["http://127.0.0.1:9"], model: m }\n');
    const local = await rollgate([...args, '--topology', topology]);
    expect(local.code, local.stderr).toBe(0);
    expect(local.stderr).toMatch(/WARNING: runs are UNSANDBOXED \(runtime local\)/);
    expect(local.stderr).toMatch(/runtime local\)/);
    const sandboxed = await rollgate([...args, '--runtime', 'bwrap']);
    expect(sandboxed.code, sandboxed.stderr).toBe(0);
    expect(sandboxed.stderr).not.toMatch(/UNSANDBOXED/);
    expect(sandboxed.stderr).toMatch(/concurrency 4, runtime bwrap\)/);
    const wrong = await rollgate([...args, '--runtime', 'chroot']);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toMatch(/runtime must be one of auto, bwrap, docker, local/);
    writeFileSync(topology, 'runtime: chroot\nengines:\n  - { id: spare, kind: vllm, replicas: ["http://127.0.0.1:9"], model: m }\n');
    const wrongFile = await rollgate([...args, '--topology', topology]);
    expect(wrongFile.code).toBe(2);
    expect(wrongFile.stderr).toMatch(/topology\.yaml: runtime: runtime must be one of auto, bwrap, docker, local/);
  }, 120_000);
});

describe('rollgate session', () => {
  it('creates a session on a running Rollgate and prints a ready-to-paste snippet', async () => {
    const app = await startTestApp();
    try {
      const r = await rollgate(['session', '--harness', 'qwen-code', '--engine', 'sim-sglang', '--server', app.url], 60_000);
      expect(r.code, r.stderr).toBe(0);
      const key = /export OPENAI_API_KEY=([0-9a-f]{32})/.exec(r.stdout)![1];
      expect(r.stdout).toContain(`export OPENAI_BASE_URL=${app.url}/s/${key}/v1`);
      expect(r.stdout).toContain(`cat > "$ROLLGATE_HOME/.qwen/settings.json" <<'ROLLGATE_EOF'`);
      expect(r.stdout).toMatch(/HOME="\$ROLLGATE_HOME" npx -y -p @qwen-code\/qwen-code@0\.24\.4 qwen -p 'Your task here' --yolo/);
      const id = /# session (ses_[0-9a-f]+)/.exec(r.stderr)![1];
      expect((await app.store.sessions.get(id))).toMatchObject({ harness: 'qwen-code', engineId: 'sim-sglang', status: 'active' });
      expect((await app.store.sessions.getByKey(key))?.id).toBe(id);
    } finally {
      await app.stop();
    }
  }, 60_000);
});
