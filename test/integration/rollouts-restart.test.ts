// Results survive a restart: after a graceful stop mid-batch and after a kill -9 of the server, finished
// sessions keep their rewards, unfinished ones are `interrupted`, the batch is `interrupted` (never left
// `running`), session and completion counts are unchanged, and no agent process is left behind.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src-main/app.js';
import { BUILTIN_AGENT_PATH } from '../../src-main/rollouts/harnesses/index.js';
import { REPO_ROOT } from '../helpers/paths.js';

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => { for (const c of cleanup.splice(0).reverse()) await c(); });

function alive(pid: number): boolean {
  try { process.kill(pid, 0); } catch { return false; }
  try { return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8')); } catch { return false; }
}
async function until<T>(fn: () => Promise<T | null | undefined | false>, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 100));
  }
}
async function api(base: string, path: string, init?: RequestInit): Promise<any> {
  const res = await fetch(base + path, { ...init, headers: { 'content-type': 'application/json' } });
  return res.json();
}

// Three quick tasks, and two whose agent answers and then lingers (so they are mid-run when we stop).
const spec = {
  tasks: [
    { id: 'fast-1', prompt: 'What is 2 + 3?', expected: '5', files: { 'delay.txt': '0' } },
    { id: 'fast-2', prompt: 'What is 7 * 6?', expected: '42', files: { 'delay.txt': '0' } },
    { id: 'fast-3', prompt: 'What is 9 - 4?', expected: '5', files: { 'delay.txt': '0' } },
    { id: 'slow-1', prompt: 'What is 8 + 8?', expected: '16', files: { 'delay.txt': '120' } },
    { id: 'slow-2', prompt: 'What is 3 * 3?', expected: '9', files: { 'delay.txt': '120' } },
  ],
  harness: 'command',
  command: `node ${BUILTIN_AGENT_PATH} --max-turns 4 -- {{PROMPT}}; sleep "$(cat delay.txt)"`,
  engine: 'sim-vllm',
  concurrency: 5,
  timeoutMs: 300_000,
  // The command names a host path; this test is about the store and leftover process groups (sandboxed
  // runs die with the server: bwrap --die-with-parent, see sandbox-escape.test.ts).
  runtime: 'local',
};

/** Waits until the fast samples are finished and the slow ones have had their model turns. */
async function midBatch(base: string, id: string) {
  return until(async () => {
    const view = await api(base, `/api/batches/${id}`);
    const { sessions } = await api(base, `/api/sessions?batch=${id}`);
    const slow = sessions.filter((s: any) => s.taskId.startsWith('slow'));
    const ready = view.counts.finished === 3 && slow.length === 2 && slow.every((s: any) => s.status === 'active' && s.completionCount === 2);
    if (!ready) return null;
    const runs = await Promise.all(slow.map((s: any) => api(base, `/api/sessions/${s.id}/run`)));
    if (!runs.every((r: any) => r.pid)) return null;
    return { view, sessions, slowPids: runs.map((r: any) => r.pid as number) };
  });
}

async function snapshot(app: App, batchId: string) {
  const sessions = (await app.store.sessions.list({ batchId }));
  return {
    sessions: sessions.length,
    completions: sessions.reduce((a, s) => a + s.completionCount, 0),
    byTask: Object.fromEntries(sessions.map((s) => [s.taskId, { status: s.status, reward: s.reward, completions: s.completionCount }])) as
      Record<string, { status: string; reward: number | null; completions: number }>,
  };
}

interface Before { sessions: number; completions: number; rewards: Record<string, number | null> }

