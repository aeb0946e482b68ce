// One data folder, one server (issue 18, items 5–7), with `rollgate serve` and `rollgate eval` as real child
// processes: a second writer is refused and names the running one; `eval` submits to the running server instead
// of starting its own; a kill -9 leaves no stale lock, and the restart keeps manual sessions usable; the folder
// and the database files are private to the user.
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dialectCall, startCli, type Child } from './fault-helpers.js';
import { runCli } from '../helpers/cli.js';

const root = mkdtempSync(join(tmpdir(), 'rollgate-folder-'));
const dataDir = join(root, 'data'); // made by Rollgate itself
const children: Child[] = [];
afterAll(async () => {
  for (const c of children) await c.kill('SIGKILL');
  rmSync(root, { recursive: true, force: true });
});

const cli = (args: string[]) => runCli(args, 120_000);

async function json(url: string, init?: RequestInit): Promise<any> {
  const res = await fetch(url, { ...init, headers: { 'content-type': 'application/json' } });
  return res.json();
}

async function chat(base: string, key: string): Promise<number> {
  const c = dialectCall('openai-chat', base, key, { stream: false, text: 'What is 2 + 3?', maxTokens: 32 });
  const res = await fetch(c.url, c.init);
  await res.arrayBuffer();
  return res.status;
}

describe('one data folder, one server', () => {
  let first: Child;
  let session: { id: string; key: string };

  it('a second serve on the same folder is refused, naming the running process; the first keeps its sessions', async () => {
    first = await startCli(['serve', '--port', '0', '--data-dir', dataDir]);
    children.push(first);
    session = await json(`${first.url}/api/sessions`, { method: 'POST', body: '{}' });
    expect(await chat(first.url, session.key)).toBe(200);

    const second = await cli(['serve', '--port', '0', '--data-dir', dataDir]);
    expect(second.code).not.toBe(0);
    expect(second.stderr).toContain(`data folder ${dataDir} is in use by rollgate serve (pid ${first.child.pid}, ${first.url}`);

    // Nothing of the first server's was touched: its live session still answers.
    expect((await json(`${first.url}/api/sessions/${session.id}`)).status).toBe('active');
    expect(await chat(first.url, session.key)).toBe(200);
  }, 90_000);

  it('rollgate eval on a served folder submits its batch to the running server', async () => {
    const dataset = join(root, 'tiny.jsonl');
    writeFileSync(dataset, [
      { id: 'add', prompt: 'What is 2 + 3?', expected: '5' },
      { id: 'mul', prompt: 'What is 7 * 6?', expected: '42' },
    ].map((t) => JSON.stringify(t)).join('\n'));
    const r = await cli(['eval', '--dataset', dataset, '--harness', 'builtin', '--data-dir', dataDir, '--no-progress']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`is served by the Rollgate at ${first.url}; submitting the batch there`);
    const id = /^batch (bat_\S+)/m.exec(r.stdout)![1];
    expect((await json(`${first.url}/api/batches/${id}`)).status).toBe('completed');
    expect((await json(`${first.url}/api/sessions/${session.id}`)).status).toBe('active');
    expect(await chat(first.url, session.key)).toBe(200);
  }, 120_000);

  it('after a kill -9 the folder is free at once, and manual sessions are resumed by their agent', async () => {
    first.child.kill('SIGKILL');
    await first.exited;
    const next = await startCli(['serve', '--port', '0', '--data-dir', dataDir]);
    children.push(next);
    expect((await json(`${next.url}/api/sessions/${session.id}`)).status).toBe('active');
    expect(await chat(next.url, session.key)).toBe(200);
    expect((await json(`${next.url}/api/sessions/${session.id}`)).completionCount).toBe(4);
  }, 90_000);

  it('the data folder is 0700 and the database files 0600', () => {
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    const files = readdirSync(dataDir).filter((f) => f.startsWith('rollgate.sqlite') || f === 'rollgate.lock' || f === 'owner.json');
    expect(files).toEqual(expect.arrayContaining(['rollgate.sqlite', 'rollgate.sqlite-wal', 'rollgate.sqlite-shm']));
    for (const f of files) expect({ f, mode: (statSync(join(dataDir, f)).mode & 0o777).toString(8) }).toEqual({ f, mode: '600' });
  });
});
