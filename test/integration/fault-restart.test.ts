// kill -9 of Rollgate under load, then a restart on the same data folder (DESIGN §9: a killed Rollgate loses
// no completion that an agent already received). `rollgate serve` runs as a child process with its embedded
// sim engines; agents hammer it with streaming and non-streaming calls and note every completion they
// received in full; SIGKILL lands mid-load; after the restart every one of them must be in the store.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dialectCall, parseSse, startCli, type Child } from './fault-helpers.js';

const dataDir = mkdtempSync(join(tmpdir(), 'rollgate-kill9-'));
let server: Child | null = null;
afterAll(async () => {
  await server?.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

/** The record id of a fully received completion (OpenAI chat: `chatcmpl-<record id>`), else null. */
async function oneCall(baseUrl: string, key: string, stream: boolean, signal: AbortSignal): Promise<string | null> {
  const c = dialectCall('openai-chat', baseUrl, key, { stream, maxTokens: 24, text: 'Say hello.' });
  const res = await fetch(c.url, { ...c.init, signal });
  const text = await res.text();
  if (res.status !== 200) return null;
  if (!stream) {
    const body = JSON.parse(text);
    return body.choices?.[0]?.finish_reason ? String(body.id).replace(/^chatcmpl-/, '') : null;
  }
  const events = parseSse(text);
  // Received in full: a finish_reason and the terminator (both are sent only after the record is committed).
  if (events.at(-1)?.data !== '[DONE]') return null;
  const done = events.map((e) => { try { return JSON.parse(e.data); } catch { return null; } }).find((j) => j?.choices?.[0]?.finish_reason);
  return done ? String(done.id).replace(/^chatcmpl-/, '') : null;
}

describe('kill -9 of Rollgate under load, then a restart', () => {
  it('every completion an agent received is in the store after the restart', async () => {
    server = await startCli(['serve', '--port', '0', '--data-dir', dataDir]);
    const base = server.url;
    // The trainer's policy version survives the crash too.
    expect((await fetch(`${base}/api/policy-version`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"version": 9}' })).status).toBe(200);
    const sessions: Array<{ id: string; key: string }> = [];
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${base}/api/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ engine: i % 2 ? 'sim-sglang' : 'sim-vllm' }) });
      sessions.push(await res.json() as { id: string; key: string });
    }

    const received = new Map<string, string>(); // record id → session id
    let failures = 0;
    let killed = false;
    const stop = new AbortController();
    const agent = async (n: number) => {
      const s = sessions[n % sessions.length]!;
      for (let i = 0; !killed && i < 10_000; i++) {
        try {
          const id = await oneCall(base, s.key, (n + i) % 2 === 0, stop.signal);
          if (id) received.set(id, s.id);
          else failures++;
        } catch {
          failures++; // the server went away mid-call
        }
      }
    };
    const agents = Array.from({ length: 12 }, (_, n) => agent(n));

    // Let the load run until a good number of completions were received, then kill -9 mid-load.
    const deadline = Date.now() + 20_000;
    while (received.size < 60 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const receivedBeforeKill = received.size;
    server.child.kill('SIGKILL');
    await server.exited;
    killed = true;
    stop.abort();
    await Promise.all(agents);
    expect(receivedBeforeKill).toBeGreaterThanOrEqual(20);
    const receivedIds = [...received.keys()];

    // Restart on the same data folder (a new port).
    server = await startCli(['serve', '--port', '0', '--data-dir', dataDir]);
    const stored = new Map<string, { status: string; sessionId: string }>();
    for (const s of sessions) {
      const res = await fetch(`${server.url}/api/sessions/${s.id}/completions`);
      expect(res.status).toBe(200);
      const { completions } = await res.json() as { completions: Array<{ id: string; status: string; sessionId: string }> };
      for (const c of completions) stored.set(c.id, c);
    }
    const missing = receivedIds.filter((id) => !stored.has(id));
    expect(missing, `${missing.length} of ${receivedIds.length} received completions are not in the store`).toEqual([]);
    for (const id of receivedIds) {
      expect(stored.get(id)!.status).toBe('ok');
      expect(stored.get(id)!.sessionId).toBe(received.get(id));
    }
    // Manual sessions that were active when the process died stay active: their agents carry on after the restart.
    const after = await (await fetch(`${server.url}/api/sessions/${sessions[0]!.id}`)).json() as { status: string };
    expect(after.status).toBe('active');
    expect(await oneCall(server.url, sessions[0]!.key, false, new AbortController().signal)).toBeTruthy();
    // And the restarted server works.
    const fresh = await (await fetch(`${server.url}/api/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).json() as { id: string; key: string };
    const freshId = await oneCall(server.url, fresh.key, true, new AbortController().signal);
    expect(freshId).toBeTruthy();
    expect(((await (await fetch(`${server.url}/api/engines`)).json()) as { policyVersion: number }).policyVersion).toBe(9);
    const { completions: freshRecs } = await (await fetch(`${server.url}/api/sessions/${fresh.id}/completions`)).json() as { completions: Array<{ policyVersion: number }> };
    expect(freshRecs.map((c) => c.policyVersion)).toEqual([9]);
    console.log(`kill -9: ${receivedIds.length} completions received before the kill, ${stored.size} stored, ${failures} calls cut by the kill`);
  }, 90_000);
});
