// Custody across a crash (issue 14): kill -9 of `rollgate serve` after the engine answered a call but
// before its record was committed. The commit is held back by a second SQLite connection holding the write
// lock (as a slow disk or a busy reader would), so the kill lands exactly in that window. After a restart
// the call is an `incomplete` (lost-in-crash) completion, the session says so, every trace is masked (a call
// without ids cannot be placed), the export leaves them out and says how many; the acknowledged call is kept.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/paths.js';
import { startCli, type Child } from './fault-helpers.js';

const MODEL = 'Qwen/Qwen3-8B';
const dir = mkdtempSync(join(tmpdir(), 'rollgate-custody-kill9-'));
const dataDir = join(dir, 'data');
const children: Child[] = [];
afterAll(async () => {
  for (const c of children) await c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

async function serve(topology: string): Promise<Child> {
  const c = await startCli(['serve', '--port', '0', '--no-sim', '--topology', topology, '--data-dir', dataDir]);
  children.push(c);
  return c;
}

const body = (messages: unknown[], stream: boolean) => JSON.stringify({ model: MODEL, messages, max_tokens: 40, stream });

describe('kill -9 between the engine answer and its commit', () => {
  it('leaves the session incomplete, its later trace masked and out of the export; nothing acknowledged is lost', async () => {
    const sim = await startCli(['sim', '--flavor', 'vllm', '--port', '0', '--per-token-ms', '25', '--skill', '1']);
    children.push(sim);
    const topology = join(dir, 'topology.yaml');
    writeFileSync(topology, `engines:\n  - id: slow-vllm\n    kind: vllm\n    replicas: [${sim.url}]\n    model: ${MODEL}\n    mode: chat\n    tokenizer: builtin:qwen3\n`);
    let server = await serve(topology);
    const s = await (await fetch(`${server.url}/api/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"engine":"slow-vllm"}' })).json() as { id: string; key: string };
    const chat = (url: string, b: string) => fetch(`${url}/s/${s.key}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: b });

    // Turn 1: answered in full, so acknowledged.
    const messages: unknown[] = [{ role: 'user', content: 'Say hello.' }];
    const first = await (await chat(server.url, body(messages, false))).json() as any;
    const acknowledged = String(first.id).replace(/^chatcmpl-/, '');
    messages.push({ role: 'assistant', content: first.choices[0].message.content }, { role: 'user', content: 'Again, please.' });

    // Turn 2: streaming; once output flows, hold the database's write lock, let the engine finish, kill -9.
    const res = await chat(server.url, body(messages, true));
    const reader = res.body!.getReader();
    const got = await reader.read();
    expect(new TextDecoder().decode(got.value)).toContain('data:');
    const blocker = new Database(join(dataDir, 'rollgate.sqlite'));
    blocker.pragma('busy_timeout = 10000');
    blocker.exec('BEGIN IMMEDIATE');
    let text = '';
    const drained = (async () => { for (;;) { const r = await reader.read().catch(() => ({ done: true, value: undefined })); if (r.done) return; text += new TextDecoder().decode(r.value); } })();
    await new Promise((r) => setTimeout(r, 40 * 25 + 1500)); // the engine's whole answer, and then some
    expect(text).not.toContain('[DONE]'); // never acknowledged: the commit is what sends the last frames
    server.child.kill('SIGKILL');
    await server.exited;
    blocker.exec('ROLLBACK');
    blocker.close();
    await drained;

    // Restart; the agent sends turn 2 again and goes on.
    server = await serve(topology);
    expect(server.output()).toMatch(/1 engine call\(s\) lost in a crash/);
    const again = await (await chat(server.url, body(messages, false))).json() as any;
    expect(again.choices[0].message.content).toBeTruthy();

    const session = await (await fetch(`${server.url}/api/sessions/${s.id}`)).json() as any;
    expect(session.custody).toBe('incomplete');
    expect(session.incompleteCalls).toEqual([expect.objectContaining({ reason: 'lost-in-crash' })]);
    const { completions } = await (await fetch(`${server.url}/api/sessions/${s.id}/completions`)).json() as any;
    expect(completions.map((c: any) => c.status)).toEqual(['ok', 'incomplete', 'ok']);
    expect(completions[0].id).toBe(acknowledged);
    expect(completions[1]).toMatchObject({ id: session.incompleteCalls[0].completionId, incompleteReason: 'lost-in-crash' });
    const { traces } = await (await fetch(`${server.url}/api/sessions/${s.id}/traces`)).json() as any;
    // The lost call has no ids, so it cannot be placed: it may have gone on from any trace of the session (and
    // a trace cut short must not earn the outcome reward), so every trace is masked.
    const after = traces.find((t: any) => t.completionIds.includes(completions[2].id));
    for (const t of traces) expect(t).toMatchObject({ masked: true, maskReason: 'lost-in-crash', maskedBy: completions[1].id });
    const unmasked = 0;
    await server.kill('SIGTERM');

    // The export (CLI, on the folder) leaves the masked trace out and says so.
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src-main/cli.ts', 'export', '--data-dir', dataDir, '--session', s.id, '--status', 'all'], { cwd: REPO_ROOT });
    const rows = stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
    expect(rows).toHaveLength(unmasked);
    expect(rows.every((r) => !r.masked && r.trace_id !== after.id)).toBe(true);
    expect(stderr).toMatch(new RegExp(`exported ${unmasked} traces .*skipped ${traces.length} masked \\(lost-in-crash ${traces.length}; --include-masked keeps them\\)`));
    const kept = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src-main/cli.ts', 'export', '--data-dir', dataDir, '--session', s.id, '--status', 'all', '--include-masked'], { cwd: REPO_ROOT });
    const keptRows = kept.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
    expect(keptRows.find((r) => r.trace_id === after.id)).toMatchObject({ masked: true, mask_reason: 'lost-in-crash' });
  }, 120_000);
});
