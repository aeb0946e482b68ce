// Batches with the `command` harness: placeholders reaching the gateway, outcomes (crash, timeout, check
// errors), the concurrency limit, cancel mid-batch (no orphan processes, checked by pid), a callback
// receiver that fails twice then succeeds, validation (nothing created on a bad spec), manual sessions.
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';

let app: TestApp;
beforeAll(async () => { app = await startTestApp({ simSkill: 1, rollouts: { callbackBaseDelayMs: 50 } }); });
afterAll(async () => { await app?.stop(); });

const post = (path: string, body: unknown) => app.api(path, { method: 'POST', body: JSON.stringify(body) });
async function rawPost(path: string, body: unknown) {
  const res = await fetch(app.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() as any };
}
async function poll(id: string, timeoutMs = 60_000): Promise<any> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const view = await app.api(`/api/batches/${id}`);
    if (!['queued', 'running'].includes(view.status)) return view;
    if (Date.now() > end) throw new Error(`batch ${id} still ${view.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
async function until(cond: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}
function alive(pid: number): boolean {
  try { process.kill(pid, 0); } catch { return false; }
  try { return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8')); } catch { return false; }
}
const sample = (view: any, taskId: string) => view.tasks.find((t: any) => t.taskId === taskId).samples[0];

describe('command harness', () => {
  it('fills the placeholders (shell-quoted) and talks to the session through the gateway', async () => {
    const script = "fetch(process.argv[1]+'/chat/completions',{method:'POST',headers:{'content-type':'application/json',authorization:'Bearer '+process.argv[2]},"
      + "body:JSON.stringify({model:process.argv[3],messages:[{role:'user',content:process.argv[4]}]})}).then(r=>r.json()).then(j=>console.log(j.choices[0].message.content))";
    const { id } = await post('/api/batches', {
      tasks: [
        { id: 'mul', prompt: "What is 17 * 23? It's \"quoted\" & $HOME-safe.", expected: '391' },
        { id: 'add', prompt: 'What is 128 + 256?', expected: 384 },
      ],
      harness: 'command', engine: 'sim-sglang', n: 2, concurrency: 2,
      command: `node -e "${script}" {{OPENAI_BASE_URL}} {{API_KEY}} {{MODEL}} {{PROMPT}}`,
    });
    const view = await poll(id);
    expect(view.status).toBe('completed');
    expect(view.tasks.map((t: any) => t.rewards)).toEqual([[1, 1], [1, 1]]);
    const s = sample(view, 'mul');
    expect(s.completionCount).toBe(1);
    const { completions } = await app.api(`/api/sessions/${s.sessionId}/completions`);
    expect(JSON.stringify(completions[0].requestReceived)).toContain(`It's \\"quoted\\" & $HOME-safe.`);
    expect(completions[0].engineId).toBe('sim-sglang');
  });

  it('records each outcome: ok, crash, timeout, check errors, check rewards', async () => {
    const task = (id: string, agent: string, extra: Record<string, unknown> = {}) => ({ id, prompt: `task ${id}`, files: { 'agent.sh': agent }, ...extra });
    const { id } = await post('/api/batches', {
      tasks: [
        task('ok', 'echo "The answer is 4."', { expected: '4' }),
        task('crash', 'echo boom >&2; exit 3', { expected: '4' }),
        task('timeout', 'echo started; sleep 30', { expected: '4' }),
        task('check-pass', 'echo yes > result.txt', { check: 'grep -q yes result.txt' }),
        task('check-fail', 'echo no > result.txt', { check: 'grep -q yes result.txt' }),
        task('check-number', 'true', { check: 'echo "2 of 4"; echo 0.5' }),
        task('check-timeout', 'true', { check: { type: 'command', command: 'sleep 30', timeoutMs: 300 } }),
        task('check-json-missing', 'true', { check: { type: 'json', path: 'reward.json', command: 'true' } }),
        task('json-by-agent', 'echo \'{"reward": 0.75}\' > reward.json', { check: { type: 'json', command: 'true' } }),
        task('no-evaluator', 'echo hi'),
      ],
      harness: 'command', command: 'sh ./agent.sh', n: 1, concurrency: 10, timeoutMs: 1500,
    });
    const view = await poll(id);
    expect(view.status).toBe('completed');
    const by = (t: string) => sample(view, t);
    expect(by('ok')).toMatchObject({ status: 'finished', outcome: 'ok', reward: 1 });
    expect(by('crash')).toMatchObject({ status: 'failed', outcome: 'agent_error', exitCode: 3, reward: 0, error: 'agent exited with 3' });
    expect(by('timeout')).toMatchObject({ status: 'failed', outcome: 'timeout', reward: 0, error: 'agent timed out after 2 s' });
    expect(by('timeout').durationMs).toBeLessThan(5000);
    expect(by('check-pass')).toMatchObject({ status: 'finished', reward: 1 });
    expect(by('check-fail')).toMatchObject({ status: 'finished', reward: 0 });
    expect(by('check-number')).toMatchObject({ status: 'finished', reward: 0.5 });
    expect(by('check-timeout')).toMatchObject({ status: 'failed', outcome: 'ok', reward: 0, error: expect.stringMatching(/check timed out/) });
    expect(by('check-json-missing')).toMatchObject({ status: 'failed', reward: 0, error: 'no reward file reward.json' });
    // A reward file the agent wrote itself is removed before the check runs: it never counts.
    expect(by('json-by-agent')).toMatchObject({ status: 'failed', reward: 0, error: 'no reward file reward.json' });
    expect(by('no-evaluator')).toMatchObject({ status: 'finished', reward: null });
    expect(view.counts).toMatchObject({ total: 10, finished: 5, failed: 5, done: 10 });

    // Output and evaluator errors are kept with the session.
    const crash = await app.api(`/api/sessions/${by('crash').sessionId}/run`);
    expect(crash).toMatchObject({ outcome: 'agent_error', exitCode: 3, stderr: 'boom\n' });
    const timeout = await app.api(`/api/sessions/${by('timeout').sessionId}/run`);
    expect(timeout.stdout).toBe('started\n');
    const checkTimeout = await app.api(`/api/sessions/${by('check-timeout').sessionId}`);
    expect(checkTimeout.metadata.evaluator).toMatchObject({ type: 'command', reward: 0, error: expect.stringMatching(/timed out/) });
    // work folders are removed after scoring
    expect(existsSync(join(app.dataDir, 'runs', by('ok').sessionId))).toBe(false);
  });

  it('takes rewards and per-trace rewards only from the evaluator, never from the agent during its run (issue 18.1)', async () => {
    const script = "fetch(process.env.OPENAI_BASE_URL+'/chat/completions',{method:'POST',headers:{'content-type':'application/json',authorization:'Bearer '+process.env.OPENAI_API_KEY},"
      + "body:JSON.stringify({model:process.env.OPENAI_MODEL,messages:[{role:'user',content:'What is 2 + 2?'}]})}).then(r=>r.json()).then(j=>console.log(j.choices[0].message.content))";
    const agent = [
      `node -e "${script}"`,
      // An unsandboxed agent reaches the control API of the Rollgate it talks to and tries to reward itself.
      `node -e "const base = process.env.OPENAI_BASE_URL.replace(/\\/s\\/.*$/, ''); fetch(base + '/api/sessions/' + process.env.ROLLGATE_SESSION_ID + '/finish', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ reward: 1, traceRewards: { 'chatcmpl-aaaaaaaaaaaaaaaaaaaaaaaa': 1 } }) }).then((r) => console.log('finish answered', r.status))"`,
      `echo '{"reward": 1, "traceRewards": {"chatcmpl-aaaaaaaaaaaaaaaaaaaaaaaa": 1}}' > reward.json`,
    ].join('\n');
    const check = `echo '{"reward": 0.25, "traceRewards": {"chatcmpl-bbbbbbbbbbbbbbbbbbbbbbbb": 0}}' > reward.json`;
    const { id } = await post('/api/batches', {
      tasks: [{ id: 'per-trace', prompt: 'p', files: { 'agent.sh': agent }, check: { type: 'json', command: check } }],
      harness: 'command', command: 'sh ./agent.sh', n: 1, timeoutMs: 20_000, runtime: 'local',
    });
    const view = await poll(id);
    const s = sample(view, 'per-trace');
    expect(s).toMatchObject({ status: 'finished', outcome: 'ok', reward: 0.25 });
    expect((await app.api(`/api/sessions/${s.sessionId}/run`)).stdout).toContain('finish answered 409');
    const session = await app.api(`/api/sessions/${s.sessionId}`);
    expect(session.metadata.traceRewards).toEqual({ bbbbbbbbbbbbbbbbbbbbbbbb: 0 });
    expect(session.metadata.evaluator).toMatchObject({ type: 'json', reward: 0.25 });
    const exported = await (await fetch(`${app.url}/api/export?batch=${id}`)).text();
    expect(exported).toMatch(/0\.25/);
    expect(exported).not.toMatch(/"reward":\s*1\b/);
    // After the run, the trainer may set rewards through the control API.
    const after = await post(`/api/sessions/${s.sessionId}/finish`, { reward: 0.5, overwrite: true });
    expect(after.reward).toBe(0.5);
  });

  it('never runs more agents at once than the concurrency limit', async () => {
    const log = join(mkdtempSync(join(tmpdir(), 'rollgate-conc-')), 'log');
    const tasks = Array.from({ length: 8 }, (_, i) => ({ id: `t${i}`, prompt: 'p' }));
    const { id } = await post('/api/batches', { tasks, harness: 'command', concurrency: 3, runtime: 'local', command: `echo "+ $(date +%s%N)" >> ${log}; sleep 1; echo "- $(date +%s%N)" >> ${log}` });
    expect((await poll(id)).counts.finished).toBe(8);
    const evs = readFileSync(log, 'utf8').trim().split('\n').map((l) => ({ d: l[0] === '+' ? 1 : -1, t: BigInt(l.slice(2)) }))
      .sort((a, b) => (a.t < b.t ? -1 : a.t > b.t ? 1 : a.d - b.d));
    let cur = 0;
    let max = 0;
    for (const e of evs) { cur += e.d; max = Math.max(max, cur); }
    expect(max).toBe(3);
  });
});

