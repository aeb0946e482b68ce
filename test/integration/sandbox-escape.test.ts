// Issue 11 "Done when": for each sandboxed runtime (bwrap, docker), a batch whose agent tries every way
// out — the control API on the control port, another session's key, another loopback port, the data
// folder, writes outside its work folder, the task's hidden tests, a daemon that rewrites the answer after
// the agent exits — gets nowhere: its real model call is recorded, the engines stay unpaused, the reward
// is the evaluator's, and the run's log shows each refusal. Timeouts and cancel leave nothing running
// (checked by pid for bwrap, by container for docker; for local too, where a `setsid` daemon escapes the
// process group and is found by the run id in its environment).
import { createServer, type Server } from 'node:net';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src-main/app.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { REPO_ROOT } from '../helpers/paths.js';

const ESCAPE = readFileSync(join(REPO_ROOT, 'test/fixtures/sandbox/escape.mjs'), 'utf8');
/**
 * The hidden check: 1 only when the answer is the agent's own (no daemon rewrote it), its HOME is fresh (no
 * file the agent planted), user site-packages are off and no rc file ran (nothing printed PLANTED).
 */
const CHECK = [
  'sleep 3',
  'echo "home: $(ls -A "$HOME" | tr "\\n" " ")" >&2',
  'test -z "$(ls -A "$HOME")" || { echo "HOME is not fresh" >&2; echo 0; exit 0; }',
  'test "$PYTHONNOUSERSITE" = 1 || { echo "user site on" >&2; echo 0; exit 0; }',
  'if command -v python3 >/dev/null; then test "$(python3 -c "import site; print(site.ENABLE_USER_SITE)")" = False || { echo 0; exit 0; }; fi',
  'if [ "$(cat answer.txt 2>/dev/null)" = "$(cat "$ROLLGATE_TESTS_DIR/expected.txt")" ]; then echo 1; else echo 0; fi',
  '',
].join('\n');

let app: TestApp;
let tcp: Server;
let tcpPort = 0;
let tcpConnections = 0;
beforeAll(async () => {
  app = await startTestApp({ simSkill: 1 });
  tcp = createServer((s) => { tcpConnections++; s.end('hello\n'); });
  await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
  tcpPort = (tcp.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise<void>((r) => tcp?.close(() => r()));
  await app?.stop();
});

async function poll(id: string, timeoutMs = 120_000): Promise<any> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const view = await app.api(`/api/batches/${id}`);
    if (!['queued', 'running'].includes(view.status)) return view;
    if (Date.now() > end) throw new Error(`batch ${id} still ${view.status}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
async function until(cond: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 100));
  }
}
/** Host pids whose command line holds `marker`. */
function pidsWith(marker: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/cmdline`, 'latin1').includes(marker)) out.push(Number(d));
    } catch { /* gone */ }
  }
  return out;
}
const docker = new Docker();
async function containersOf(sessionIds: string[]): Promise<string[]> {
  const all = await docker.listContainers({ all: true, filters: { label: ['rollgate.run'] } });
  return all.filter((c) => sessionIds.includes(c.Labels['rollgate.run'])).map((c) => c.Id);
}

