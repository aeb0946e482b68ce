// Security (DESIGN §9, issue 8): binding and the control token, session keys, isolation between sessions,
// and request limits (body size, concurrent calls per session).
import { sqliteDatabaseOf } from '../../src-main/store/index.js';
import { request as httpRequest } from 'node:http';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src-main/app.js';
import { startSimEngine, type SimEngine } from '../../src-main/engines/sim/index.js';
import { hashKey } from '../../src-main/store/sessions.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { AGENT_DIALECTS, dialectCall, expectErrorBody, MODEL, streamUntilOutput, waitFor, type AgentDialect } from './fault-helpers.js';

const json = async (res: Response) => ({ status: res.status, body: await res.json().catch(() => null), headers: res.headers });

describe('binding and the control token', () => {
  const dirs: string[] = [];
  const apps: App[] = [];
  const dir = () => { const d = mkdtempSync(join(tmpdir(), 'rollgate-sec-')); dirs.push(d); return d; };
  afterAll(async () => {
    for (const a of apps) await a.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('refuses to bind a non-loopback address without a control token', async () => {
    for (const host of ['0.0.0.0', '::', '192.168.1.10', '127.0.0.2']) {
      await expect(createApp({ host, port: 0, dataDir: dir(), sim: false })).rejects.toThrow(/refusing to bind .* without a control token/);
    }
  });

  it('binds loopback without a token', async () => {
    const app = await createApp({ host: '127.0.0.1', port: 0, dataDir: dir(), sim: false });
    apps.push(app);
    expect((await json(await fetch(`${app.url}/api/health`))).status).toBe(200);
  });

  it('on loopback, answers only requests addressed to a loopback name (no DNS rebinding)', async () => {
    const app = await createApp({ host: '127.0.0.1', port: 0, dataDir: dir(), sim: false });
    apps.push(app);
    const port = Number(new URL(app.url).port);
    // fetch() will not send a foreign Host header; a browser tricked by DNS rebinding would.
    const get = (host: string, path: string, method = 'GET') => new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path, method, headers: { host, 'content-type': 'application/json' } }, (res) => {
        let body = '';
        res.on('data', (d) => { body += d; });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end(method === 'POST' ? '{}' : undefined);
    });
    for (const host of ['127.0.0.1', `127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, 'app.localhost']) {
      expect((await get(host, '/api/health')).status, host).toBe(200);
    }
    for (const host of [`evil.example:${port}`, 'rebind.attacker.test', '192.168.1.10', 'localhost.evil.example']) {
      const r = await get(host, '/api/batches', 'POST');
      expect(r.status, host).toBe(403);
      expect(JSON.parse(r.body).error.message).toMatch(/answers only requests addressed to localhost/);
    }
    // Agent routes answer in the agent's dialect.
    const anthropic = await get('evil.example', `/s/${'0'.repeat(32)}/v1/messages`, 'POST');
    expect(anthropic.status).toBe(403);
    expect(JSON.parse(anthropic.body)).toMatchObject({ type: 'error', error: { type: 'permission_error' } });
  });

  it('on loopback, refuses state-changing control calls from pages of other sites (CSRF), and allows named hosts', async () => {
    const app = await createApp({ host: '127.0.0.1', port: 0, dataDir: dir(), sim: false, allowedHosts: ['devbox.internal'] });
    apps.push(app);
    const port = Number(new URL(app.url).port);
    const send = (path: string, method: string, headers: Record<string, string>) => new Promise<number>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path, method, headers: { 'content-type': 'text/plain', ...headers } }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode ?? 0)); });
      req.on('error', reject);
      req.end(method === 'GET' ? undefined : '{}');
    });
    // What a page on another site can send without a preflight: a text/plain POST.
    expect(await send('/api/engines/pause', 'POST', { origin: 'https://evil.example' })).toBe(403);
    expect(await send('/api/engines/pause', 'POST', { 'sec-fetch-site': 'cross-site' })).toBe(403);
    expect(await send('/api/sessions', 'POST', { origin: 'null' })).toBe(403);
    // The trainer-side rollout-gateway routes are control API too (the agent-side chat route is not).
    expect(await send('/v1/rollouts/r1/register', 'POST', { origin: 'https://evil.example', 'content-type': 'application/json' })).toBe(403);
    expect(await send('/v1/rollouts/r1/cancel', 'POST', { 'sec-fetch-site': 'cross-site' })).toBe(403);
    expect((await json(await fetch(`${app.url}/api/engines`))).body.pause.mode).toBeNull();
    // Another port on loopback is another site (issue 18.4): the full origin counts, port included.
    expect(await send('/api/engines/pause', 'POST', { origin: 'http://localhost:3000', 'content-type': 'application/json' })).toBe(403);
    expect(await send('/api/engines/pause', 'POST', { origin: `http://localhost:${port + 1}`, 'content-type': 'application/json' })).toBe(403);
    expect(await send('/api/engines/pause', 'POST', { origin: `http://127.0.0.1:${port}`, 'sec-fetch-site': 'same-site', 'content-type': 'application/json' })).toBe(403);
    // State-changing calls must send JSON: a form or text/plain POST (no preflight) is refused even without Origin.
    expect(await send('/api/engines/pause', 'POST', {})).toBe(415);
    expect(await send('/api/engines/pause', 'POST', { 'content-type': 'application/x-www-form-urlencoded' })).toBe(415);
    expect((await json(await fetch(`${app.url}/api/engines`))).body.pause.mode).toBeNull();
    // The workbench itself (same origin, also through the Vite dev proxy, which keeps Host), and tools without Origin are fine.
    expect(await send('/api/engines/resume', 'POST', { origin: `http://127.0.0.1:${port}`, 'sec-fetch-site': 'same-origin', 'content-type': 'application/json' })).toBe(200);
    expect(await send('/api/engines/resume', 'POST', { origin: 'http://localhost:5173', host: 'localhost:5173', 'content-type': 'application/json' })).toBe(200);
    expect(await send('/api/engines/resume', 'POST', { 'content-type': 'application/json' })).toBe(200);
    // Reading stays open to GETs (a cross-origin page cannot read the answer without CORS).
    expect(await send('/api/health', 'GET', { origin: 'https://evil.example' })).toBe(200);
    // A host name the operator allowed (a port forwarder) is answered.
    expect(await send('/api/health', 'GET', { host: `devbox.internal:${port}` })).toBe(200);
    expect(await send('/api/health', 'GET', { host: `other.internal:${port}` })).toBe(403);
  });

  describe('with a control token (bound to 127.0.0.2, which Rollgate treats as non-loopback)', () => {
    const token = 'ctl-' + 'x'.repeat(20) + Math.random().toString(36).slice(2);
    let app: App;
    let sim: SimEngine;
    beforeAll(async () => {
      sim = await startSimEngine({ flavor: 'vllm', ttftMs: 0, perTokenMs: 0, maxModelLen: 131072 });
      app = await createApp({ host: '127.0.0.2', port: 0, dataDir: dir(), sim: false, controlToken: token, healthIntervalMs: 60_000,
        engines: [{ id: 'e', kind: 'vllm', replicas: [sim.url], model: MODEL, mode: 'chat', tokenizer: 'builtin:qwen3' }] });
      apps.push(app);
    });
    afterAll(async () => { await sim?.close(); });
    const ctl = (path: string, init: RequestInit = {}, auth?: string) =>
      fetch(`${app.url}${path}`, { ...init, headers: { 'content-type': 'application/json', ...(auth === undefined ? {} : { authorization: auth }), ...init.headers } });

    it('the control API requires Authorization: Bearer <token>', async () => {
      expect(app.url).toMatch(/^http:\/\/127\.0\.0\.2:/);
      const sessionsBefore = (await app.store.sessions.list()).length;
      for (const auth of [undefined, '', 'Bearer', `Bearer ${token}x`, `Bearer ${token.slice(0, -1)}`, token, `Basic ${token}`, `bearer  ${token}`]) {
        const r = await json(await ctl('/api/sessions', { method: 'POST', body: '{}' }, auth));
        expect(r.status, `authorization ${JSON.stringify(auth)}`).toBe(401);
        expect(r.body.error.type).toBe('authentication_error');
      }
      for (const path of ['/api/health', '/api/sessions', '/api/engines', '/api/export', '/api/events']) {
        expect((await ctl(path)).status, path).toBe(401);
      }
      // Nothing was created by the refused calls.
      expect((await app.store.sessions.list()).length).toBe(sessionsBefore);
      const ok = await json(await ctl('/api/sessions', { method: 'POST', body: '{}' }, `Bearer ${token}`));
      expect(ok.status).toBe(201);
      expect((await ctl('/api/health', {}, `Bearer ${token}`)).status).toBe(200);
    });

    it('the browser UI gets the token once as an HttpOnly cookie, which the control API then accepts', async () => {
      const wrong = await fetch(`${app.url}/?token=nope`, { redirect: 'manual' });
      expect(wrong.status).toBe(401);
      expect(wrong.headers.get('set-cookie')).toBeNull();
      const right = await fetch(`${app.url}/?token=${encodeURIComponent(token)}`, { redirect: 'manual' });
      expect(right.status).toBe(302);
      const cookie = right.headers.get('set-cookie') ?? '';
      expect(cookie).toMatch(/HttpOnly/);
      expect(cookie).toMatch(/SameSite=Strict/);
      const pair = cookie.split(';')[0]!;
      expect((await fetch(`${app.url}/api/health`, { headers: { cookie: pair } })).status).toBe(200);
      expect((await fetch(`${app.url}/api/health`, { headers: { cookie: 'rollgate_control=guess' } })).status).toBe(401);
    });

    it('an encoded or odd path does not get round the token', async () => {
      for (const path of ['/%61pi/sessions', '/api%2Fsessions', '//api/sessions', '/api/./sessions', '/api/../api/sessions', '/API/sessions', '/api/sessions/', '/api/sessions?x=/s/']) {
        const res = await ctl(path);
        const text = await res.text();
        // Refused (401/403/404), or the UI's own index.html (single-page-app fallback) — never control API data.
        expect([200, 401, 403, 404], `${path} → ${res.status}`).toContain(res.status);
        if (res.status === 200) expect(res.headers.get('content-type'), `${path}: ${text.slice(0, 200)}`).toMatch(/^text\/html/);
        expect(text).not.toMatch(/"sessions"\s*:\s*\[/);
      }
    });

    it('rollout gateway: register, trajectory, cancel and unregister need the token; the agent\'s chat route does not', async () => {
      const id = 'rollout_sec01';
      const register = (auth?: string) => ctl(`/v1/rollouts/${id}/register`, { method: 'POST', body: JSON.stringify({ model: MODEL }) }, auth);
      expect((await json(await register())).status).toBe(401);
      expect((await json(await register(`Bearer ${id}`))).status).toBe(401);
      expect((await json(await register(`Bearer ${token}`))).status).toBe(200);
      const chat = await fetch(`${app.url}/v1/rollouts/${id}/chat/completions`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 }),
      });
      expect(chat.status).toBe(200);
      for (const [suffix, method] of [['trajectory', 'GET'], ['cancel', 'POST'], ['unregister', 'POST']] as const) {
        expect((await fetch(`${app.url}/v1/rollouts/${id}/${suffix}`, { method })).status, suffix).toBe(401);
      }
      const traj = await json(await ctl(`/v1/rollouts/${id}/trajectory`, {}, `Bearer ${token}`));
      expect(traj.body).toMatchObject({ rollout_id: id, status: 'active', num_turns: 1 });
      expect((await ctl(`/v1/rollouts/${id}/unregister`, { method: 'POST', body: '{}' }, `Bearer ${token}`)).status).toBe(200);
    });

    it('a session key is not a control token, and agent routes still take session keys', async () => {
      const s = (await json(await ctl('/api/sessions', { method: 'POST', body: '{}' }, `Bearer ${token}`))).body as { id: string; key: string };
      expect((await ctl(`/api/sessions/${s.id}`, {}, `Bearer ${s.key}`)).status).toBe(401);
      // In the path…
      const c = dialectCall('openai-chat', app.url, s.key, { stream: false, maxTokens: 4, text: 'hi' });
      expect((await fetch(c.url, c.init)).status).toBe(200);
      // …and as the API key on the bare origin, with no control token.
      const bare = await fetch(`${app.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${s.key}` }, body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 }) });
      expect(bare.status).toBe(200);
      // The control token is not a session key.
      const wrong = await fetch(`${app.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': token }, body: JSON.stringify({ model: MODEL, max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] }) });
      expectErrorBody('anthropic', 401, await json(wrong));
    });
  });
});

describe('session keys', () => {
  let app: TestApp;
  beforeAll(async () => { app = await startTestApp({ sim: false }); });
  afterAll(async () => { await app?.stop(); });

  it('are 128-bit random (32 hex digits), all different, handed out once', async () => {
    const keys: string[] = [];
    for (let i = 0; i < 200; i++) keys.push((await app.createSession()).key);
    for (const k of keys) expect(k).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set(keys).size).toBe(keys.length);
    // Every bit position varies across keys (a counter or a timestamp would not).
    const bits = new Array(128).fill(0);
    for (const k of keys) for (let b = 0; b < 128; b++) bits[b] += (parseInt(k[b >> 2]!, 16) >> (3 - (b & 3))) & 1;
    for (const n of bits) expect(n).toBeGreaterThan(50), expect(n).toBeLessThan(150);
    // The key is never shown again by the control API.
    const s = await app.createSession();
    const text = JSON.stringify([await app.api(`/api/sessions/${s.id}`), await app.api('/api/sessions')]);
    expect(text).not.toContain(s.key);
  });

  it('are looked up by hash and compared in constant time', async () => {
    const s = await app.createSession();
    const require = createRequire(import.meta.url);
    const crypto = require('node:crypto') as typeof import('node:crypto');
    const original = crypto.timingSafeEqual;
    const calls: Array<[number, number]> = [];
    crypto.timingSafeEqual = ((a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => { calls.push([a.byteLength, b.byteLength]); return original(a, b); }) as typeof original;
    syncBuiltinESMExports();
    try {
      expect((await app.store.sessions.getByKey(s.key))?.id).toBe(s.id);
      expect(calls).toEqual([[32, 32]]);
      // Near misses find nothing (the indexed lookup is on sha256(key), so no prefix of the key leaks).
      const flipped = s.key.slice(0, -1) + (s.key.endsWith('0') ? '1' : '0');
      expect((await app.store.sessions.getByKey(flipped))).toBeNull();
      expect((await app.store.sessions.getByKey(s.key.slice(0, 31)))).toBeNull();
      expect((await app.store.sessions.getByKey(s.key.toUpperCase()))).toBeNull();
      const row = sqliteDatabaseOf(app.store).db.prepare('SELECT key_hash FROM sessions WHERE id = ?').get(s.id) as { key_hash: Buffer };
      expect(Buffer.compare(row.key_hash, hashKey(s.key))).toBe(0);
    } finally {
      crypto.timingSafeEqual = original;
      syncBuiltinESMExports();
    }
  });
});

describe('isolation between sessions', () => {
  let app: TestApp;
  beforeAll(async () => { app = await startTestApp({ sim: true, simSkill: 1 }); });
  afterAll(async () => { await app?.stop(); });

  const records = async (id: string) => { await app.store.writer.flush(); return (await app.store.completions.listBySession(id)); };

  it("a call with session A's key is recorded under A only, whatever other keys ride along", async () => {
    const a = await app.createSession();
    const b = await app.createSession();
    // B's key as the Bearer / x-api-key header of a call to A's URL: the path decides.
    const c = dialectCall('openai-chat', app.url, a.key, { stream: false, maxTokens: 4, text: 'hi', headers: { authorization: `Bearer ${b.key}`, 'x-api-key': b.key, 'x-goog-api-key': b.key } });
    expect((await fetch(c.url, c.init)).status).toBe(200);
    expect((await records(a.id)).length).toBe(1);
    expect((await records(b.id)).length).toBe(0);
  });

  it("an SDK retry is matched only against the caller's own session", async () => {
    const a = await app.createSession();
    const b = await app.createSession();
    const body = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'identical body' }], max_tokens: 4 });
    const send = (key: string, retry: number) => fetch(`${app.url}/s/${key}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-stainless-retry-count': String(retry) }, body });
    expect((await send(b.key, 0)).status).toBe(200);
    expect((await send(a.key, 1)).status).toBe(200);
    const [ra] = await records(a.id);
    expect(ra!.retryOf).toBeNull();
  });

  it('agent routes read nothing: no control API, no records, no other session behind a session URL', async () => {
    const a = await app.createSession();
    const b = await app.createSession();
    const c = dialectCall('openai-chat', app.url, b.key, { stream: false, maxTokens: 4, text: 'hi' });
    await fetch(c.url, c.init);
    const [rec] = await records(b.id);
    const secretOfB = JSON.stringify(rec!.response?.message.content ?? 'none').slice(1, -1);
    for (const path of [`/s/${a.key}/api/sessions/${b.id}/completions`, `/s/${a.key}/api/sessions`, `/s/${a.key}/v1/responses/${rec!.id}`, `/s/${a.key}/v1/chat/completions/${rec!.id}`, `/s/${a.key}/v1/messages/${rec!.id}`]) {
      const res = await fetch(`${app.url}${path}`);
      const body = await res.json();
      expect([404, 405], `${path} → ${res.status}`).toContain(res.status);
      // an error body in the dialect of the path (Anthropic's carries `type: "error"` beside it), nothing else
      expect(Object.keys(body).filter((k) => k !== 'type')).toEqual(['error']);
      expect(JSON.stringify(body)).not.toContain(secretOfB);
    }
  });

  it('unknown, malformed and finished keys are refused in each dialect, and nothing is recorded', async () => {
    const s = await app.createSession();
    const before = sqliteDatabaseOf(app.store).db.prepare('SELECT COUNT(*) AS n FROM completions').get() as { n: number };
    for (const d of AGENT_DIALECTS) {
      for (const key of ['0'.repeat(32), s.key.slice(0, 31), s.key.toUpperCase(), `${s.key}'--`, '%2e%2e']) {
        const c = dialectCall(d, app.url, key, { stream: false, maxTokens: 4, text: 'hi' });
        expectErrorBody(d, 401, await json(await fetch(c.url, c.init)));
      }
    }
    await app.api(`/api/sessions/${s.id}/finish`, { method: 'POST', body: '{}' });
    for (const d of AGENT_DIALECTS) {
      const c = dialectCall(d, app.url, s.key, { stream: false, maxTokens: 4, text: 'hi' });
      expectErrorBody(d, 409, await json(await fetch(c.url, c.init)));
    }
    const after = sqliteDatabaseOf(app.store).db.prepare('SELECT COUNT(*) AS n FROM completions').get() as { n: number };
    expect(after.n).toBe(before.n);
  });
});