describe('cancel', () => {
  it('stops a running batch: agents and their daemons are killed (by pid), queued samples never start', async () => {
    const pids = join(mkdtempSync(join(tmpdir(), 'rollgate-cancel-')), 'pids');
    const tasks = Array.from({ length: 6 }, (_, i) => ({ id: `slow${i}`, prompt: 'p', expected: '1' }));
    const { id } = await post('/api/batches', { tasks, harness: 'command', concurrency: 2, runtime: 'local', command: `sleep 300 & echo $! >> ${pids}; echo $$ >> ${pids}; wait` });
    await until(() => existsSync(pids) && readFileSync(pids, 'utf8').trim().split('\n').length >= 4);
    const running = readFileSync(pids, 'utf8').trim().split('\n').map(Number);
    expect(running.every(alive)).toBe(true);

    const started = Date.now();
    const view = await post(`/api/batches/${id}/cancel`, {});
    expect(Date.now() - started).toBeLessThan(8000);
    expect(view.status).toBe('cancelled');
    expect(view.counts).toMatchObject({ total: 6, interrupted: 2, running: 0, queued: 4, finished: 0 });
    await until(() => running.every((p) => !alive(p)), 5000);
    const { sessions } = await app.api(`/api/sessions?batch=${id}`);
    expect(sessions.map((s: any) => [s.status, s.reward, s.metadata.outcome])).toEqual([['interrupted', null, 'cancelled'], ['interrupted', null, 'cancelled']]);
    expect(readFileSync(pids, 'utf8').trim().split('\n')).toHaveLength(4); // nothing else started

    const again = await rawPost(`/api/batches/${id}/cancel`, {});
    expect(again.status).toBe(409);
  });
});