async function checkAfterRestart(app: App, id: string, before: Before) {
  const view = (await app.rollouts.get(id))!;
  expect(view.status).toBe('interrupted');
  expect(view.error).toMatch(/stopped/);
  const after = await snapshot(app, id);
  expect(after.sessions).toBe(before.sessions);
  expect(after.completions).toBe(before.completions);
  for (const t of ['fast-1', 'fast-2', 'fast-3']) {
    expect(typeof before.rewards[t]).toBe('number');
    expect(after.byTask[t]).toMatchObject({ status: 'finished', reward: before.rewards[t], completions: 2 });
  }
  for (const t of ['slow-1', 'slow-2']) expect(after.byTask[t]).toMatchObject({ status: 'interrupted', reward: null, completions: 2 });
  expect(view.counts).toMatchObject({ total: 5, finished: 3, interrupted: 2, running: 0 });
  expect(view.tasks.find((t) => t.taskId === 'fast-1')!.rewards).toEqual([before.rewards['fast-1']]);
  for (const s of (await app.store.sessions.list({ batchId: id }))) {
    const run = (await app.store.runs.get(s.id))!;
    expect(run.status).not.toBe('running');
  }
}

describe('restart', () => {
  it('after a graceful stop mid-batch', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'rollgate-restart-'));
    cleanup.push(() => rmSync(dataDir, { recursive: true, force: true }));
    let app = await createApp({ dataDir, port: 0, sim: true, simSkill: 1 });
    cleanup.push(() => app.close());
    const { id } = (await app.rollouts.submit(spec));
    const { slowPids } = await midBatch(app.url, id);
    expect(slowPids.every(alive)).toBe(true);
    const snap = await snapshot(app, id);
    expect(snap).toMatchObject({ sessions: 5, completions: 10 });
    const before = { ...snap, rewards: Object.fromEntries(Object.entries(snap.byTask).map(([t, v]) => [t, v.reward])) };
    expect(Object.values(before.rewards).filter((r) => r === 1)).toHaveLength(3); // skill 1

    await app.close();
    for (const pid of slowPids) expect(alive(pid)).toBe(false);
    app = await createApp({ dataDir, port: 0, sim: true, simSkill: 1 });
    await checkAfterRestart(app, id, before);
  }, 120_000);

  it('after kill -9 of the server mid-batch', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'rollgate-kill9-'));
    cleanup.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const server: ChildProcess = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'src-main/cli.ts'), 'serve', '--port', '0', '--data-dir', dataDir], {
      cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ROLLGATE_AGENTS_DIR: join(dataDir, 'agents') },
    });
    cleanup.push(() => { if (server.exitCode === null) server.kill('SIGKILL'); });
    let stderr = '';
    server.stderr!.on('data', (d) => { stderr += d; });
    const base = await new Promise<string>((resolve, reject) => {
      let out = '';
      server.stdout!.on('data', (d) => {
        out += d;
        const m = /Rollgate listening on (http:\/\/\S+)/.exec(out);
        if (m) resolve(m[1]);
      });
      server.on('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
    });

    const { id } = await api(base, '/api/batches', { method: 'POST', body: JSON.stringify(spec) });
    expect(id).toMatch(/^bat_/);
    const { sessions, slowPids } = await midBatch(base, id);
    const before = {
      sessions: sessions.length,
      completions: sessions.reduce((a: number, s: any) => a + s.completionCount, 0),
      rewards: Object.fromEntries(sessions.map((s: any) => [s.taskId, s.reward])),
    };
    expect(before).toMatchObject({ sessions: 5, completions: 10 });

    const exited = new Promise((r) => server.on('exit', r));
    server.kill('SIGKILL');
    await exited;
    // The agents are in their own process groups: they outlive the server…
    expect(slowPids.every(alive)).toBe(true);

    // …until the next start finds them (by the run token in their env) and kills them.
    const app = await createApp({ dataDir, port: 0, sim: true, simSkill: 1 });
    cleanup.push(() => app.close());
    expect(await app.rollouts.recovered).toMatchObject({ batches: 1, runs: 2 });
    expect((await app.rollouts.recovered).killedProcesses).toBeGreaterThanOrEqual(2);
    await until(async () => slowPids.every((p) => !alive(p)), 5000);
    await checkAfterRestart(app, id, before);
  }, 120_000);
});