describe('request limits', () => {
  let sim: SimEngine;
  let app: TestApp;
  beforeAll(async () => {
    // Slow tokens: the sim's answers are a few dozen tokens, and the open streams must outlive the checks.
    sim = await startSimEngine({ flavor: 'vllm', seed: 5, skill: 1, ttftMs: 10, perTokenMs: 150, maxModelLen: 131072 });
    app = await startTestApp({ sim: false, bodyLimitBytes: 64 * 1024, maxConcurrentPerSession: 2, healthIntervalMs: 60_000,
      engines: [{ id: 'slow', kind: 'vllm', replicas: [sim.url], model: MODEL, mode: 'chat', tokenizer: 'builtin:qwen3' }] });
  });
  afterAll(async () => {
    await app?.stop();
    await sim?.close();
  });
  const open: Array<{ cancel(): Promise<void> }> = [];
  afterEach(async () => { for (const s of open.splice(0)) await s.cancel(); await waitFor('idle engine', () => sim.stats().running === 0, 5000); });

  it('a body over the limit gets a dialect-shaped 413 and is not recorded', async () => {
    const s = await app.createSession({ engine: 'slow' });
    for (const d of AGENT_DIALECTS) {
      const c = dialectCall(d, app.url, s.key, { stream: false, text: 'x'.repeat(70 * 1024) });
      const r = await json(await fetch(c.url, c.init));
      expectErrorBody(d, 413, r);
    }
    await app.store.writer.flush();
    expect((await app.store.completions.countBySession(s.id))).toBe(0);
    expect(sim.stats().generations).toBe(0);
  });

  for (const d of AGENT_DIALECTS) {
    it(`${d}: a session's calls beyond maxConcurrentPerSession get a ${d} 429 with Retry-After; other sessions are not limited`, async () => {
      const s = await app.createSession({ engine: 'slow' });
      const other = await app.createSession({ engine: 'slow' });
      // Both at once: Gemini streams hide the thinking, so the first visible text comes seconds in.
      open.push(...await Promise.all([0, 1].map(() => streamUntilOutput(d, dialectCall(d, app.url, s.key, { stream: true, maxTokens: 2000 })))));
      for (const stream of [false, true]) {
        const c = dialectCall(d, app.url, s.key, { stream, maxTokens: 2 });
        const r = await json(await fetch(c.url, c.init));
        expectErrorBody(d, 429, r);
        expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
      }
      open.push(await streamUntilOutput(d, dialectCall(d, app.url, other.key, { stream: true, maxTokens: 2000 })));
      // Once one call ends, the session may call again.
      await open.shift()!.cancel();
      await waitFor('a free slot', async () => {
        const c = dialectCall(d as AgentDialect, app.url, s.key, { stream: false, maxTokens: 2 });
        return (await fetch(c.url, c.init)).status === 200;
      }, 5000, 50);
      for (const o of open.splice(0)) await o.cancel();
      // The refused calls were never sent to the engine nor recorded: the two streams and the call that got through.
      const recs = await waitFor('three records', async () => {
        await app.store.writer.flush();
        const r = (await app.store.completions.listBySession(s.id));
        return r.length >= 3 ? r : null;
      });
      expect(recs).toHaveLength(3);
      for (const r of recs) expect(['ok', 'aborted']).toContain(r.status);
    });
  }
});