describe('callback', () => {
  let server: Server;
  const received: Array<{ attempt: string | undefined; body: any }> = [];
  let url = '';
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => { body += d; });
      req.on('end', () => {
        received.push({ attempt: req.headers['x-rollgate-attempt'] as string | undefined, body: JSON.parse(body) });
        res.writeHead(received.length <= 2 ? 500 : 200).end(received.length <= 2 ? 'try again' : 'ok');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('POSTs the result, retrying with backoff until the receiver accepts it', async () => {
    const { id } = await post('/api/batches', {
      tasks: [{ id: 'a', prompt: 'p', expected: '4' }], harness: 'command', command: 'echo "The answer is 4."', callback_url: url,
    });
    await until(() => received.length >= 3);
    expect(received.map((r) => r.attempt)).toEqual(['1', '2', '3']);
    expect(received[2].body).toMatchObject({ id, status: 'completed', meanReward: 1, tasks: [{ taskId: 'a', rewards: [1] }] });
    await until(async () => (await app.api(`/api/batches/${id}`)).callback?.status === 'delivered');
    expect((await app.api(`/api/batches/${id}`)).callback).toMatchObject({ status: 'delivered', attempts: 3 });
    await new Promise((r) => setTimeout(r, 300));
    expect(received).toHaveLength(3);
  });
});

describe('validation', () => {
  it('rejects a bad spec with a clear error and creates nothing', async () => {
    const before = (await app.api('/api/batches')).batches.length;
    const bad = await rawPost('/api/batches', { tasks: [{ id: 'a', prompt: 'p' }, { id: 'b', prompt: 'p', files: { '/etc/passwd': 'x' } }], harness: 'builtin' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.problems).toEqual(['tasks[1]: files["/etc/passwd"]: must be a relative path inside the work folder (no "..", not absolute)']);
    const file = join(mkdtempSync(join(tmpdir(), 'rollgate-ds-')), 'bad.jsonl');
    writeFileSync(file, '{"id":"a","prompt":"p"}\n{"id":"a","prompt":"q"}\n');
    const dup = await rawPost('/api/batches', { dataset: file, harness: 'builtin' });
    expect(dup.body.error.problems).toEqual(['line 2: id: duplicate id "a" (first at line 1)']);
    expect((await rawPost('/api/batches', { dataset: 'demo:calculator', harness: 'nope' })).body.error.message).toMatch(/unknown harness "nope"; known: builtin, claude-code/);
    expect((await rawPost('/api/batches', { dataset: 'demo:calculator', harness: 'command' })).body.error.message).toMatch(/needs a "command"/);
    expect((await rawPost('/api/batches', { dataset: 'demo:calculator', harness: 'builtin', engine: 'nope' })).body.error.message).toMatch(/unknown engine nope/);
    expect((await rawPost('/api/batches', { dataset: 'demo:calculator', harness: 'builtin', n: 0 })).status).toBe(400);
    expect((await rawPost('/api/batches', { harness: 'builtin' })).body.error.message).toMatch(/exactly one of "dataset"/);
    expect((await rawPost('/api/batches', { dataset: 'demo:calculator', harness: 'builtin', callbackUrl: 'ftp://x' })).status).toBe(400);
    expect((await app.api('/api/batches')).batches.length).toBe(before);
    expect((await fetch(`${app.url}/api/batches/bat_nope`)).status).toBe(404);
  });
});

describe('manual sessions', () => {
  it('gives a ready-to-run snippet; the builtin agent run by hand records completions on the session', async () => {
    const { harnesses } = await app.api('/api/harnesses');
    expect(harnesses.map((h: any) => h.name)).toContain('qwen-code');
    const session = await app.createSession({ engine: 'sim-vllm', harness: 'builtin' });
    const snippetFor = (harness: string, body: Record<string, unknown>) =>
      fetch(`${app.url}/api/harnesses/${harness}/snippet`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const qwen = await (await snippetFor('qwen-code', { sessionId: session.id, key: session.key })).json();
    expect(qwen.env).toMatchObject({ OPENAI_BASE_URL: session.urls.openai, OPENAI_API_KEY: session.key, OPENAI_MODEL: 'Qwen/Qwen3-8B' });
    expect(qwen.shell).toContain('npx -y -p @qwen-code/qwen-code@0.24.4 qwen -p');

    const snippet = await (await snippetFor('builtin', { sessionId: session.id, key: session.key })).json();
    const cmd = snippet.command.replace(`'Your task here'`, `'What is 6 * 7?'`);
    const child = spawn('/bin/sh', ['-c', cmd], { env: { PATH: process.env.PATH, ...snippet.env }, cwd: mkdtempSync(join(tmpdir(), 'rollgate-manual-')) });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    const code = await new Promise((r) => child.on('close', r));
    expect(code).toBe(0);
    expect(out).toContain('The answer is 42.');
    expect((await app.api(`/api/sessions/${session.id}`)).completionCount).toBe(2);
    expect((await rawPost('/api/sessions', {})).status).toBe(201);
    expect((await snippetFor('builtin', {})).status).toBe(400);
    // The store keeps only the key's hash: the caller must bring the key, and it must be this session's.
    const noKey = await snippetFor('builtin', { sessionId: session.id });
    expect(noKey.status).toBe(400);
    expect((await noKey.json()).error.message).toMatch(/key is required/);
    const other = await app.createSession({ engine: 'sim-vllm' });
    const wrongKey = await snippetFor('builtin', { sessionId: session.id, key: other.key });
    expect(wrongKey.status).toBe(400);
    expect(JSON.stringify(await wrongKey.json())).not.toContain(other.key);
    expect((await snippetFor('nope', { sessionId: session.id, key: session.key })).status).toBe(404);
    expect((await app.api(`/api/sessions/${session.id}`)).key).toBeUndefined();
  });
});
