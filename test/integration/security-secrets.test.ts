// API keys and auth headers are never stored or logged (DESIGN §9, issue 8). A real `rollgate serve` runs
// as a child process; agents call it in every dialect (streaming and not, ok and failing calls) with known
// secrets in Authorization / x-api-key / x-goog-api-key (and other credential headers), and with a known
// marker inside the body's metadata. Afterwards the SQLite files and the server's stdout/stderr are searched
// byte for byte: the header secrets appear nowhere; the body marker is in the database (the request is
// stored as received, which proves the search looks at the right bytes) but not in the logs.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_DIALECTS, dialectCall, MODEL, startCli, type AgentDialect, type Child } from './fault-helpers.js';

const rand = () => Math.random().toString(36).slice(2, 12);
const SECRETS = {
  authorization: `sk-proj-authz${rand()}${rand()}`,
  xApiKey: `sk-ant-api03-xkey${rand()}${rand()}`,
  googKey: `AIzaGoog${rand()}${rand()}`,
  cookie: `sessionid=cookie${rand()}`,
  proxyAuth: `proxyauth${rand()}${rand()}`,
  orgKey: `org-${rand()}${rand()}`,
};
const BODY_MARKER = `body-metadata-marker-${rand()}`;

const secretHeaders = (): Record<string, string> => ({
  authorization: `Bearer ${SECRETS.authorization}`,
  'x-api-key': SECRETS.xApiKey,
  'x-goog-api-key': SECRETS.googKey,
  cookie: SECRETS.cookie,
  'proxy-authorization': `Basic ${SECRETS.proxyAuth}`,
  'openai-organization': SECRETS.orgKey,
});

/** Where each dialect's request body carries metadata. */
function metadataExtra(d: AgentDialect): Record<string, unknown> {
  switch (d) {
    case 'openai-chat': return { user: BODY_MARKER, metadata: { note: BODY_MARKER } };
    case 'responses': return { metadata: { note: BODY_MARKER } };
    case 'anthropic': return { metadata: { user_id: BODY_MARKER } };
    case 'gemini': return { labels: { note: BODY_MARKER } };
  }
}