for (const runtime of ['bwrap', 'docker', 'local'] as const) {
  describe(`${runtime} runtime`, () => {
    // local is unsandboxed: only its clean-up is checked (below).
    if (runtime !== 'local') it('refuses every escape; the model call is recorded and the reward is the evaluator\'s', async () => {
      const victim = await app.createSession({ engine: 'sim-vllm' });
      const hostFile = join(mkdtempSync(join(tmpdir(), 'rollgate-escape-')), 'escaped.txt');
      const marker = `${Math.floor(Math.random() * 1e6) + 1000}.${runtime === 'bwrap' ? 1 : 2}`;
      const runsDir = join(app.dataDir, 'runs');
      const facts = {
        controlPort: Number(new URL(app.url).port), otherKey: victim.key, dataDir: app.dataDir, hostFile, tcpPort, marker,
        hiddenTestPaths: ['/run/rollgate/tests/expected.txt', `${runsDir}`, join(REPO_ROOT, 'test/fixtures/sandbox/escape.mjs')],
      };
      const tcpBefore = tcpConnections;
      const { id, runtime: used, warning } = await app.api('/api/batches', {
        method: 'POST',
        body: JSON.stringify({
          runtime, harness: 'command', engine: 'sim-vllm', timeoutMs: 60_000,
          command: `node escape.mjs ${JSON.stringify(JSON.stringify(facts))}`,
          tasks: [{
            id: 'escape', prompt: 'try to get out', files: { 'escape.mjs': ESCAPE },
            tests: { 'expected.txt': 'honest\n', 'check.sh': CHECK },
            check: 'sh "$ROLLGATE_TESTS_DIR/check.sh"',
          }],
        }),
      });
      expect(used).toBe(runtime);
      expect(warning).toBeUndefined();
      const view = await poll(id);
      const sample = view.tasks[0].samples[0];
      const run = await app.api(`/api/sessions/${sample.sessionId}/run`);
      const log: string = run.stdout;
      expect(run.stderr).toBe('');
      expect(log).toMatch(/^ok: model call 200 The answer is 4\.$/m);
      expect(log).toContain('ok: planted');
      expect(log).toContain('ok: done');
      expect(log).not.toContain('ESCAPED');
      const refusals = log.split('\n').filter((l) => l.startsWith('refused: '));
      for (const what of ['pause engines', 'finish own session', 'list sessions', 'path trick', 'another session\'s key in the URL',
        'another session\'s key as the API key', `tcp 127.0.0.1:${tcpPort}`, 'list data folder', 'read data folder /rollgate.sqlite',
        `write ${hostFile}`, 'write /usr/', 'write /etc/', 'read hidden tests /run/rollgate/tests']) {
        expect(refusals.some((l) => l.includes(what)), `refusal of "${what}" in:\n${log}`).toBe(true);
      }
      expect(refusals.length).toBe(26);
      // The control API answered 404 on the socket, never 401/403 from a real route.
      expect(refusals.filter((l) => /pause engines|finish own session|list sessions|another session|path trick/.test(l)).every((l) => /HTTP 404$|fetch failed$/.test(l))).toBe(true);

      expect(existsSync(hostFile)).toBe(false);
      expect(tcpConnections).toBe(tcpBefore);
      const engines = await app.api('/api/engines');
      expect(engines.pause?.mode ?? null).toBeNull();
      // The answer the daemon would have rewritten is intact: the daemon died with the sandbox.
      expect(sample, JSON.stringify(run.evaluator)).toMatchObject({ status: 'finished', outcome: 'ok', reward: 1, completionCount: 1 });
      const session = await app.api(`/api/sessions/${sample.sessionId}`);
      expect(session.metadata).toMatchObject({ runtime, evaluator: { type: 'command', reward: 1 } });
      expect(run.evaluator.output).not.toContain('PLANTED');
      expect(pidsWith(`sleep ${marker}`)).toEqual([]);
      const victimAfter = await app.api(`/api/sessions/${victim.id}`);
      expect(victimAfter).toMatchObject({ status: 'active', completionCount: 0 });
    }, 180_000);

    if (runtime !== 'local') it('a symlink the agent plants at the hidden tests earns no reward', async () => {
      // The agent links its answer to where the tests used to be mounted, and tries every link out of /work.
      const plant = 'ln -s /run/rollgate/tests/expected.txt answer.txt; ln -s /etc/hostname host.txt; mkdir d; ln -s ../.. d/up; echo \'print("PLANTED")\' > json.py; echo planted;'
        + ' echo "cpu quota $(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us 2>/dev/null || cut -d" " -f1 /sys/fs/cgroup/cpu.max)";'
        + ' for f in /etc/shadow /etc/ssh /etc/ssl/private; do ls -d $f >/dev/null 2>&1 && echo "host secret $f" || echo "no $f"; done';
      const { id } = await app.api('/api/batches', {
        method: 'POST',
        body: JSON.stringify({
          runtime, harness: 'command', engine: 'sim-vllm', timeoutMs: 30_000, command: plant,
          tasks: [{
            id: 'link', prompt: 'p', tests: { 'expected.txt': 'secret\n' },
            check: 'ls -A . d >&2; if command -v python3 >/dev/null; then python3 -c "import json" >&2; fi; if [ "$(cat answer.txt 2>/dev/null)" = "$(cat "$ROLLGATE_TESTS_DIR/expected.txt")" ]; then echo 1; else echo 0; fi',
          }],
        }),
      });
      const sample = (await poll(id)).tasks[0].samples[0];
      const run = await app.api(`/api/sessions/${sample.sessionId}/run`);
      expect(run.stdout).toContain('planted');
      // bwrap binds only the /etc files tools need (docker has its image's own /etc)
      if (runtime === 'bwrap') expect(run.stdout).not.toContain('host secret');
      if (runtime === 'bwrap') expect(run.stdout).toContain('no /etc/shadow');
      // docker runs get a CPU quota even when the task names none
      if (runtime === 'docker') expect(run.stdout).toMatch(/^cpu quota [1-9]\d*$/m);
      expect(sample, JSON.stringify(run.evaluator)).toMatchObject({ status: 'finished', reward: 0 });
      expect(run.evaluator.output).not.toMatch(/answer\.txt|host\.txt|\bup\b/);
      expect(run.evaluator.output).toContain('json.py'); // planted, but python -c does not import it
      expect(run.evaluator.output).not.toContain('PLANTED');
    }, 120_000);

    // local runs can write next to their work folder: a tests/ folder planted there must not become the check's.
    if (runtime === 'local') it('the task\'s hidden tests are written afresh, over any tests/ folder the agent planted', async () => {
      const { id } = await app.api('/api/batches', {
        method: 'POST',
        body: JSON.stringify({
          runtime, harness: 'command', timeoutMs: 30_000, command: 'mkdir -p ../tests && echo mine > ../tests/expected.txt && echo mine > answer.txt',
          tasks: [{ id: 'plant', prompt: 'p', tests: { 'expected.txt': 'secret\n' }, check: 'if [ "$(cat answer.txt)" = "$(cat "$ROLLGATE_TESTS_DIR/expected.txt")" ]; then echo 1; else echo 0; fi' }],
        }),
      });
      const sample = (await poll(id)).tasks[0].samples[0];
      expect(sample).toMatchObject({ status: 'finished', reward: 0 });
    }, 60_000);

    it('a timeout and a cancel leave nothing the agent started running', async () => {
      const marker = `${Math.floor(Math.random() * 1e6) + 1000}.${{ bwrap: 3, docker: 4, local: 5 }[runtime]}`;
      const daemon = `setsid sh -c 'sleep ${marker}' & sleep ${marker} & wait`;
      const { id: timeoutBatch } = await app.api('/api/batches', {
        method: 'POST',
        body: JSON.stringify({ runtime, harness: 'command', timeoutMs: 3000, command: daemon, tasks: [{ id: 'slow', prompt: 'p', expected: '1' }] }),
      });
      await until(() => pidsWith(`sleep ${marker}`).length >= 2);
      const view = await poll(timeoutBatch);
      expect(view.tasks[0].samples[0]).toMatchObject({ status: 'failed', outcome: 'timeout' });
      expect(pidsWith(`sleep ${marker}`)).toEqual([]);

      const { id: cancelBatch } = await app.api('/api/batches', {
        method: 'POST',
        body: JSON.stringify({ runtime, harness: 'command', concurrency: 2, command: daemon, tasks: [1, 2, 3].map((i) => ({ id: `c${i}`, prompt: 'p', expected: '1' })) }),
      });
      await until(() => pidsWith(`sleep ${marker}`).length >= 4);
      const { sessions } = await app.api(`/api/sessions?batch=${cancelBatch}`);
      const ids = sessions.map((s: any) => s.id);
      if (runtime === 'docker') expect(await containersOf(ids)).toHaveLength(2);
      else {
        const runs = await Promise.all(ids.map((s: string) => app.api(`/api/sessions/${s}/run`)));
        expect(runs.every((r: any) => typeof r.pid === 'number')).toBe(true);
      }
      const cancelled = await app.api(`/api/batches/${cancelBatch}/cancel`, { method: 'POST', body: '{}' });
      expect(cancelled.status).toBe('cancelled');
      await until(() => pidsWith(`sleep ${marker}`).length === 0, 10_000);
      if (runtime === 'docker') expect(await containersOf(ids)).toEqual([]);
    }, 120_000);

    if (runtime === 'docker') {
      it('the containers of a killed Rollgate are removed at its next start', async () => {
        const dataDir = mkdtempSync(join(tmpdir(), 'rollgate-kill9-docker-'));
        const server = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'src-main/cli.ts'), 'serve', '--port', '0', '--data-dir', dataDir], {
          cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: process.env,
        });
        try {
          const base = await new Promise<string>((resolve, reject) => {
            let out = '';
            server.stdout!.on('data', (d) => { out += d; const m = /Rollgate listening on (http:\/\/\S+)/.exec(out); if (m) resolve(m[1]); });
            server.on('exit', (code) => reject(new Error(`serve exited ${code}`)));
          });
          const res = await fetch(`${base}/api/batches`, {
            method: 'POST', headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ runtime: 'docker', harness: 'command', command: 'sleep 300', tasks: [{ id: 'a', prompt: 'p', expected: '1' }, { id: 'b', prompt: 'p', expected: '1' }] }),
          });
          const { id } = await res.json() as { id: string };
          let ids: string[] = [];
          await until(async () => {
            ids = ((await (await fetch(`${base}/api/sessions?batch=${id}`)).json()) as { sessions: Array<{ id: string }> }).sessions.map((s) => s.id);
            return ids.length === 2 && (await containersOf(ids)).length === 2;
          }, 60_000);
          server.kill('SIGKILL');
          await new Promise((r) => server.once('exit', r));
          expect(await containersOf(ids)).toHaveLength(2); // nothing ties them to the dead server
          const again = await createApp({ dataDir, port: 0, sim: false });
          try {
            expect(await again.rollouts.recoveredContainers).toBe(2);
            expect(await containersOf(ids)).toEqual([]);
          } finally {
            await again.close();
          }
        } finally {
          if (server.exitCode === null) server.kill('SIGKILL');
          rmSync(dataDir, { recursive: true, force: true });
        }
      }, 120_000);
    }
  });
}