const dataDir = mkdtempSync(join(tmpdir(), 'rollgate-secrets-'));
let server: Child;
let events = '';
const eventsAbort = new AbortController();
beforeAll(async () => {
  server = await startCli(['serve', '--port', '0', '--data-dir', dataDir], { env: { DEBUG: '*', NODE_DEBUG: '' } });
  // The live event stream the UI reads must not carry secrets either.
  void fetch(`${server.url}/api/events`, { signal: eventsAbort.signal }).then(async (res) => {
    const reader = res.body!.getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      events += Buffer.from(value).toString();
    }
  }).catch(() => undefined);
}, 90_000);
afterAll(async () => {
  eventsAbort.abort();
  await server?.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

async function session(engine: string): Promise<{ id: string; key: string }> {
  const res = await fetch(`${server.url}/api/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ engine, metadata: { label: 'secrets-test' } }) });
  return res.json() as Promise<{ id: string; key: string }>;
}

describe('secrets in agent requests', () => {
  it('are neither stored nor logged, whatever the dialect or outcome', async () => {
    let ok = 0;
    const sessionKeys: string[] = [];
    for (const engine of ['sim-vllm', 'sim-sglang']) {
      const s = await session(engine);
      sessionKeys.push(s.key);
      for (const d of AGENT_DIALECTS) {
        for (const stream of [false, true]) {
          // A normal call: the session key in the path, the agent's upstream credentials alongside.
          const c = dialectCall(d, server.url, s.key, { stream, maxTokens: 12, text: 'Say hi.', headers: secretHeaders(), extra: metadataExtra(d) });
          const res = await fetch(c.url, c.init);
          await res.text();
          if (res.status === 200) ok++;
        }
      }
      // count_tokens and models with the same headers.
      await (await fetch(`${server.url}/s/${s.key}/v1/messages/count_tokens`, { method: 'POST', headers: { 'content-type': 'application/json', ...secretHeaders() }, body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }) })).text();
      await (await fetch(`${server.url}/s/${s.key}/v1/models`, { headers: secretHeaders() })).text();
    }
    expect(ok).toBe(16);

    // Failing calls: unknown key, a header secret used as the key on the bare origin, bad JSON, a body that
    // is too large for nothing else, an invalid request, an unknown route, the control API.
    const s = await session('sim-vllm');
    const failing: Array<[string, RequestInit]> = [
      [`${server.url}/s/${'0'.repeat(32)}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...secretHeaders() }, body: '{}' }],
      [`${server.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...secretHeaders() }, body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }) }],
      [`${server.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': SECRETS.xApiKey }, body: JSON.stringify({ model: MODEL, max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] }) }],
      [`${server.url}/v1beta/models/qwen3:generateContent`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': SECRETS.googKey }, body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }) }],
      [`${server.url}/v1beta/models/qwen3:generateContent?key=${SECRETS.googKey}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }) }],
      [`${server.url}/s/${s.key}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...secretHeaders() }, body: '{"messages": [' }],
      [`${server.url}/s/${s.key}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...secretHeaders() }, body: JSON.stringify({ model: MODEL, messages: 'not a list' }) }],
      [`${server.url}/s/${s.key}/v1/nope`, { method: 'POST', headers: secretHeaders() }],
      [`${server.url}/api/sessions/nope`, { headers: secretHeaders() }],
    ];
    for (const [url, init] of failing) {
      const res = await fetch(url, init);
      const text = await res.text();
      expect(res.status, url).toBeGreaterThanOrEqual(400);
      expect(res.status, url).toBeLessThan(500);
      // Error answers do not echo credentials back either.
      for (const secret of Object.values(SECRETS)) expect(text, url).not.toContain(secret);
    }

    // The records hold the requests as received: no header in them.
    const list = await (await fetch(`${server.url}/api/sessions`)).json() as { sessions: Array<{ id: string }> };
    for (const { id } of list.sessions) {
      const { completions } = await (await fetch(`${server.url}/api/sessions/${id}/completions`)).json() as { completions: Array<{ requestReceived: unknown; requestServed: unknown }> };
      for (const c of completions) {
        const rr = JSON.stringify(c.requestReceived).toLowerCase();
        for (const h of ['authorization', 'x-api-key', 'x-goog-api-key', 'cookie', 'headers']) expect(rr).not.toContain(`"${h}"`);
      }
    }

    // Stop the server (SIGTERM: the store checkpoints), then search every byte it left behind.
    await server.kill('SIGTERM');
    const files = readdirSync(dataDir, { recursive: true, withFileTypes: true }).filter((f) => f.isFile()).map((f) => join(f.parentPath, f.name));
    expect(files.some((f) => f.endsWith('rollgate.sqlite'))).toBe(true);
    const disk = Buffer.concat(files.map((f) => readFileSync(f)));
    const logs = server.output() + events;
    expect(logs).toContain('Rollgate listening on');
    expect(events).toContain('event: completion');
    for (const [name, secret] of Object.entries(SECRETS)) {
      expect(disk.indexOf(secret), `${name} found in the data folder`).toBe(-1);
      expect(disk.indexOf(Buffer.from(secret, 'utf16le')), `${name} found (UTF-16) in the data folder`).toBe(-1);
      expect(logs, `${name} found in the server's output`).not.toContain(secret);
    }
    // The session keys are the agents' API keys too: the store keeps only their hashes.
    for (const key of sessionKeys) {
      expect(key).toMatch(/^[0-9a-f]{32}$/);
      expect(disk.indexOf(key), 'a session key found in the data folder').toBe(-1);
      expect(logs, 'a session key found in the server\'s output').not.toContain(key);
    }
    // Positive control: the body marker is stored with the request as received (so the search sees
    // the records), and never logged.
    expect(disk.indexOf(BODY_MARKER)).toBeGreaterThanOrEqual(0);
    expect(logs).not.toContain(BODY_MARKER);
  }, 120_000);
});
